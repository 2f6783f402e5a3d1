/*
 * An LPI through the vGICv3's ITS, as kvm-unit-tests' its tests raise one:
 * the boot CPU's redistributor gets an LPI configuration and pending table
 * and EnableLPIs; the ITS gets a device and a collection table
 * (GITS_BASER<n> by their types), a command queue (GITS_CBASER) and is
 * enabled; then the commands MAPD (device 0, 2 events), MAPC (collection 0
 * to this CPU's redistributor: its processor number, or its address when
 * GITS_TYPER.PTA says so), MAPTI (event 1 to LPI 8192), SYNC, and INT
 * (device 0, event 1). With the CPU interface's Group 1 enabled and DAIF
 * still masked, ICC_IAR1_EL1 then acknowledges LPI 8192 (polled, 2 s at
 * most), and ICC_EOIR1_EL1 ends it.
 * Lines: `its: typer=0x… devices=<BASER n> collections=<BASER n> pta=<0|1>`,
 * `its: commands done=<1|0>`, `its: iar=<INTID>`, `its: OK|FAIL`.
 * Exit 0 when the LPI was acknowledged, 1 otherwise (2 without the tables).
 */
#include "rt.h"

#define LPI_BASE 8192
#define LPI (LPI_BASE + 0)
#define ID_BITS 14 /* INTIDs below 16384: LPIs 8192..16383 */
#define EVENT 1

#define GICD_CTLR 0x0
#define GICR_CTLR 0x0
#define GICR_TYPER 0x08
#define GICR_PROPBASER 0x70
#define GICR_PENDBASER 0x78

#define GITS_CTLR 0x0
#define GITS_TYPER 0x8
#define GITS_CBASER 0x80
#define GITS_CWRITER 0x88
#define GITS_CREADR 0x90
#define GITS_BASER(n) (0x100 + 8 * (n))

#define BASER_VALID (1ull << 63)
#define BASER_TYPE(v) (((v) >> 56) & 7)
#define BASER_TYPE_DEVICE 1
#define BASER_TYPE_COLLECTION 4

/* Tables in RAM, aligned as the GIC requires (the pending table 64 KiB). */
static u8 prop_table[(1 << ID_BITS) - LPI_BASE] __attribute__((aligned(4096)));
static u8 pend_table[65536] __attribute__((aligned(65536)));
/* 64 KiB each, 64 KiB aligned: KVM's ITS tables use 64 KiB pages (the
 * GITS_BASER page size it reports and keeps), where address bits 15:12
 * would be read as PA[51:48]. */
static u8 device_table[65536] __attribute__((aligned(65536)));
static u8 collection_table[65536] __attribute__((aligned(65536)));
static u8 itt[4096] __attribute__((aligned(4096)));
static u64 cmdq[4096 / 8] __attribute__((aligned(65536)));
static u32 cmd_next;

static const u64 its = VIRT_GIC_ITS_BASE;

static u64 rd64(u64 a) { return (u64)mmio_read32(a) | (u64)mmio_read32(a + 4) << 32; }
static void wr64(u64 a, u64 v)
{
    mmio_write32(a, (u32)v);
    mmio_write32(a + 4, (u32)(v >> 32));
}

/* The redistributor whose GICR_TYPER affinity is `mpidr`'s, or 0. */
static u64 redist_of(u64 mpidr)
{
    u32 aff = (u32)(((mpidr >> 32) & 0xff) << 24 | (mpidr & 0xffffff));
    for (u32 i = 0; i < VIRT_GIC_REDIST_MAX_VCPUS; i++) {
        u64 rd = VIRT_GIC_REDIST_BASE + i * VIRT_GIC_REDIST_STRIDE;
        if (mmio_read32(rd + GICR_TYPER + 4) == aff)
            return rd;
        if (mmio_read32(rd + GICR_TYPER) & (1u << 4)) /* Last */
            break;
    }
    return 0;
}

