/* The probe's IPI scenarios (ROUTINE_IPI): the BSP's APIC, vCPU 1 serving IPIs in spin or halt mode, self-IPIs and timed EOIs, in xAPIC or x2APIC mode. */
#include "probe/probe.h"

#define AP_WAIT_CYCLES (1ULL << 33) /* bound on vCPU 1 coming online */
#define SPURIOUS_VECTOR 0xff        /* lapic_enable()'s SVR vector */
#define ICR_SELF (1u << 18)         /* xAPIC ICR destination shorthand "self" */
#define APIC_LVT0 0x350
#define LVT_MASKED (1u << 16)
#define X2APIC_MSR(reg) (0x800 + ((reg) >> 4))
#define MSR_X2APIC_ID X2APIC_MSR(APIC_ID)
#define MSR_X2APIC_SVR X2APIC_MSR(APIC_SVR)
#define MSR_X2APIC_EOI X2APIC_MSR(APIC_EOI)      /* 0x80b */
#define MSR_X2APIC_ICR X2APIC_MSR(APIC_ICR_LO)   /* 0x830 */
#define MSR_X2APIC_LVT0 X2APIC_MSR(APIC_LVT0)
#define MSR_X2APIC_SELF_IPI 0x83f

/* Machine state, set up once by irq_init(). */
static struct {
    u32 cpus;        /* cpus= */
    bool x2apic;     /* every CPU is (or, for an AP coming up, is to be) in x2APIC mode */
    bool apic_on;    /* the BSP's APIC is software-enabled */
    bool pic_masked;
} mach;

/* vCPU 1 (the first AP) serves IPIs in one of these modes. */
enum { AP_HALT, AP_SPIN };
static volatile u32 ap_online;
static volatile u32 ap_mode = AP_HALT; /* what the BSP wants */
static volatile u32 ap_mode_ack = ~0u; /* what vCPU 1 last saw */
static volatile u32 ap_ready;          /* vCPU 1 is in its cli..sti; hlt window */

/* IPI_VECTOR handler counts, one cache line per CPU. */
static struct {
    volatile u64 n;
} __attribute__((aligned(64))) ipi_count[MAX_CPUS];
static volatile bool eoi_timed;  /* the BSP's handler times its EOI write */
static volatile u64 eoi_cycles;  /* sum of those EOI writes */



void apic_eoi(void)
{
    if (mach.x2apic)
        wrmsr(MSR_X2APIC_EOI, 0);
    else
        lapic_eoi();
}

/* A fixed, physical, edge IPI: xAPIC ICR high + low and the busy poll (as kvm-unit-tests), or one x2APIC ICR write. */
static void send_ipi(u32 dest, u8 vector)
{
    if (mach.x2apic)
        wrmsr(MSR_X2APIC_ICR, (u64)dest << 32 | ICR_ASSERT | ICR_FIXED | vector);
    else
        lapic_send_ipi(dest, vector);
}

static void send_self_ipi(u8 vector)
{
    if (mach.x2apic) {
        wrmsr(MSR_X2APIC_SELF_IPI, vector);
        return;
    }
    lapic_write(APIC_ICR_LO, ICR_SELF | ICR_ASSERT | ICR_FIXED | vector);
    for (int i = 0; i < 1000 && (lapic_read(APIC_ICR_LO) & ICR_BUSY); i++)
        cpu_relax();
}

/* xAPIC -> x2APIC (EN and EXTD together is a legal transition; the APIC keeps its state). */
static void x2apic_enable(void)
{
    wrmsr(MSR_APIC_BASE, rdmsr(MSR_APIC_BASE) | APIC_BASE_EN | APIC_BASE_EXTD);
    wrmsr(MSR_X2APIC_SVR, 0x100 | SPURIOUS_VECTOR);
}

static u32 apic_id_now(void) { return mach.x2apic ? (u32)rdmsr(MSR_X2APIC_ID) : lapic_id(); }

DEFINE_IRQ_ENTRY(ipi_entry, ipi_handler);
DEFINE_IRQ_ENTRY(spurious_entry, spurious_handler);

/* IPI_VECTOR on any CPU: count, then EOI (timed on the BSP for eoi/eoi-x2apic). */
void ipi_handler(void)
{
    u32 cpu = this_cpu()->index;
    __atomic_store_n(&ipi_count[cpu].n, ipi_count[cpu].n + 1, __ATOMIC_RELEASE);
    if (cpu == 0 && eoi_timed) {
        u64 t0 = rdtsc_ordered();
        apic_eoi();
        u64 t1 = rdtsc_ordered();
        eoi_cycles += t1 - t0;
    } else {
        apic_eoi();
    }
}

