/*
 * Just enough of a flattened device tree reader for the payloads: the
 * command line (/chosen/bootargs), the CPUs' MPIDRs (/cpus/cpu@*: reg, one
 * or two cells as /cpus says), the first RAM range (/memory*: reg, two
 * and two cells as trapline's and QEMU's roots have), the virtio-mmio
 * transports counted and whether there is a PL031. Everything is bounds
 * checked against the header's sizes: a broken blob yields less, never a
 * fault.
 */
#include "rt.h"

#define FDT_MAGIC 0xd00dfeed
#define FDT_BEGIN_NODE 1
#define FDT_END_NODE 2
#define FDT_PROP 3
#define FDT_NOP 4
#define FDT_END 9
/* Larger than any blob a VMM passes (arm64 Linux allows 2 MiB). */
#define FDT_MAX_SIZE (2u << 20)
#define FDT_HEADER_SIZE 40
/* The RAM the runtime maps (layout.h): a blob must lie inside it. */
#define RAM_MAPPED_END ((u64)MAPPED_BLOCKS << BLOCK_SHIFT)

struct dt_info dt;

static u32 be32(const u8 *p) { return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3]; }

static u64 cells(const u8 *p, u32 n) { return n == 2 ? (u64)be32(p) << 32 | be32(p + 4) : be32(p); }

static bool starts_with(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

/* A NUL-terminated string inside [p, end), or NULL. */
static const char *string_in(const u8 *p, const u8 *end)
{
    for (const u8 *q = p; q < end; q++)
        if (!*q)
            return (const char *)p;
    return NULL;
}

bool dt_parse(const void *fdt, struct dt_info *out)
{
    const u8 *b = fdt;
    memset(out, 0, sizeof(*out));
    u64 at = (u64)(uintptr_t)b;
    if (at < VIRT_RAM_BASE || at > RAM_MAPPED_END - FDT_HEADER_SIZE || be32(b) != FDT_MAGIC)
        return false;
    u32 total = be32(b + 4), off_struct = be32(b + 8), off_strings = be32(b + 12);
    u32 size_strings = be32(b + 32), size_struct = be32(b + 36);
    if (total < FDT_HEADER_SIZE || total > FDT_MAX_SIZE || total > RAM_MAPPED_END - at || off_struct > total || size_struct > total - off_struct || off_strings > total ||
        size_strings > total - off_strings)
        return false;
    out->fdt = fdt;

    const u8 *p = b + off_struct, *end = p + size_struct;
    const u8 *strings = b + off_strings, *strings_end = strings + size_strings;
    /* Nesting: 1 inside the root node, 2 in its children (/chosen, /cpus,
     * /memory@...), 3 in theirs (/cpus/cpu@N). */
    int depth = 0;
    const char *level1 = ""; /* name of the current child of the root */
    u32 cpu_cells = 1;         /* /cpus #address-cells */
    bool is_cpu = false, have_reg = false;
    u64 reg = 0;

    while (p + 4 <= end) {
        u32 token = be32(p);
        p += 4;
        if (token == FDT_BEGIN_NODE) {
            const char *name = string_in(p, end);
            if (!name)
                break;
            p += (strlen(name) + 4) & ~3u;
            depth++;
            if (depth == 2) {
                level1 = name;
                if (starts_with(name, "virtio_mmio@"))
                    out->nvirtio_mmio++;
                else if (starts_with(name, "pl031@"))
                    out->pl031 = true;
            }
            is_cpu = have_reg = false;
        } else if (token == FDT_END_NODE) {
            if (depth == 3 && !strcmp(level1, "cpus") && is_cpu && have_reg && out->ncpus < MAX_CPUS)
                out->mpidr[out->ncpus++] = reg;
            if (--depth < 0)
                break;
            is_cpu = have_reg = false;
        } else if (token == FDT_PROP) {
            if (p + 8 > end)
                break;
            u32 len = be32(p), nameoff = be32(p + 4);
            const u8 *val = p + 8;
            if (len > (u32)(end - val) || nameoff >= size_strings)
                break;
            p = val + ((len + 3) & ~3u);
            const char *name = string_in(strings + nameoff, strings_end);
            if (!name)
                continue;
            if (depth == 2 && !strcmp(level1, "chosen") && !strcmp(name, "bootargs") && len &&
                string_in(val, val + len))
                out->bootargs = (const char *)val;
            else if (depth == 2 && !strcmp(level1, "cpus") && !strcmp(name, "#address-cells") && len == 4)
                cpu_cells = be32(val) == 2 ? 2 : 1;
            else if (depth == 3 && !strcmp(level1, "cpus") && !strcmp(name, "device_type"))
                is_cpu = len == 4 && !memcmp(val, "cpu", 4);
            else if (depth == 3 && !strcmp(level1, "cpus") && !strcmp(name, "reg") && len >= 4 * cpu_cells) {
                reg = cells(val, cpu_cells);
                have_reg = true;
            } else if (depth == 2 && starts_with(level1, "memory") && !strcmp(name, "reg") && len >= 16 &&
                       !out->mem_size) {
                out->mem_base = cells(val, 2);
                out->mem_size = cells(val + 8, 2);
            }
        } else if (token == FDT_NOP) {
            continue;
        } else {
            break; /* FDT_END or garbage */
        }
    }
    return true;
}