/* Queue one 32-byte command and wait (2 s at most) until the ITS read it. */
static bool command(u64 dw0, u64 dw1, u64 dw2, u64 dw3)
{
    u64 *c = &cmdq[(cmd_next % 128) * 4];
    c[0] = dw0;
    c[1] = dw1;
    c[2] = dw2;
    c[3] = dw3;
    cmd_next++;
    asm volatile("dsb ish" : : : "memory");
    u64 off = (u64)(cmd_next % 128) * 32;
    wr64(its + GITS_CWRITER, off);
    u64 t0 = counter_now(), limit = 2 * counter_freq();
    while (rd64(its + GITS_CREADR) != off) {
        if (counter_now() - t0 > limit)
            return false;
        cpu_relax();
    }
    return true;
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    u64 rd = redist_of(this_cpu()->mpidr);
    if (!rd) {
        printf("its: no redistributor\nits: FAIL\n");
        finish(1);
    }

    /* The distributor and this CPU's interface: Group 1 on, every priority. */
    mmio_write32(VIRT_GIC_DIST_BASE + GICD_CTLR, mmio_read32(VIRT_GIC_DIST_BASE + GICD_CTLR) | 0x13);
    write_sysreg(S3_0_C4_C6_0, 0xff); /* ICC_PMR_EL1 */
    write_sysreg(S3_0_C12_C12_7, 1);  /* ICC_IGRPEN1_EL1 */
    isb();

    /* LPIs on this redistributor: LPI 8192 enabled at priority 0xa0. */
    prop_table[LPI - LPI_BASE] = 0xa0 | 1;
    asm volatile("dsb ish" : : : "memory");
    wr64(rd + GICR_PROPBASER, (u64)prop_table | (ID_BITS - 1));
    wr64(rd + GICR_PENDBASER, (u64)pend_table);
    mmio_write32(rd + GICR_CTLR, mmio_read32(rd + GICR_CTLR) | 1);

    /* The ITS's tables, by the types its BASERs report. */
    u64 typer = rd64(its + GITS_TYPER);
    bool pta = typer & (1ull << 19);
    int dev_n = -1, coll_n = -1;
    for (int n = 0; n < 8; n++) {
        u64 v = rd64(its + GITS_BASER(n));
        /* Keep what the ITS reports (type, entry and page size, one page):
         * only the address and Valid are ours. */
        u64 type = BASER_TYPE(v), keep = v & ~(BASER_VALID | 0x0000fffffffff000ull);
        if (type == BASER_TYPE_DEVICE && dev_n < 0) {
            wr64(its + GITS_BASER(n), BASER_VALID | keep | (u64)device_table);
            dev_n = n;
        } else if (type == BASER_TYPE_COLLECTION && coll_n < 0) {
            wr64(its + GITS_BASER(n), BASER_VALID | keep | (u64)collection_table);
            coll_n = n;
        }
    }
    printf("its: typer=0x%lx devices=%d collections=%d pta=%u\n", typer, dev_n, coll_n, pta);
    if (dev_n < 0 || coll_n < 0) {
        printf("its: FAIL\n");
        finish(2);
    }
    wr64(its + GITS_CBASER, BASER_VALID | (u64)cmdq); /* one 4 KiB page */
    wr64(its + GITS_CWRITER, 0);
    mmio_write32(its + GITS_CTLR, 1);

    u64 target = pta ? rd : (mmio_read32(rd + GICR_TYPER) >> 8) & 0xffff;
    u64 rdbase = pta ? (target >> 16) << 16 : target << 16;
    bool done = command(0x08, 0 /* 1 event bit: 2 events */, BASER_VALID | (u64)itt, 0) /* MAPD dev 0 */
                && command(0x09, 0, BASER_VALID | rdbase | 0, 0)                        /* MAPC icid 0 */
                && command(0x0a, (u64)LPI << 32 | EVENT, 0, 0)                          /* MAPTI */
                && command(0x05, 0, rdbase, 0)                                          /* SYNC */
                && command(0x03, EVENT, 0, 0);                                          /* INT */
    printf("its: commands done=%u\n", done);

    u64 iar = 1023;
    u64 t0 = counter_now(), limit = 2 * counter_freq();
    while (done && counter_now() - t0 < limit) {
        iar = read_sysreg(S3_0_C12_C12_0) & 0xffffff; /* ICC_IAR1_EL1 */
        if (iar != 1023)
            break;
        cpu_relax();
    }
    if (iar != 1023) {
        write_sysreg(S3_0_C12_C12_1, iar); /* ICC_EOIR1_EL1 */
        isb();
    }
    printf("its: iar=%lu\n", iar);
    if (iar != LPI)
        printf("its: gits_ctlr=0x%x gicr_ctlr=0x%x propbaser=0x%lx baser%d=0x%lx baser%d=0x%lx hppir1=%lu\n",
               mmio_read32(its + GITS_CTLR), mmio_read32(rd + GICR_CTLR), rd64(rd + GICR_PROPBASER), dev_n,
               rd64(its + GITS_BASER(dev_n)), coll_n, rd64(its + GITS_BASER(coll_n)),
               read_sysreg(S3_0_C12_C12_2) & 0xffffff);
    bool ok = done && iar == LPI;
    printf("its: %s\n", ok ? "OK" : "FAIL");
    finish(ok ? 0 : 1);
}