/* A spurious interrupt needs no EOI. */
void spurious_handler(void) {}

/* Spin until *p != old; false after WAIT_LIMIT. The clock is only read once the first look fails. */
static bool wait_change(volatile u64 *p, u64 old)
{
    if (*p != old)
        return true;
    u64 t0 = rdtsc_plain();
    while (*p == old) {
        if (rdtsc_plain() - t0 > WAIT_LIMIT)
            return false;
        cpu_relax();
    }
    return true;
}

static bool wait_flag(volatile u32 *p, u32 want)
{
    if (*p == want)
        return true;
    u64 t0 = rdtsc_plain();
    while (*p != want) {
        if (rdtsc_plain() - t0 > WAIT_LIMIT)
            return false;
        cpu_relax();
    }
    return true;
}

/*
 * vCPU 1's loop. Interrupts stay on. AP_SPIN: `sti; pause`. AP_HALT: with
 * IF=0, re-check the mode, raise ap_ready and `sti; hlt`: an IPI sent after
 * ap_ready was seen always finds this vCPU in (or entering) HLT, never
 * still on its way back from the last handler.
 */
static noreturn void ap_serve(void)
{
    for (;;) {
        u32 m = __atomic_load_n(&ap_mode, __ATOMIC_ACQUIRE);
        __atomic_store_n(&ap_mode_ack, m, __ATOMIC_RELEASE);
        if (m == AP_SPIN) {
            asm volatile("sti; pause" : : : "memory");
            continue;
        }
        asm volatile("cli" : : : "memory");
        if (__atomic_load_n(&ap_mode, __ATOMIC_ACQUIRE) == AP_HALT) {
            __atomic_store_n(&ap_ready, 1, __ATOMIC_RELEASE);
            asm volatile("sti; hlt" : : : "memory");
        }
    }
}

void ap_main(u32 cpu, u32 apic_id)
{
    (void)apic_id;
    lapic_enable();
    if (mach.x2apic)
        x2apic_enable();
    percpu[cpu].apic_id = apic_id_now();
    __atomic_fetch_add(&ap_online, 1, __ATOMIC_RELEASE);
    if (cpu != 1)
        return; /* only vCPU 1 serves; any further AP parks */
    ap_serve();
}

/* Tell vCPU 1 its mode, wake it with an IPI, and wait until it runs in that mode (halted: in its hlt window). */
static bool ap_settle(u32 mode)
{
    __atomic_store_n(&ap_ready, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&ap_mode, mode, __ATOMIC_RELEASE);
    send_ipi(percpu[1].apic_id, IPI_VECTOR);
    if (!wait_flag(&ap_mode_ack, mode) || (mode == AP_HALT && !wait_flag(&ap_ready, 1))) {
        printf("probe: vCPU 1 did not settle in %s mode\n", mode == AP_HALT ? "halt" : "spin");
        return false;
    }
    return true;
}

/*
 * The BSP's APIC: software-enabled once, before any scenario that sets IF.
 * Like kvm-unit-tests, mask both PICs and LINT0 first, so that no legacy
 * interrupt (QEMU's PIT runs from reset, for one) reaches the BSP through
 * the PIC: only the APIC and the IOAPIC deliver here.
 */
void bsp_apic_on(void)
{
    if (mach.apic_on)
        return;
    mach.apic_on = true;
    outb(0x21, 0xff);
    outb(0xa1, 0xff);
    if (mach.x2apic) {
        wrmsr(MSR_X2APIC_SVR, 0x100 | SPURIOUS_VECTOR);
        wrmsr(MSR_X2APIC_LVT0, rdmsr(MSR_X2APIC_LVT0) | LVT_MASKED);
    } else {
        lapic_enable();
        lapic_write(APIC_LVT0, lapic_read(APIC_LVT0) | LVT_MASKED);
    }
    percpu[0].apic_id = apic_id_now();
}

