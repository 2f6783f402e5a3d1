/*
 * The vGICv3 and the virtual timer, as kvm-unit-tests' timer and gic tests
 * look at them, without taking an interrupt (DAIF stays masked): each
 * check reads the interrupt's pending bit in the redistributor of the CPU
 * it targets.
 *   - timer: the EL1 virtual timer (PPI 11, INTID 27) fires 1 ms ahead:
 *     CNTV_CTL.ISTATUS rises, the PPI becomes pending, and stops being
 *     pending once the timer is disabled (it is level-triggered);
 *   - SGI to self: ICC_SGI1R_EL1 with this CPU in the target list makes
 *     SGI 1 pending here;
 *   - SGI to another CPU (with 2 or more vCPUs): CPU 1, started with PSCI
 *     CPU_ON, waits for SGI 3 in its own redistributor, which CPU 0 sends
 *     it; CPU 1 then powers itself off (CPU_OFF).
 * Each redistributor is found by its GICR_TYPER affinity and its SGIs and
 * PPIs put in Group 1, as a driver does.
 * Lines: `gic: timer istatus=1 pending=1 cleared=1`, `gic: sgi self
 * pending=1`, `gic: sgi cpu1 pending=1` (or `gic: sgi cpu1 skipped (1
 * cpu)`), then `gic: OK` (exit 0) or `gic: FAIL` (exit 1). Every wait is
 * bounded (2 s of the generic timer).
 */
#include "rt.h"

#define GICR_TYPER 0x08
#define GICR_SGI_BASE 0x10000
#define GICR_IGROUPR0 (GICR_SGI_BASE + 0x80)
#define GICR_ISENABLER0 (GICR_SGI_BASE + 0x100)
#define GICR_ISPENDR0 (GICR_SGI_BASE + 0x200)
#define GICR_ICPENDR0 (GICR_SGI_BASE + 0x280)

#define TIMER_INTID (GIC_PPI_INTID_BASE + VIRT_TIMER_VIRT_PPI)
#define SGI_SELF 1
#define SGI_CROSS 3

#define CNTV_CTL_ENABLE 1u
#define CNTV_CTL_ISTATUS 4u

static volatile u32 cpu1_waiting, cpu1_saw;

/* The redistributor whose GICR_TYPER affinity is `mpidr`'s, or 0. */
static u64 redist_of(u64 mpidr)
{
    u32 aff = (u32)(((mpidr >> 32) & 0xff) << 24 | (mpidr & 0xffffff));
    for (u32 i = 0; i < VIRT_GIC_REDIST_MAX_VCPUS; i++) {
        u64 rd = VIRT_GIC_REDIST_BASE + i * VIRT_GIC_REDIST_STRIDE;
        u32 typer_lo = mmio_read32(rd + GICR_TYPER);
        if (mmio_read32(rd + GICR_TYPER + 4) == aff)
            return rd;
        if (typer_lo & (1u << 4)) /* Last */
            break;
    }
    return 0;
}

/* SGIs and PPIs in Group 1, as a driver sets them: ICC_SGI1R_EL1 raises
 * Group 1 SGIs only (KVM starts them there; QEMU's emulated GIC does not). */
static void group1(u64 rd) { mmio_write32(rd + GICR_IGROUPR0, ~0u); }

static bool pending(u64 rd, u32 intid) { return mmio_read32(rd + GICR_ISPENDR0) & (1u << intid); }

/* Wait (2 s at most) until intid's pending bit in rd is `want`. */
static bool wait_pending(u64 rd, u32 intid, bool want)
{
    u64 t0 = counter_now(), limit = 2 * counter_freq();
    while (pending(rd, intid) != want) {
        if (counter_now() - t0 > limit)
            return false;
        cpu_relax();
    }
    return true;
}

static void send_sgi(u64 target_mpidr, u32 intid)
{
    u64 aff0 = target_mpidr & 0xff;
    u64 v = ((target_mpidr >> 32) & 0xff) << 48 | ((target_mpidr >> 16) & 0xff) << 32 |
            ((target_mpidr >> 8) & 0xff) << 16 | (aff0 / 16) << 44 | (u64)intid << 24 | 1u << (aff0 % 16);
    write_sysreg(S3_0_C12_C11_5, v); /* ICC_SGI1R_EL1 */
    isb();
}

void ap_main(u32 cpu, u64 mpidr)
{
    (void)cpu;
    u64 rd = redist_of(mpidr);
    if (rd)
        group1(rd);
    __atomic_store_n(&cpu1_waiting, 1, __ATOMIC_RELEASE);
    bool saw = rd && wait_pending(rd, SGI_CROSS, true);
    if (rd)
        mmio_write32(rd + GICR_ICPENDR0, 1u << SGI_CROSS);
    __atomic_store_n(&cpu1_saw, saw ? 1 : 2, __ATOMIC_RELEASE);
}

static bool check_timer(u64 rd)
{
    write_sysreg(cntv_ctl_el0, 0);
    isb();
    mmio_write32(rd + GICR_ISENABLER0, 1u << TIMER_INTID);
    write_sysreg(cntv_cval_el0, counter_now() + counter_freq() / 1000);
    write_sysreg(cntv_ctl_el0, CNTV_CTL_ENABLE);
    isb();
    u64 t0 = counter_now(), limit = 2 * counter_freq();
    bool istatus = false;
    while (!(istatus = read_sysreg(cntv_ctl_el0) & CNTV_CTL_ISTATUS) && counter_now() - t0 < limit)
        cpu_relax();
    bool pend = istatus && wait_pending(rd, TIMER_INTID, true);
    write_sysreg(cntv_ctl_el0, 0);
    isb();
    bool cleared = pend && wait_pending(rd, TIMER_INTID, false);
    printf("gic: timer istatus=%u pending=%u cleared=%u\n", istatus, pend, cleared);
    return istatus && pend && cleared;
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    u64 rd = redist_of(this_cpu()->mpidr);
    if (!rd) {
        printf("gic: no redistributor for mpidr 0x%lx\n", this_cpu()->mpidr);
        printf("gic: FAIL\n");
        finish(1);
    }
    group1(rd);
    bool ok = check_timer(rd);

    mmio_write32(rd + GICR_ICPENDR0, 1u << SGI_SELF);
    send_sgi(this_cpu()->mpidr, SGI_SELF);
    bool self = wait_pending(rd, SGI_SELF, true);
    mmio_write32(rd + GICR_ICPENDR0, 1u << SGI_SELF);
    printf("gic: sgi self pending=%u\n", self);
    ok = ok && self;

    if (dt.ncpus >= 2) {
        bool cross = false;
        if (smp_start_cpu(1, dt.mpidr[1]) == PSCI_RET_SUCCESS) {
            u64 t0 = counter_now(), limit = 2 * counter_freq();
            while (!__atomic_load_n(&cpu1_waiting, __ATOMIC_ACQUIRE) && counter_now() - t0 < limit)
                cpu_relax();
            send_sgi(dt.mpidr[1], SGI_CROSS);
            t0 = counter_now();
            while (!__atomic_load_n(&cpu1_saw, __ATOMIC_ACQUIRE) && counter_now() - t0 < 2 * limit)
                cpu_relax();
            cross = cpu1_saw == 1;
        }
        printf("gic: sgi cpu1 pending=%u\n", cross);
        ok = ok && cross;
    } else {
        printf("gic: sgi cpu1 skipped (1 cpu)\n");
    }
    printf("gic: %s\n", ok ? "OK" : "FAIL");
    finish(ok ? 0 : 1);
}
