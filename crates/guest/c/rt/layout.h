/*
 * Machine layout facts shared by the C runtime and the assembly entry code,
 * so this file must stay preprocessor-only. Architectural x86 constants live
 * here; everything that is part of the guest/host contract comes from the
 * generated trapline_abi.h instead.
 */
#ifndef TRAPLINE_LAYOUT_H
#define TRAPLINE_LAYOUT_H

/* Per-CPU areas and stacks are static arrays; 64 covers any test machine. */
#define MAX_CPUS 64
#define STACK_SHIFT 14
#define STACK_SIZE (1 << STACK_SHIFT)

/* Selectors of the runtime's own GDT (cstart.S). */
#define SEL_CODE64 0x08
#define SEL_DATA 0x10
#define SEL_CODE32 0x18

/* KVM's in-kernel xAPIC and IOAPIC; never remapped by these payloads. */
#define LAPIC_BASE 0xfee00000
#define IOAPIC_BASE 0xfec00000

#define MSR_EFER 0xc0000080
#define MSR_GS_BASE 0xc0000101

#endif