/* cpus= and x2apic=: gates, vCPU 1 (INIT/SIPI), then x2APIC on the BSP. */
void irq_init(void)
{
    u32 r[4];

    idt_set(IPI_VECTOR, ipi_entry);
    idt_set(SPURIOUS_VECTOR, spurious_entry);
    mach.cpus = (u32)cmdline_u64("cpus", 1);
    if (mach.cpus == 0 || mach.cpus > MAX_CPUS)
        mach.cpus = 1;
    if (cmdline_u64("x2apic", 0)) {
        cpuid(1, 0, r);
        if (r[2] & (1u << 21))
            mach.x2apic = true;
        else
            printf("probe: x2apic=1 but the CPU has no x2APIC\n");
    }
    if (mach.cpus < 2 && !mach.x2apic)
        return; /* nothing to do until an interrupt scenario runs */
    percpu[0].apic_id = lapic_id();
    if (mach.cpus > 1) {
        smp_start_aps(); /* enables the BSP's xAPIC and starts the APs in xAPIC mode */
        u64 t0 = rdtsc_ordered();
        while (__atomic_load_n(&ap_online, __ATOMIC_ACQUIRE) < mach.cpus - 1 &&
               rdtsc_ordered() - t0 < AP_WAIT_CYCLES)
            cpu_relax();
        printf("probe: %u of %u cpus online\n", 1 + ap_online, mach.cpus);
    }
    if (mach.x2apic) {
        lapic_enable();
        x2apic_enable();
        printf("probe: x2APIC mode\n");
    }
    bsp_apic_on();
}

static bool x2apic_scenario(u32 id) { return id >= SCENARIO_IPI_X2APIC && id <= SCENARIO_EOI_X2APIC; }
static bool to_ap(u32 id)
{
    return id == SCENARIO_IPI || id == SCENARIO_IPI_HALT || id == SCENARIO_IPI_X2APIC || id == SCENARIO_IPI_HALT_X2APIC;
}
static bool ap_halts(u32 id) { return id == SCENARIO_IPI_HALT || id == SCENARIO_IPI_HALT_X2APIC; }
static bool eoi_scenario(u32 id) { return id == SCENARIO_EOI || id == SCENARIO_EOI_X2APIC; }

u32 ipi_prepare(u32 id, const char *name)
{
    if (x2apic_scenario(id) != mach.x2apic) {
        printf("probe: %s needs the APICs in %s mode (x2apic=%u)\n", name, mach.x2apic ? "xAPIC" : "x2APIC",
               !mach.x2apic);
        return RESULT_UNSUPPORTED;
    }
    bsp_apic_on();
    if (!to_ap(id))
        return RESULT_OK;
    if (ap_online < 1) {
        printf("probe: %s needs vCPU 1 online (cpus=2 on a 2-vCPU machine)\n", name);
        return RESULT_UNSUPPORTED;
    }
    return ap_settle(ap_halts(id) ? AP_HALT : AP_SPIN) ? RESULT_OK : RESULT_BAD_VALUE;
}

/*
 * n round trips. ipi/ipi-halt: IPI to vCPU 1, spin until its handler
 * counted it (ipi-halt first waits until vCPU 1 is back in its hlt
 * window). self-ipi/eoi: self-IPI with IF=1, spin until the handler ran.
 * cycles: the whole loop, or for eoi the handler's timed EOI writes.
 */
void ipi_run(u32 id, u64 n, u64 *cycles, u64 *value)
{
    bool ap = to_ap(id), halt = ap_halts(id), eoi = eoi_scenario(id);
    u32 cpu = ap ? 1 : 0;
    u32 dest = percpu[1].apic_id;
    volatile u64 *count = &ipi_count[cpu].n;
    u64 i, t0, t1;

    *count = 0;
    eoi_cycles = 0;
    eoi_timed = eoi;
    if (!ap)
        irqs_on();
    t0 = rdtsc_ordered();
    for (i = 0; i < n; i++) {
        if (halt) {
            if (!wait_flag(&ap_ready, 1))
                break;
            __atomic_store_n(&ap_ready, 0, __ATOMIC_RELAXED);
        }
        if (ap)
            send_ipi(dest, IPI_VECTOR);
        else
            send_self_ipi(IPI_VECTOR);
        if (!wait_change(count, i))
            break;
    }
    t1 = rdtsc_ordered();
    irqs_off();
    eoi_timed = false;
    *value = *count;
    *cycles = eoi ? eoi_cycles : t1 - t0;
    if (*value != n) {
        printf("probe: handler count %lu after %lu of %lu IPIs\n", *value, i, n);
        run_status = RESULT_BAD_VALUE;
    }
}

void ipi_cleanup(u32 id)
{
    if (to_ap(id) && !ap_halts(id))
        ap_settle(AP_HALT); /* stop vCPU 1 spinning */
}
