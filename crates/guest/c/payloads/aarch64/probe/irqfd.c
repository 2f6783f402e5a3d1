/*
 * The arm64 probe's irqfd scenario (ROUTINE_IRQFD): the host injects
 * through an irqfd on SPI VIRT_IRQFD_SPI (edge, routed to the boot CPU);
 * the guest stamps each interrupt with the virtual counter and estimates
 * the offset between its counter and the host's (KVM gives each VM its
 * own CNTVOFF) with Clock ucalls, as the x86 probe does with the TSC.
 */
#include "../../common/probe/probe.h"

#define CLOCK_SAMPLES 16

/* The counters the host polls (alternating per run, see the x86 probe), the stamps, the offset. */
static struct {
    volatile u64 n;
} __attribute__((aligned(64))) irqfd_acks[2];
static volatile u64 *irqfd_count = &irqfd_acks[0].n;
static u32 irqfd_runs;
static u64 irqfd_host_stamp[IRQFD_MAX];
static u64 irqfd_guest_stamp[IRQFD_MAX];
static u64 clock_offset;     /* guest counter - host counter (mod 2^64) */
static u64 clock_offset_err; /* half the shortest Clock round trip */
static volatile u64 clock_stamp;
static struct ucall clock_msg;

/* The SPI's handler (from ipi.c's probe_irq, which acknowledges and EOIs): stamp and count. */
void irqfd_irq(void)
{
    u64 t = counter_now();
    volatile u64 *count = irqfd_count;
    u64 c = *count;
    if (c < IRQFD_MAX)
        irqfd_guest_stamp[c] = t;
    __atomic_store_n(count, c + 1, __ATOMIC_RELEASE);
}

void irqfd_init(void) {}

/* Cristian's method over the ucall page's MMIO store (see the x86 probe's irqfd.c). */
static bool clock_estimate(void)
{
    u64 best = ~0ULL;

    clock_msg.magic = UCALL_MAGIC;
    clock_msg.kind = UCALL_CLOCK;
    clock_msg.args[0] = (u64)(uintptr_t)&clock_stamp;
    memcpy(clock_msg.text, "clock", 6);
    for (int k = 0; k < CLOCK_SAMPLES; k++) {
        clock_stamp = 0;
        io_wmb();
        u64 t1 = counter_now();
        mmio_write32(VIRT_UCALL_MMIO, (u32)(uintptr_t)&clock_msg);
        u64 t2 = counter_now();
        u64 h = clock_stamp;
        if (!h)
            return false; /* no host answers Clock */
        if (t2 - t1 < best) {
            best = t2 - t1;
            clock_offset = t1 + (t2 - t1) / 2 - h;
        }
    }
    clock_offset_err = best / 2;
    return true;
}

u32 irqfd_prepare(const char *name)
{
    if (!clock_estimate()) {
        printf("probe: %s: the host does not answer Clock ucalls\n", name);
        return RESULT_UNSUPPORTED;
    }
    printf("probe: %s: guest-host counter offset known to +-%lu ticks\n", name, clock_offset_err);
    gic_spi_route_edge(GIC_SPI_INTID_BASE + VIRT_IRQFD_SPI, this_cpu()->mpidr);
    return RESULT_OK;
}

void irqfd_cleanup(void) {}

/* n host injections, IRQs on while waiting; ticks = sum of (guest stamp - host stamp - offset). */
void irqfd_run(u64 n, u64 *cycles, u64 *value)
{
    int64_t sum = 0;

    for (u64 done = 0; done < n;) {
        u64 k = n - done < IRQFD_MAX ? n - done : IRQFD_MAX;
        volatile u64 *count = &irqfd_acks[irqfd_runs++ & 1].n;
        *count = 0;
        irqfd_count = count;
        ucall(UCALL_IRQFD_START, "irqfd", k, (u64)(uintptr_t)irqfd_host_stamp, (u64)(uintptr_t)count);
        asm volatile("msr daifclr, #2" : : : "memory");
        u64 seen = 0, t0 = counter_now();
        for (u64 c; (c = *count) < k; cpu_relax()) {
            if (c != seen) {
                seen = c;
                t0 = counter_now();
            } else if (counter_now() - t0 > WAIT_TICKS) {
                break;
            }
        }
        asm volatile("msr daifset, #2" : : : "memory");
        barrier();
        if (*count != k) {
            printf("probe: irqfd: %lu of %lu injections arrived\n", *count, k);
            run_status = RESULT_BAD_VALUE;
            break;
        }
        for (u64 i = 0; i < k; i++)
            sum += (int64_t)(irqfd_guest_stamp[i] - irqfd_host_stamp[i] - clock_offset);
        done += k;
    }
    *cycles = sum > 0 ? (u64)sum : 0;
    *value = clock_offset_err;
}
