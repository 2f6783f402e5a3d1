/* The probe's irqfd scenario (ROUTINE_IRQFD): the host injects through an irqfd bound to IOAPIC pin IRQFD_GSI; the guest stamps each interrupt and estimates the guest-host TSC offset with Clock ucalls. */
#include "../../common/probe/probe.h"

#define CLOCK_SAMPLES 16

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

DEFINE_IRQ_ENTRY(irqfd_entry, irqfd_handler);

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

/* The interrupt gate (called once at start-up, before any scenario). */
void irqfd_init(void) { idt_set(IRQFD_VECTOR, irqfd_entry); }

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
u32 irqfd_prepare(const char *name)
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

void irqfd_cleanup(void) { ioapic_write(IOAPIC_REDTBL(IRQFD_GSI), IOAPIC_MASKED | IRQFD_VECTOR); }

/*
 * n host injections: IrqfdStart(k, stamps, counter), then with IF=1 wait
 * until the handler counted k (bounded: WAIT_CYCLES without progress).
 * cycles = sum of (guest handler TSC - host stamp - offset), value = the
 * offset's uncertainty. Only the warm-up can exceed IRQFD_MAX (scenario()
 * caps the batches); it is split into several runs.
 */
void irqfd_run(u64 n, u64 *cycles, u64 *value)
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
