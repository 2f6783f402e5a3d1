/*
 * The exit-cost lab's probe. For each scenario in s=<id|name>[,...]: warm
 * up, then time batches of n = min, 2*min, ... iterations (ucall BEGIN, TSC,
 * loop, TSC, ucall RESULT) until a batch takes goal cycles or n reaches max,
 * and print the final batch as a TRAPLINE-RESULT line for runners that only
 * see the serial console (QEMU).
 *
 * Every loop is the same three instructions (inc; cmp; jne) around one
 * operation, written in asm so the compiler cannot reshape one scenario's
 * loop differently from noop's: noop's cost can then be subtracted.
 *
 * PCI scenarios (19-32) have a per-scenario setup before the warm-up
 * (prepare(): find pci-testdev through CF8/CFC, select its test) and a
 * teardown after the last batch (deselect); see pci_prepare().
 *
 * Interrupt scenarios (33-41) are C loops, not the shared asm: each
 * iteration waits for an interrupt handler, and every wait is bounded by a
 * TSC deadline (a timeout is reported as BadValue, never a hang). With
 * cpus=2 the probe starts vCPU 1 (INIT/SIPI), which serves IPI_VECTOR in
 * spin or halt mode (ap_serve()); x2apic=1 switches every CPU to x2APIC
 * first. irqfd estimates the guest-host TSC offset with Clock ucalls and
 * lets the host inject through an irqfd (IrqfdStart). The doorbells
 * (42-45) are plain asm loops again.
 */
#include "rt.h"

struct scenario_name {
    u32 id;
    const char *name;
};

static const struct scenario_name names[] = SCENARIO_TABLE; /* generated from the ABI */

/* An ordinary RAM word for ram-read; same value as the devices so one check fits all. */
static u32 ram_word = PROBE_READ_VALUE;
static bool intel;

/* ---- PCI: pci-testdev, configuration reads and bus scans (scenarios 19-32) ---- */

/* What the bus scan found, once per boot. */
static struct {
    bool probed;
    int devfn;  /* pci-testdev, -1 if absent */
    u64 membar; /* BAR0 as firmware left it; 0 if it is not a 32-bit memory BAR */
    u32 iobar;  /* BAR1 likewise; 0 if it is not an I/O BAR */
    int ecam;   /* -1 not probed yet, 0 no ECAM at ECAM_BASE, 1 ECAM answers */
} pci = { .ecam = -1 };

enum { PT_MMIO, PT_PIO, PT_ABS_PORT };

/* The selected pci-testdev test, from its header. */
static struct {
    bool selected; /* a test is selected and must be deselected afterwards */
    bool io;       /* the header (and the test) is on BAR1, else BAR0 */
    u32 how;  /* PT_* */
    u32 width;
    u64 addr; /* MMIO address, or port for PT_PIO/PT_ABS_PORT */
    u32 data;
} pt;

static void pci_probe(void)
{
    if (pci.probed)
        return;
    pci.probed = true;
    pci.devfn = pci_find_dev(PCI_VENDOR_REDHAT, PCI_DEVICE_TESTDEV);
    if (pci.devfn < 0) {
        printf("probe: no pci-testdev on bus 0\n");
        return;
    }
    u32 b0 = pci_readl((u32)pci.devfn, PCI_BAR0);
    u32 b1 = pci_readl((u32)pci.devfn, PCI_BAR0 + 4);
    if (!(b0 & PCI_BAR_IO) && !(b0 & 0x6)) /* memory, 32-bit */
        pci.membar = b0 & PCI_BAR_MEM_MASK;
    if (b1 & PCI_BAR_IO)
        pci.iobar = b1 & PCI_BAR_IO_MASK;
    printf("probe: pci-testdev at 0x%x membar %lx iobar %x\n", (u32)pci.devfn, pci.membar, pci.iobar);
}

/* ECAM is there if devfn 0 (every PC has a host bridge) reads a real vendor ID through it. */
static bool ecam_present(void)
{
    if (pci.ecam < 0) {
        u16 vendor = (u16)mmio_read32(ECAM_BASE);
        pci.ecam = vendor != 0xffff && vendor != 0;
        if (!pci.ecam)
            printf("probe: no ECAM at 0x%lx (devfn 0 reads 0x%x)\n", (u64)ECAM_BASE, vendor);
    }
    return pci.ecam;
}

static u64 ecam_addr(u32 devfn, u32 reg) { return ECAM_BASE + ((u64)devfn << 12) + reg; }

