/*
 * Entry of every arm64 payload, for the boot CPU (_start: EL1, MMU off,
 * x0 = the device tree's address, as arm64 Linux and kvm-unit-tests are
 * entered) and for secondaries (secondary_entry: PSCI CPU_ON's entry point,
 * x0 = the context id, here the CPU index).
 *
 * Nothing touches memory before the MMU and caches are on: with the MMU off
 * data accesses are non-cacheable, and mixing them with the cacheable view
 * the VMM wrote the image through (and the one C code will use) could read
 * stale lines. So the page table is static data, constants are built in
 * registers, and the BSS (with the stacks) is cleared only afterwards.
 */
#include "layout.h"

/* A 32-bit constant into a register without a literal pool load. */
.macro mov32 reg, value
    movz \reg, #((\value) & 0xffff)
    movk \reg, #(((\value) >> 16) & 0xffff), lsl #16
.endm

    .section .init, "ax"
    .global _start
_start:
    msr daifset, #0xf
    mov x19, x0                 /* device tree */
    mov x20, #0                 /* CPU index */
    b common_entry

    .global secondary_entry
secondary_entry:
    msr daifset, #0xf
    mov x19, #0
    mov x20, x0

common_entry:
    /* The runtime is written for EL1 (a KVM guest's level). */
    mrs x1, CurrentEL
    cmp x1, #CURRENT_EL1
    b.ne wrong_el

    msr tpidr_el1, xzr          /* no per-CPU area yet (this_cpu() == NULL) */
    adrp x1, exc_vectors
    add x1, x1, :lo12:exc_vectors
    msr vbar_el1, x1
    bl mmu_enable

    /* The boot CPU clears the BSS; secondaries start after it did. */
    cbnz x20, 2f
    adrp x1, __bss_start
    add x1, x1, :lo12:__bss_start
    adrp x2, __bss_end
    add x2, x2, :lo12:__bss_end
1:  cmp x1, x2
    b.hs 2f
    str xzr, [x1], #8
    b 1b

    /* Stack: the top of cpu_stacks[index]. */
2:  adrp x1, cpu_stacks
    add x1, x1, :lo12:cpu_stacks
    add x2, x20, #1
    add x1, x1, x2, lsl #STACK_SHIFT
    mov sp, x1
    mov x29, #0
    mov x0, x20
    mov x1, x19
    bl rt_start
    b park

wrong_el:
    wfe
    b wrong_el

/* Identity map from l1_table, MAIR/TCR as layout.h says, then M, C and I on. */
mmu_enable:
    mov32 x1, MAIR_VALUE
    msr mair_el1, x1
    mov32 x1, (TCR_T0SZ | TCR_IRGN0_WBWA | TCR_ORGN0_WBWA | TCR_SH0_INNER | TCR_EPD1)
    mrs x2, id_aa64mmfr0_el1
    and x2, x2, #0x7
    orr x1, x1, x2, lsl #TCR_IPS_SHIFT
    msr tcr_el1, x1
    adrp x1, l1_table
    msr ttbr0_el1, x1
    isb
    tlbi vmalle1
    ic iallu
    dsb nsh
    isb
    mrs x1, sctlr_el1
    orr x1, x1, #SCTLR_M
    orr x1, x1, #SCTLR_C
    orr x1, x1, #SCTLR_I
    bic x1, x1, #SCTLR_A
    msr sctlr_el1, x1
    isb
    ret

/* Level 1 table: one 1 GiB block per entry (see layout.h). */
    .section .data.pgtable, "aw"
    .balign 4096
l1_table:
    .set block, 0
    .rept IO_BLOCKS
    .quad (block << BLOCK_SHIFT) | PTE_PXN_UXN | PTE_AF | PTE_ATTR(MAIR_DEVICE_INDEX) | PTE_BLOCK
    .set block, block + 1
    .endr
    .rept MAPPED_BLOCKS - IO_BLOCKS
    .quad (block << BLOCK_SHIFT) | PTE_AF | PTE_SH_INNER | PTE_ATTR(MAIR_NORMAL_INDEX) | PTE_BLOCK
    .set block, block + 1
    .endr
    .fill 512 - MAPPED_BLOCKS, 8, 0
