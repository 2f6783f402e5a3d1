/*
 * The ACPI lookup kvm-unit-tests does (spec §2.2): RSDP by signature at
 * 16-byte steps in 0xE0000-0xFFFFF; the XSDT if the RSDP is revision 2 or
 * later and its XSDT pointer leads to an "XSDT", else the RSDT; the first
 * entry with the wanted signature. Like kvm-unit-tests it verifies no
 * checksum: `compat` checks those itself.
 */
#include "rt.h"

#define RSDP_SCAN_START 0xe0000
#define RSDP_SCAN_END 0x100000
#define RSDP_REVISION 15
#define RSDP_RSDT 16
#define RSDP_XSDT 24
#define SDT_ENTRIES 36

u8 acpi_sum(const void *p, u32 len)
{
    const u8 *b = p;
    u8 s = 0;
    while (len--)
        s += *b++;
    return s;
}

const u8 *acpi_find_rsdp(void)
{
    for (u64 a = RSDP_SCAN_START; a < RSDP_SCAN_END; a += 16)
        if (!memcmp((const void *)(uintptr_t)a, "RSD PTR ", 8))
            return (const u8 *)(uintptr_t)a;
    return NULL;
}

static u32 rd32(const u8 *p) { return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24; }
static u64 rd64(const u8 *p) { return rd32(p) | (u64)rd32(p + 4) << 32; }

/* Tables must lie below 4 GiB: that is all the runtime maps. */
static const struct acpi_header *table_at(u64 addr, u32 sig)
{
    if (!addr || addr >= 0x100000000ULL)
        return NULL;
    const struct acpi_header *t = (const struct acpi_header *)(uintptr_t)addr;
    return t->signature == sig ? t : NULL;
}

const struct acpi_header *acpi_find_table(u32 sig)
{
    const u8 *rsdp = acpi_find_rsdp();
    if (!rsdp)
        return NULL;

    const struct acpi_header *xsdt = NULL;
    if (rsdp[RSDP_REVISION] >= 2)
        xsdt = table_at(rd64(rsdp + RSDP_XSDT), ACPI_SIG('X', 'S', 'D', 'T'));
    const struct acpi_header *sdt = xsdt ? xsdt : table_at(rd32(rsdp + RSDP_RSDT), ACPI_SIG('R', 'S', 'D', 'T'));
    if (!sdt)
        return NULL;

    unsigned width = xsdt ? 8 : 4;
    const u8 *e = (const u8 *)sdt + SDT_ENTRIES;
    const u8 *end = (const u8 *)sdt + sdt->length;
    for (; e + width <= end; e += width) {
        const struct acpi_header *t = table_at(width == 8 ? rd64(e) : rd32(e), sig);
        if (t)
            return t;
    }
    return NULL;
}