static void hdr_writeb(u32 off, u8 v)
{
    if (pt.io)
        outb((u16)(pci.iobar + off), v);
    else
        mmio_write8(pci.membar + off, v);
}

static u8 hdr_readb(u32 off) { return pt.io ? inb((u16)(pci.iobar + off)) : mmio_read8(pci.membar + off); }
static u32 hdr_readl(u32 off) { return pt.io ? inl((u16)(pci.iobar + off)) : mmio_read32(pci.membar + off); }

/* Any value >= 3 but PCI_TESTDEV_PV_SELECT deselects, on QEMU and on trapline. */
static void testdev_deselect(void)
{
    if (pt.selected)
        hdr_writeb(PCI_TESTDEV_HDR_TEST, 0xff);
    pt.selected = false;
}

/* Whether the header's name is the scenario name up to its ':'. */
static bool testdev_name_is(const char *scenario)
{
    size_t len = 0;
    while (scenario[len] && scenario[len] != ':')
        len++;
    for (size_t k = 0; k <= len; k++) {
        u8 c = hdr_readb(PCI_TESTDEV_HDR_NAME + (u32)k);
        if (k == len)
            return c == 0;
        if (c != (u8)scenario[k])
            return false;
    }
    return false;
}

/* Scenarios 19-26: select the test on its BAR and read what and where to write. */
static u32 testdev_select(u32 id, const char *name)
{
    bool io = id >= SCENARIO_PCI_PORTIO_NO_EVENTFD;
    u32 k = id - (io ? SCENARIO_PCI_PORTIO_NO_EVENTFD : SCENARIO_PCI_MMIO_NO_EVENTFD);
    u8 select = k < 3 ? (u8)k : (u8)PCI_TESTDEV_PV_SELECT;

    pci_probe();
    if (pci.devfn < 0 || (io ? !pci.iobar : !pci.membar))
        return RESULT_UNSUPPORTED;
    pt.io = io;
    pt.selected = true;
    hdr_writeb(PCI_TESTDEV_HDR_TEST, select);
    pt.width = hdr_readb(PCI_TESTDEV_HDR_WIDTH);
    if (pt.width != 1 && pt.width != 2 && pt.width != 4) {
        /* The device does not offer this test (QEMU has no PV variants). */
        testdev_deselect();
        return RESULT_UNSUPPORTED;
    }
    if (!testdev_name_is(name)) {
        testdev_deselect();
        return RESULT_BAD_VALUE;
    }
    u32 offset = hdr_readl(PCI_TESTDEV_HDR_OFFSET);
    pt.data = hdr_readl(PCI_TESTDEV_HDR_DATA);
    if (offset & PCI_TESTDEV_OFFSET_ABSOLUTE) {
        pt.how = PT_ABS_PORT;
        pt.addr = offset & ~(u32)PCI_TESTDEV_OFFSET_ABSOLUTE;
        if (pt.addr > 0xfffc)
            goto bad;
    } else if (io) {
        pt.how = PT_PIO;
        pt.addr = pci.iobar + offset;
        if ((u64)offset + pt.width > PCI_TESTDEV_IO_BAR_SIZE || pt.addr + pt.width > 0x10000)
            goto bad;
    } else {
        pt.how = PT_MMIO;
        pt.addr = pci.membar + offset;
        if ((u64)offset + pt.width > PCI_TESTDEV_MEM_BAR_SIZE)
            goto bad;
    }
    return RESULT_OK;
bad:
    printf("probe: %s: header offset 0x%x width %u is outside its target\n", name, offset, pt.width);
    testdev_deselect();
    return RESULT_BAD_VALUE;
}


/* ---- Interrupts: IPIs, self-IPIs, EOI (33-40) and irqfd (41) ---- */

#define WAIT_CYCLES (1ULL << 32)    /* bound on every wait for a handler or vCPU 1 */
#define AP_WAIT_CYCLES (1ULL << 33) /* bound on vCPU 1 coming online */
#define IRQFD_MAX 4096              /* injections per IrqfdStart (the stamp arrays) */
#define CLOCK_SAMPLES 16
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
#define IOAPIC_REGSEL 0x00
#define IOAPIC_WIN 0x10
#define IOAPIC_VER 0x01
#define IOAPIC_REDTBL(pin) (0x10 + 2 * (pin))
#define IOAPIC_MASKED (1u << 16)

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

