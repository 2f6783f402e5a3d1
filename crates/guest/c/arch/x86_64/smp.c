/*
 * AP bring-up exactly as kvm-unit-tests does it (one INIT, one SIPI with
 * vector 0, both broadcast to all-but-self through the xAPIC ICR), so the
 * same VMM paths are exercised.
 */
#include "rt.h"

extern const char tramp_start[], tramp_end[]; /* cstart.S */

u32 lapic_read(u32 reg) { return mmio_read32(LAPIC_BASE + reg); }
void lapic_write(u32 reg, u32 v) { mmio_write32(LAPIC_BASE + reg, v); }

u32 ioapic_read(u32 reg)
{
    mmio_write32(IOAPIC_BASE + IOAPIC_REGSEL, reg);
    return mmio_read32(IOAPIC_BASE + IOAPIC_WIN);
}

void ioapic_write(u32 reg, u32 v)
{
    mmio_write32(IOAPIC_BASE + IOAPIC_REGSEL, reg);
    mmio_write32(IOAPIC_BASE + IOAPIC_WIN, v);
}

u32 lapic_id(void) { return lapic_read(APIC_ID) >> 24; }

/* Software-enable this CPU's xAPIC (spurious vector 0xff): needed before it accepts fixed interrupts. */
void lapic_enable(void) { lapic_write(APIC_SVR, 0x1ff); }

void lapic_eoi(void) { lapic_write(APIC_EOI, 0); }

static void icr_send_to(u32 dest, u32 lo)
{
    lapic_write(APIC_ICR_HI, dest << 24);
    lapic_write(APIC_ICR_LO, lo);
    /* KVM delivers synchronously; the bound only guards against a broken model. */
    for (int i = 0; i < 1000 && (lapic_read(APIC_ICR_LO) & ICR_BUSY); i++)
        cpu_relax();
}

static void icr_send(u32 lo) { icr_send_to(0, lo); }

/* A fixed, edge, physical-destination IPI with `vector` to the CPU whose APIC ID is apic_id. */
void lapic_send_ipi(u32 apic_id, u8 vector) { icr_send_to(apic_id, ICR_ASSERT | ICR_FIXED | vector); }

void smp_start_aps(void)
{
    /* GPA 0 is the SIPI vector-0 start address; inline asm because C may not store through NULL. */
    void *dst = 0;
    const void *src = tramp_start;
    u64 len = (u64)(tramp_end - tramp_start);
    asm volatile("cld; rep movsb" : "+D"(dst), "+S"(src), "+c"(len) : : "memory");

    percpu[0].apic_id = lapic_id();
    lapic_enable();
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
