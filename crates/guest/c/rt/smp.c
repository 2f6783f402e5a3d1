/*
 * AP bring-up exactly as kvm-unit-tests does it (one INIT, one SIPI with
 * vector 0, both broadcast to all-but-self through the xAPIC ICR), so the
 * same VMM paths are exercised.
 */
#include "rt.h"

#define APIC_ID 0x20
#define APIC_SVR 0xf0
#define APIC_ICR_LO 0x300
#define APIC_ICR_HI 0x310
#define ICR_BUSY (1u << 12)
#define ICR_ALL_BUT_SELF (3u << 18)
#define ICR_ASSERT (1u << 14)
#define ICR_INIT (5u << 8)
#define ICR_STARTUP (6u << 8)

extern const char tramp_start[], tramp_end[]; /* cstart.S */

static u32 lapic_read(u32 reg) { return mmio_read32(LAPIC_BASE + reg); }
static void lapic_write(u32 reg, u32 v) { mmio_write32(LAPIC_BASE + reg, v); }

u32 lapic_id(void) { return lapic_read(APIC_ID) >> 24; }

static void icr_send(u32 lo)
{
    lapic_write(APIC_ICR_HI, 0);
    lapic_write(APIC_ICR_LO, lo);
    /* KVM delivers synchronously; the bound only guards against a broken model. */
    for (int i = 0; i < 1000 && (lapic_read(APIC_ICR_LO) & ICR_BUSY); i++)
        cpu_relax();
}

void smp_start_aps(void)
{
    /* GPA 0 is the SIPI vector-0 start address; inline asm because C may not store through NULL. */
    void *dst = 0;
    const void *src = tramp_start;
    u64 len = (u64)(tramp_end - tramp_start);
    asm volatile("cld; rep movsb" : "+D"(dst), "+S"(src), "+c"(len) : : "memory");

    percpu[0].apic_id = lapic_id();
    lapic_write(APIC_SVR, 0x1ff); /* software-enable, spurious vector 0xff */
    icr_send(ICR_ALL_BUT_SELF | ICR_ASSERT | ICR_INIT);
    icr_send(ICR_ALL_BUT_SELF | ICR_STARTUP | 0 /* vector 0 -> GPA 0 */);
}

__attribute__((weak)) void ap_main(u32 cpu, u32 apic_id)
{
    (void)cpu;
    (void)apic_id;
}

/* Called by cstart.S on the AP's own stack, in long mode, with its slot index. */
noreturn void ap_entry(u32 index)
{
    percpu_init(index);
    idt_load();
    percpu[index].apic_id = lapic_id();
    ap_main(index, percpu[index].apic_id);
    park();
}