/*
 * irqfd: the u64 counters the host polls, the stamps and the offset
 * estimate. Each IrqfdStart gets the other counter: the host may not yet
 * have seen the last run's final count when the guest starts the next run,
 * and zeroing the counter it still polls would make it miss that ack. The
 * host handles one IrqfdStart at a time, so by the time a slot is reused
 * (two runs later) it is done with it.
 */
static struct {
    volatile u64 n;
} __attribute__((aligned(64))) irqfd_acks[2];
static volatile u64 *irqfd_count = &irqfd_acks[0].n;
static u32 irqfd_runs;
static u64 irqfd_host_stamp[IRQFD_MAX];
static u64 irqfd_guest_stamp[IRQFD_MAX];
static u64 tsc_offset;     /* guest TSC - host TSC (mod 2^64) */
static u64 tsc_offset_err; /* half the shortest Clock round trip */
static volatile u64 clock_stamp;
static struct ucall clock_msg;

static u32 run_status; /* RESULT_BAD_VALUE when an interrupt scenario's wait timed out or a count was off */

static inline u64 rdtsc_plain(void)
{
    u32 lo, hi;
    asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (u64)hi << 32 | lo;
}

static void apic_eoi(void)
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
DEFINE_IRQ_ENTRY(irqfd_entry, irqfd_handler);
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

/* IRQFD_VECTOR (BSP): stamp, count (the host waits for the count), EOI. */
void irqfd_handler(void)
{
    u64 t = rdtsc_ordered();
    volatile u64 *count = irqfd_count;
    u64 c = *count;
    if (c < IRQFD_MAX)
        irqfd_guest_stamp[c] = t;
    __atomic_store_n(count, c + 1, __ATOMIC_RELEASE);
    apic_eoi();
}

/* A spurious interrupt needs no EOI. */
void spurious_handler(void) {}

