/*
 * ACPI S3 suspend and resume, as kvm-unit-tests' s3 test does it: find the
 * FADT and the FACS, copy a 16-bit waking routine below 1 MiB and put its
 * address in the FACS firmware waking vector, enable the RTC as a wake
 * event (RTC_EN in PM1a_EN), arm the RTC alarm for the next second (all
 * alarm registers "don't care", AIE), and write SLP_TYP (from the DSDT's
 * _S3) | SLP_EN to PM1a_CNT.
 *
 * On wake the routine runs in real mode with CS = vector >> 4 and DS = 0:
 * it adds the word the payload left at GPA 0 (0x20) to one stored in its
 * own copy (0x0a, CS-relative) and writes the sum to isa-debug-exit:
 * exit value 0x2a (status 85) proves real mode, DS = 0, CS from the
 * vector and that RAM was kept. Any failure before suspending exits 1;
 * still running after the S3 request exits 2. With `rtc-wake=0` RTC_EN
 * stays clear, so nothing the payload arms wakes the machine. With
 * `x2apic=1` the BSP switches its APIC to x2APIC mode first, as
 * kvm-unit-tests' start-up code does where CPUID allows it: the waking
 * vector must still be reached (firmware hands over in xAPIC mode).
 */
#include "rt.h"
#include "cmos.h"

/* Where the waking routine is copied: below 1 MiB, clear of the loader's
 * boot area, the ACPI tables and the EBDA. */
#define RESUME_ADDR 0x80000u
#define GPA0_VALUE 0x20u
#define RESUME_VALUE 0x0au

#define FADT_FIRMWARE_CTRL 36
#define FADT_DSDT 40
#define FADT_PM1A_EVT_BLK 56
#define FADT_PM1A_CNT_BLK 64
#define FACS_WAKING_VECTOR 12
#define PM1_EN_RTC 0x400
#define PM1_CNT_SLP_EN 0x2000
#define PM1_CNT_SLP_TYP_SHIFT 10

extern const char resume_start[], resume_end[], resume_value[];
asm(".pushsection .text\n"
    ".code16\n"
    ".globl resume_start, resume_end, resume_value\n"
    "resume_start:\n\t"
    "movl 0x0, %eax\n\t"                             /* DS = 0: GPA 0 */
    "addl %cs:(resume_value - resume_start), %eax\n\t" /* CS base = vector */
    "movw $" "0xf4" ", %dx\n\t"
    "outl %eax, %dx\n"
    "1:\n\t"
    "hlt\n\t"
    "jmp 1b\n\t"
    ".balign 4\n"
    "resume_value:\n\t"
    ".long 0\n"
    "resume_end:\n"
    ".code64\n"
    ".popsection");

static u32 rd32(const void *p) { return *(const volatile u32 *)p; }

static noreturn void fail(const char *what)
{
    printf("FAIL: %s\n", what);
    finish(1);
}

/* SLP_TYPa of `Name(_S3_, Package() {a, ...})` in the DSDT's AML. */
static int s3_slp_typ(const struct acpi_header *dsdt)
{
    const u8 *aml = (const u8 *)dsdt;
    for (u32 i = sizeof(*dsdt); i + 8 < dsdt->length; i++) {
        if (memcmp(aml + i, "_S3_", 4) || aml[i + 4] != 0x12)
            continue;
        const u8 *p = aml + i + 5;
        p += 1 + (p[0] >> 6); /* PkgLength */
        if (p[0] == 0)        /* NumElements */
            return -1;
        switch (p[1]) {
        case 0x00:
            return 0;
        case 0x01:
            return 1;
        case 0x0a:
            return p[2];
        default:
            return -1;
        }
    }
    return -1;
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const struct acpi_header *fadt = acpi_find_table(ACPI_SIG('F', 'A', 'C', 'P'));
    if (!fadt)
        fail("no FADT");
    const u8 *f = (const u8 *)fadt;
    u32 facs = rd32(f + FADT_FIRMWARE_CTRL);
    u16 pm1a_evt = (u16)rd32(f + FADT_PM1A_EVT_BLK), pm1a_cnt = (u16)rd32(f + FADT_PM1A_CNT_BLK);
    if (!facs || rd32((const void *)(uintptr_t)facs) != ACPI_SIG('F', 'A', 'C', 'S'))
        fail("no FACS");
    int slp_typ = s3_slp_typ((const struct acpi_header *)(uintptr_t)rd32(f + FADT_DSDT));
    if (slp_typ < 0)
        fail("no _S3 package in the DSDT");
    printf("s3: FACS at 0x%x, PM1a_EVT 0x%x, PM1a_CNT 0x%x, _S3 SLP_TYP %d\n", facs, pm1a_evt, pm1a_cnt,
           slp_typ);

    u32 len = (u32)(resume_end - resume_start);
    memcpy((void *)(uintptr_t)RESUME_ADDR, resume_start, len);
    mmio_write32(RESUME_ADDR + (u32)(resume_value - resume_start), RESUME_VALUE);
    mmio_write32(facs + FACS_WAKING_VECTOR, RESUME_ADDR);
    printf("s3: waking vector 0x%x (%u bytes of 16-bit code)\n", RESUME_ADDR, len);

    /* rtc-wake=0 leaves RTC_EN clear: the alarm then wakes nothing. */
    if (cmdline_u64("rtc-wake", 1))
        outw(pm1a_evt + 2, PM1_EN_RTC);
    /* The alarm on the next second: sync to an update, then all "don't care". */
    cmos_sync_update();
    (void)cmos_read(RTC_REG_C);
    cmos_write(RTC_SECONDS_ALARM, RTC_ALARM_DONT_CARE);
    cmos_write(RTC_MINUTES_ALARM, RTC_ALARM_DONT_CARE);
    cmos_write(RTC_HOURS_ALARM, RTC_ALARM_DONT_CARE);
    cmos_write(RTC_REG_B, cmos_read(RTC_REG_B) | REG_B_AIE);

    if (cmdline_u64("x2apic", 0)) {
        u32 r[4];
        cpuid(1, 0, r);
        if (!(r[2] & (1u << 21)))
            fail("x2apic=1, but CPUID has no x2APIC");
        wrmsr(MSR_APIC_BASE, rdmsr(MSR_APIC_BASE) | APIC_BASE_EN | APIC_BASE_EXTD);
        printf("s3: x2APIC on\n");
    }
    mmio_write32(0, GPA0_VALUE);
    printf("s3: entering S3\n");
    outw(pm1a_cnt, (u16)(PM1_CNT_SLP_EN | slp_typ << PM1_CNT_SLP_TYP_SHIFT));
    /* Not suspended: give a slow VMM a moment, then say so. */
    for (u32 i = 0; i < 100000000u; i++)
        cpu_relax();
    printf("FAIL: still running after the S3 request\n");
    finish(2);
}
