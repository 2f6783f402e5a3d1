/*
 * Machine layout facts shared by the C runtime and the assembly entry code,
 * so this file must stay preprocessor-only. Architectural x86 constants live
 * here; everything that is part of the guest/host contract comes from the
 * generated trapline_abi.h instead.
 */
#ifndef TRAPLINE_LAYOUT_H
#define TRAPLINE_LAYOUT_H

/* Per-CPU areas and stacks are static arrays, one per vCPU trapline can
 * give a machine (MAX_VCPUS in trapline_abi.h; rt.h checks they agree). */
#define MAX_CPUS 64
#define STACK_SHIFT 14
#define STACK_SIZE (1 << STACK_SHIFT)

/* Selectors of the runtime's own GDT (cstart.S). */
#define SEL_CODE64 0x08
#define SEL_DATA 0x10
#define SEL_CODE32 0x18

/* KVM's in-kernel xAPIC and IOAPIC (never remapped by these payloads):
 * LAPIC_BASE and IOAPIC_BASE come from trapline_abi.h, which C includes;
 * this file is also read by the assembler, which cannot take its ULL
 * suffixes, so MAX_CPUS above is repeated here and checked in rt.h. */

/* xAPIC registers (offsets from LAPIC_BASE) and ICR fields. */
#define APIC_ID 0x20
#define APIC_LVR 0x30
#define APIC_TPR 0x80
#define APIC_EOI 0xb0
#define APIC_SVR 0xf0
#define APIC_ICR_LO 0x300
#define APIC_ICR_HI 0x310
#define ICR_BUSY (1u << 12)
#define ICR_ALL_BUT_SELF (3u << 18)
#define ICR_ASSERT (1u << 14)
#define ICR_FIXED (0u << 8)
#define ICR_INIT (5u << 8)
#define ICR_STARTUP (6u << 8)

#define MSR_APIC_BASE 0x1b
#define APIC_BASE_BSP (1u << 8)
#define APIC_BASE_EXTD (1u << 10)
#define APIC_BASE_EN (1u << 11)
#define MSR_EFER 0xc0000080
#define MSR_GS_BASE 0xc0000101

#endif