/* Spin until *p != old; false after WAIT_CYCLES. The clock is only read once the first look fails. */
static bool wait_change(volatile u64 *p, u64 old)
{
    if (*p != old)
        return true;
    u64 t0 = rdtsc_plain();
    while (*p == old) {
        if (rdtsc_plain() - t0 > WAIT_CYCLES)
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
        if (rdtsc_plain() - t0 > WAIT_CYCLES)
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
static void bsp_apic_on(void)
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
static void irq_init(void)
{
    u32 r[4];

    idt_set(IPI_VECTOR, ipi_entry);
    idt_set(IRQFD_VECTOR, irqfd_entry);
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

static bool ipi_scenario(u32 id) { return id >= SCENARIO_IPI && id <= SCENARIO_EOI_X2APIC; }
static bool x2apic_scenario(u32 id) { return id >= SCENARIO_IPI_X2APIC && id <= SCENARIO_EOI_X2APIC; }
static bool to_ap(u32 id)
{
    return id == SCENARIO_IPI || id == SCENARIO_IPI_HALT || id == SCENARIO_IPI_X2APIC || id == SCENARIO_IPI_HALT_X2APIC;
}
static bool ap_halts(u32 id) { return id == SCENARIO_IPI_HALT || id == SCENARIO_IPI_HALT_X2APIC; }
static bool eoi_scenario(u32 id) { return id == SCENARIO_EOI || id == SCENARIO_EOI_X2APIC; }

static u32 ipi_prepare(u32 id, const char *name)
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
static void ipi_run(u32 id, u64 n, u64 *cycles, u64 *value)
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
        asm volatile("sti" : : : "memory");
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
    asm volatile("cli" : : : "memory");
    eoi_timed = false;
    *value = *count;
    *cycles = eoi ? eoi_cycles : t1 - t0;
    if (*value != n) {
        printf("probe: handler count %lu after %lu of %lu IPIs\n", *value, i, n);
        run_status = RESULT_BAD_VALUE;
    }
}

static void ipi_cleanup(u32 id)
{
    if (to_ap(id) && !ap_halts(id))
        ap_settle(AP_HALT); /* stop vCPU 1 spinning */
}

static void ioapic_write(u32 reg, u32 v)
{
    mmio_write32(IOAPIC_BASE + IOAPIC_REGSEL, reg);
    mmio_write32(IOAPIC_BASE + IOAPIC_WIN, v);
}

static u32 ioapic_read(u32 reg)
{
    mmio_write32(IOAPIC_BASE + IOAPIC_REGSEL, reg);
    return mmio_read32(IOAPIC_BASE + IOAPIC_WIN);
}

/*
 * Cristian's method: t1, Clock ucall (the host stamps its TSC into
 * clock_stamp during the exit), t2. The sample with the shortest round
 * trip wins: offset = (t1 + t2) / 2 - host, uncertain by (t2 - t1) / 2.
 * The message is built beforehand so only the OUT lies between t1 and t2.
 */
static bool clock_estimate(void)
{
    u64 best = ~0ULL;

    clock_msg.magic = UCALL_MAGIC;
    clock_msg.kind = UCALL_CLOCK;
    clock_msg.args[0] = (u64)(uintptr_t)&clock_stamp;
    memcpy(clock_msg.text, "clock", 6);
    for (int k = 0; k < CLOCK_SAMPLES; k++) {
        clock_stamp = 0;
        u64 t1 = rdtsc_ordered();
        outl(UCALL_PORT, (u32)(uintptr_t)&clock_msg);
        u64 t2 = rdtsc_ordered();
        u64 h = clock_stamp;
        if (!h)
            return false; /* no host answers Clock (QEMU) */
        if (t2 - t1 < best) {
            best = t2 - t1;
            tsc_offset = t1 + (t2 - t1) / 2 - h;
        }
    }
    tsc_offset_err = best / 2;
    return true;
}

/* Route IRQFD_GSI to IRQFD_VECTOR on the BSP, estimate the TSC offset. */
static u32 irqfd_prepare(const char *name)
{
    bsp_apic_on(); /* masks the PICs: GSI 10 reaches the CPU only through the IOAPIC */
    u32 ver = ioapic_read(IOAPIC_VER);
    if (ver == 0 || ver == ~0u || ((ver >> 16) & 0xff) < IRQFD_GSI) {
        printf("probe: %s: no IOAPIC with pin %u (version register 0x%x)\n", name, (u32)IRQFD_GSI, ver);
        return RESULT_UNSUPPORTED;
    }
    if (!clock_estimate()) {
        printf("probe: %s: the host does not answer Clock ucalls\n", name);
        return RESULT_UNSUPPORTED;
    }
    printf("probe: %s: guest-host TSC offset known to +-%lu cycles\n", name, tsc_offset_err);
    /* Fixed, physical, active high, edge; high dword first, unmasked last. */
    ioapic_write(IOAPIC_REDTBL(IRQFD_GSI) + 1, percpu[0].apic_id << 24);
    ioapic_write(IOAPIC_REDTBL(IRQFD_GSI), IRQFD_VECTOR);
    return RESULT_OK;
}

static void irqfd_cleanup(void) { ioapic_write(IOAPIC_REDTBL(IRQFD_GSI), IOAPIC_MASKED | IRQFD_VECTOR); }

/*
 * n host injections: IrqfdStart(k, stamps, counter), then with IF=1 wait
 * until the handler counted k (bounded: WAIT_CYCLES without progress).
 * cycles = sum of (guest handler TSC - host stamp - offset), value = the
 * offset's uncertainty. Only the warm-up can exceed IRQFD_MAX (scenario()
 * caps the batches); it is split into several runs.
 */
static void irqfd_run(u64 n, u64 *cycles, u64 *value)
{
    int64_t sum = 0;

    for (u64 done = 0; done < n;) {
        u64 k = n - done < IRQFD_MAX ? n - done : IRQFD_MAX;
        volatile u64 *count = &irqfd_acks[irqfd_runs++ & 1].n;
        *count = 0;
        irqfd_count = count;
        ucall(UCALL_IRQFD_START, "irqfd", k, (u64)(uintptr_t)irqfd_host_stamp, (u64)(uintptr_t)count);
        asm volatile("sti" : : : "memory");
        u64 seen = 0, t0 = rdtsc_plain();
        for (u64 c; (c = *count) < k; cpu_relax()) {
            if (c != seen) {
                seen = c;
                t0 = rdtsc_plain();
            } else if (rdtsc_plain() - t0 > WAIT_CYCLES) {
                break;
            }
        }
        asm volatile("cli" : : : "memory");
        barrier();
        if (*count != k) {
            printf("probe: irqfd: %lu of %lu injections arrived\n", *count, k);
            run_status = RESULT_BAD_VALUE;
            break;
        }
        for (u64 i = 0; i < k; i++)
            sum += (int64_t)(irqfd_guest_stamp[i] - irqfd_host_stamp[i] - tsc_offset);
        done += k;
    }
    /* A negative sum means the offset estimate is worse than the latency itself. */
    *cycles = sum > 0 ? (u64)sum : 0;
    *value = tsc_offset_err;
}

/* Per-scenario setup, once before the warm-up. Anything but RESULT_OK skips the scenario. */
static u32 prepare(u32 id, const char *name)
{
    switch (id) {
    case SCENARIO_PCI_MMIO_NO_EVENTFD ... SCENARIO_PCI_PORTIO_PV_EVENTFD:
        return testdev_select(id, name);
    case SCENARIO_PCI_CONFIG_READ_CF8:
        pci_probe();
        return pci.devfn < 0 ? RESULT_UNSUPPORTED : RESULT_OK;
    case SCENARIO_PCI_CONFIG_READ_ECAM:
    case SCENARIO_PCI_CONFIG_READ_ECAM_RO:
        pci_probe();
        return pci.devfn < 0 || !ecam_present() ? RESULT_UNSUPPORTED : RESULT_OK;
    case SCENARIO_PCI_SCAN_ECAM:
    case SCENARIO_PCI_SCAN_ECAM_RO:
        return ecam_present() ? RESULT_OK : RESULT_UNSUPPORTED;
    case SCENARIO_IPI ... SCENARIO_EOI_X2APIC:
        return ipi_prepare(id, name);
    case SCENARIO_IRQFD:
        return irqfd_prepare(name);
    default:
        return RESULT_OK;
    }
}

/* Per-scenario teardown after the last batch (or a failed setup). */
static void cleanup(u32 id, u32 prepared)
{
    testdev_deselect();
    if (prepared != RESULT_OK)
        return;
    if (ipi_scenario(id))
        ipi_cleanup(id);
    else if (id == SCENARIO_IRQFD)
        irqfd_cleanup();
}

#define LOOP(body, ...)                                                                          \
    do {                                                                                         \
        t0 = rdtsc_ordered();                                                                    \
        asm volatile("1:\n\t" body "\n\tinc %[i]\n\tcmp %[n], %[i]\n\tjne 1b" __VA_ARGS__);      \
        t1 = rdtsc_ordered();                                                                    \
    } while (0)

/* Runs n >= 1 iterations of scenario id; false if the probe does not implement it. */
static bool run(u32 id, u64 n, u64 *cycles, u64 *value)
{
    u64 i = 0, v = 0, t0 = 0, t1 = 0;

    switch (id) {
    case SCENARIO_NOOP:
        LOOP("", : [i] "+r"(i) : [n] "r"(n) : "memory");
        break;
    case SCENARIO_HYPERCALL:
        /* KVM's ABI: nr in RAX (0 is no hypercall), result in RAX; RBX/RCX/RDX/RSI are args. */
        if (intel)
            LOOP("xor %%eax, %%eax\n\tvmcall", : [i] "+r"(i), "+a"(v) : [n] "r"(n) : "rbx", "rcx", "rdx", "rsi", "memory");
        else
            LOOP("xor %%eax, %%eax\n\tvmmcall", : [i] "+r"(i), "+a"(v) : [n] "r"(n) : "rbx", "rcx", "rdx", "rsi", "memory");
        break;
    case SCENARIO_CPUID:
        LOOP("xor %%eax, %%eax\n\txor %%ecx, %%ecx\n\tcpuid", : [i] "+r"(i), "+a"(v) : [n] "r"(n) : "rbx", "rcx", "rdx", "memory");
        break;
    case SCENARIO_HLT:
        /* IF=0 throughout the runtime: without an in-kernel irqchip each hlt exits to user space. */
        LOOP("hlt", : [i] "+r"(i) : [n] "r"(n) : "memory");
        break;
    case SCENARIO_PIO_USER_OUT:
        LOOP("outl %%eax, %%dx", : [i] "+a"(i) : [n] "r"(n), "d"((u16)PROBE_PIO_USER_PORT) : "memory");
        break;
    case SCENARIO_PIO_UART_OUT:
        /* The 16550's scratch register: a real device exit, no console output. */
        LOOP("outb %%al, %%dx", : [i] "+a"(i) : [n] "r"(n), "d"((u16)(COM1_PORT + 7)) : "memory");
        break;
    case SCENARIO_PIO_USER_IN:
        LOOP("inl %%dx, %%eax", : [i] "+r"(i), "+a"(v) : [n] "r"(n), "d"((u16)PROBE_PIO_USER_PORT) : "memory");
        break;
    case SCENARIO_PIO_KERNEL_WILDCARD:
        LOOP("outl %%eax, %%dx", : [i] "+r"(i) : [n] "r"(n), "a"((u32)PROBE_WILDCARD_VALUE), "d"((u16)PROBE_PIO_WILDCARD_PORT) : "memory");
        break;
    case SCENARIO_PIO_KERNEL_DATAMATCH:
        LOOP("outl %%eax, %%dx", : [i] "+r"(i) : [n] "r"(n), "a"((u32)PROBE_DATAMATCH_VALUE), "d"((u16)PROBE_PIO_DATAMATCH_PORT) : "memory");
        break;
    case SCENARIO_PIO_KERNEL_PIC:
        /* 0x4d0 is the ELCR of KVM's in-kernel PIC: a PIO exit that never leaves the kernel. */
        LOOP("inb %%dx, %%al", : [i] "+r"(i), "+a"(v) : [n] "r"(n), "d"((u16)0x4d0) : "memory");
        break;
    case SCENARIO_MMIO_USER_READ:
        LOOP("movl (%[a]), %%eax", : [i] "+r"(i), "+a"(v) : [n] "r"(n), [a] "r"((u64)PROBE_MMIO_USER) : "memory");
        break;
    case SCENARIO_MMIO_USER_WRITE:
        LOOP("movl %k[i], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"((u64)PROBE_MMIO_USER) : "memory");
        break;
    case SCENARIO_MMIO_KERNEL_WILDCARD:
        LOOP("movl %k[val], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"((u64)PROBE_MMIO_WILDCARD), [val] "r"((u32)PROBE_WILDCARD_VALUE) : "memory");
        break;
    case SCENARIO_MMIO_KERNEL_DATAMATCH:
        LOOP("movl %k[val], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"((u64)PROBE_MMIO_DATAMATCH), [val] "r"((u32)PROBE_DATAMATCH_VALUE) : "memory");
        break;
    case SCENARIO_COALESCED_MMIO:
        LOOP("movl %k[i], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"((u64)PROBE_MMIO_COALESCED) : "memory");
        break;
    case SCENARIO_COALESCED_PIO:
        LOOP("outl %%eax, %%dx", : [i] "+a"(i) : [n] "r"(n), "d"((u16)PROBE_PIO_COALESCED_PORT) : "memory");
        break;
    case SCENARIO_RAM_READ:
        LOOP("movl (%[a]), %%eax", : [i] "+r"(i), "+a"(v) : [n] "r"(n), [a] "r"(&ram_word) : "memory");
        break;
    case SCENARIO_RO_MEMSLOT_READ:
        LOOP("movl (%[a]), %%eax", : [i] "+r"(i), "+a"(v) : [n] "r"(n), [a] "r"((u64)PROBE_RO_MEMSLOT) : "memory");
        break;
    case SCENARIO_RO_MEMSLOT_WRITE:
        LOOP("movl %k[i], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"((u64)PROBE_RO_MEMSLOT + 4) : "memory");
        break;
    case SCENARIO_VMM_FLOOR_PIO:
        LOOP("outl %%eax, %%dx", : [i] "+a"(i) : [n] "r"(n), "d"((u16)PROBE_PIO_FLOOR_PORT) : "memory");
        break;
    case SCENARIO_PCI_MMIO_NO_EVENTFD ... SCENARIO_PCI_PORTIO_PV_EVENTFD:
        /* One store or OUT of `data` with the header's width; PV: a 32-bit OUT to the absolute port. */
        if (pt.how == PT_MMIO && pt.width == 1)
            LOOP("movb %b[d], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"(pt.addr), [d] "q"(pt.data) : "memory");
        else if (pt.how == PT_MMIO && pt.width == 2)
            LOOP("movw %w[d], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"(pt.addr), [d] "r"(pt.data) : "memory");
        else if (pt.how == PT_MMIO)
            LOOP("movl %k[d], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"(pt.addr), [d] "r"(pt.data) : "memory");
        else if (pt.how == PT_PIO && pt.width == 1)
            LOOP("outb %%al, %%dx", : [i] "+r"(i) : [n] "r"(n), "a"(pt.data), "d"((u16)pt.addr) : "memory");
        else if (pt.how == PT_PIO && pt.width == 2)
            LOOP("outw %%ax, %%dx", : [i] "+r"(i) : [n] "r"(n), "a"(pt.data), "d"((u16)pt.addr) : "memory");
        else
            LOOP("outl %%eax, %%dx", : [i] "+r"(i) : [n] "r"(n), "a"(pt.data), "d"((u16)pt.addr) : "memory");
        v = hdr_readl(PCI_TESTDEV_HDR_COUNT);
        break;
    case SCENARIO_PCI_CONFIG_READ_CF8:
        /* Two exits: the address OUT and the data IN. */
        LOOP("movl %k[cf8], %%eax\n\tmovw %[ap], %%dx\n\toutl %%eax, %%dx\n\tmovw %[dp], %%dx\n\tinl %%dx, %%eax",
             : [i] "+r"(i), "+a"(v)
             : [n] "r"(n), [cf8] "r"(pci_cf8_addr((u32)pci.devfn, 0)), [ap] "i"((u16)PCI_CONFIG_ADDRESS_PORT),
               [dp] "i"((u16)PCI_CONFIG_DATA_PORT)
             : "rdx", "memory");
        break;
    case SCENARIO_PCI_CONFIG_READ_ECAM:
    case SCENARIO_PCI_CONFIG_READ_ECAM_RO:
        /* The same load for both: only the host's mapping of the window differs. */
        LOOP("movl (%[a]), %%eax", : [i] "+r"(i), "+a"(v) : [n] "r"(n), [a] "r"(ecam_addr((u32)pci.devfn, 0)) : "memory");
        break;
    case SCENARIO_PCI_SCAN_CF8:
        /* One iteration: devfn 0..255, vendor/device dword each; v = functions whose vendor is not 0xffff. */
        LOOP("xorl %k[f], %k[f]\n\tmovl %k[first], %%ecx\n"
             "2:\n\tmovl %%ecx, %%eax\n\tmovw %[ap], %%dx\n\toutl %%eax, %%dx\n\tmovw %[dp], %%dx\n\tinl %%dx, %%eax\n\t"
             "cmpw $0xffff, %%ax\n\tje 3f\n\tincl %k[f]\n"
             "3:\n\taddl $0x100, %%ecx\n\tcmpl %k[last], %%ecx\n\tjne 2b",
             : [i] "+r"(i), [f] "+r"(v)
             : [n] "r"(n), [first] "r"(pci_cf8_addr(0, 0)), [last] "r"(pci_cf8_addr(0, 0) + 0x10000),
               [ap] "i"((u16)PCI_CONFIG_ADDRESS_PORT), [dp] "i"((u16)PCI_CONFIG_DATA_PORT)
             : "rax", "rcx", "rdx", "memory");
        break;
    case SCENARIO_PCI_SCAN_ECAM:
    case SCENARIO_PCI_SCAN_ECAM_RO:
        LOOP("xorl %k[f], %k[f]\n\tmovq %[first], %%rcx\n"
             "2:\n\tmovl (%%rcx), %%eax\n\tcmpw $0xffff, %%ax\n\tje 3f\n\tincl %k[f]\n"
             "3:\n\taddq $0x1000, %%rcx\n\tcmpq %[last], %%rcx\n\tjne 2b",
             : [i] "+r"(i), [f] "+r"(v)
             : [n] "r"(n), [first] "r"(ecam_addr(0, 0)), [last] "r"(ecam_addr(0, 0) + 0x100000)
             : "rax", "rcx", "memory");
        break;
    case SCENARIO_DOORBELL_USER_MMIO:
        /* One ring = one 32-bit store; user-space doorbell: an MMIO exit to trapline per ring. */
        LOOP("movl %k[i], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"((u64)DOORBELL_MMIO_USER) : "memory");
        break;
    case SCENARIO_DOORBELL_IOEVENTFD_MMIO:
        /* The wildcard value, so a datamatch fallback (no any-length ioeventfd) matches too. */
        LOOP("movl %k[val], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"((u64)DOORBELL_MMIO_KERNEL), [val] "r"((u32)PROBE_WILDCARD_VALUE) : "memory");
        break;
    case SCENARIO_DOORBELL_IOEVENTFD_PIO:
        LOOP("outl %%eax, %%dx", : [i] "+r"(i) : [n] "r"(n), "a"((u32)PROBE_WILDCARD_VALUE), "d"((u16)DOORBELL_PIO_PORT) : "memory");
        break;
    case SCENARIO_DOORBELL_PV:
        LOOP("outl %%eax, %%dx", : [i] "+r"(i) : [n] "r"(n), "a"((u32)DOORBELL_PV_IDENTITY), "d"((u16)PV_DOORBELL_PORT) : "memory");
        break;
    case SCENARIO_IPI ... SCENARIO_EOI_X2APIC:
        ipi_run(id, n, cycles, value);
        return true;
    case SCENARIO_IRQFD:
        irqfd_run(n, cycles, value);
        return true;
    default:
        return false;
    }
    *cycles = t1 - t0;
    *value = v;
    return true;
}

static u32 status_of(u32 id, u64 value)
{
    switch (id) {
    case SCENARIO_PIO_USER_IN:
    case SCENARIO_MMIO_USER_READ:
    case SCENARIO_RO_MEMSLOT_READ:
    case SCENARIO_RAM_READ:
        return value == PROBE_READ_VALUE ? RESULT_OK : RESULT_BAD_VALUE;
    case SCENARIO_PCI_CONFIG_READ_CF8:
    case SCENARIO_PCI_CONFIG_READ_ECAM:
    case SCENARIO_PCI_CONFIG_READ_ECAM_RO:
        return value == PCI_TESTDEV_ID ? RESULT_OK : RESULT_BAD_VALUE;
    default:
        return RESULT_OK;
    }
}

static void report(const char *name, u32 id, u64 n, u64 cycles, u64 value, u32 status)
{
    ucall(UCALL_RESULT, name, id, n, cycles, value, status);
}

static void scenario(u32 id, const char *name, u64 goal, u64 min, u64 max, u64 warmup)
{
    u64 n = min, cycles = 0, value = 0;
    u32 status;

    /* irqfd's stamp arrays hold IRQFD_MAX injections per batch. */
    if (id == SCENARIO_IRQFD && max > IRQFD_MAX)
        max = IRQFD_MAX;
    if (n > max)
        n = max;
    /* A scenario the machine cannot run (no pci-testdev, no ECAM, ...) is skipped with that status. */
    u32 prepared = status = prepare(id, name);
    /* The warm-up is also the "is it implemented" test, so it runs at least once. */
    run_status = RESULT_OK;
    if (status == RESULT_OK && !run(id, warmup ? warmup : 1, &cycles, &value))
        status = RESULT_UNSUPPORTED;
    /* An interrupt scenario whose warm-up timed out would only time out again. */
    if (status == RESULT_OK)
        status = run_status;
    if (status != RESULT_OK) {
        report(name, id, 0, 0, 0, status);
        printf("TRAPLINE-RESULT %s iters=0 cycles=0 value=0x0 status=%u\n", name, status);
        cleanup(id, prepared);
        return;
    }
    for (;;) {
        ucall(UCALL_BEGIN, name, id);
        run_status = RESULT_OK;
        run(id, n, &cycles, &value);
        status = run_status != RESULT_OK ? run_status : status_of(id, value);
        report(name, id, n, cycles, value, status);
        if (cycles >= goal || n >= max || status != RESULT_OK)
            break;
        n = n * 2 < max ? n * 2 : max;
    }
    printf("TRAPLINE-RESULT %s iters=%lu cycles=%lu value=0x%lx status=%u\n", name, n, cycles, value, status);
    cleanup(id, prepared);
}

/* A token is an ABI id or an ABI name; anything else is reported as unsupported. */
static void select(const char *tok, size_t len, u64 goal, u64 min, u64 max, u64 warmup)
{
    char buf[UCALL_TEXT_LEN];
    const char *end;
    u64 num;

    if (len >= sizeof(buf))
        len = sizeof(buf) - 1;
    memcpy(buf, tok, len);
    buf[len] = '\0';

    bool numeric = parse_u64(buf, &end, &num) && !*end;
    for (size_t k = 0; k < ARRAY_SIZE(names); k++)
        if ((numeric && names[k].id == num) || (!numeric && !strcmp(names[k].name, buf))) {
            scenario(names[k].id, names[k].name, goal, min, max, warmup);
            return;
        }
    scenario(numeric ? (u32)num : 0xffffffffu, buf, goal, min, max, warmup);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    u64 goal = cmdline_u64("goal", 10000000);
    u64 min = cmdline_u64("min", 16);
    u64 max = cmdline_u64("max", 1ULL << 24);
    u64 warmup = cmdline_u64("warmup", 16);
    const char *list = cmdline_get("s");
    u32 r[4];

    if (min == 0)
        min = 1; /* the asm loops run at least once */
    if (max < min)
        max = min;
    cpuid(0, 0, r);
    intel = r[1] == 0x756e6547 && r[3] == 0x49656e69 && r[2] == 0x6c65746e; /* "GenuineIntel" */

    printf("probe: s=%s goal=%lu min=%lu max=%lu warmup=%lu\n", list ? list : "0", goal, min, max, warmup);
    irq_init();
    if (!list)
        list = "0";
    while (*list) {
        size_t len = 0;
        while (list[len] && list[len] != ',')
            len++;
        if (len)
            select(list, len, goal, min, max, warmup);
        list += len;
        if (*list == ',')
            list++;
    }
    finish(0);
}
