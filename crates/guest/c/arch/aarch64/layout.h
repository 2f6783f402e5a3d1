/*
 * Facts shared by the arm64 runtime's C and assembly, so this file must stay
 * preprocessor-only (no ULL suffixes: the assembler reads it too).
 * Architectural constants live here; the machine's map comes from the
 * generated trapline_abi.h.
 */
#ifndef TRAPLINE_AARCH64_LAYOUT_H
#define TRAPLINE_AARCH64_LAYOUT_H

/* Per-CPU areas and stacks: one per vCPU trapline can give a machine
 * (MAX_VCPUS in trapline_abi.h; rt.h checks they agree). */
#define MAX_CPUS 64
#define STACK_SHIFT 14
#define STACK_SIZE (1 << STACK_SHIFT)

/* CurrentEL value at EL1. */
#define CURRENT_EL1 (1 << 2)

/* SCTLR_EL1: MMU, alignment check, data and instruction caches. */
#define SCTLR_M (1 << 0)
#define SCTLR_A (1 << 1)
#define SCTLR_C (1 << 2)
#define SCTLR_I (1 << 12)

/* MAIR_EL1: attribute 0 = Device-nGnRnE, attribute 1 = Normal write-back
 * (inner and outer, read- and write-allocate). */
#define MAIR_DEVICE_INDEX 0
#define MAIR_NORMAL_INDEX 1
#define MAIR_VALUE 0xff00

/* TCR_EL1 for TTBR0 only: 39-bit VAs (T0SZ 25, so the walk starts at level
 * 1 with 1 GiB blocks), 4 KiB granule, inner-shareable write-back walks,
 * TTBR1 walks disabled (EPD1). IPS (bits 34:32) is set at run time from
 * ID_AA64MMFR0_EL1.PARange, which has the same encoding. */
#define TCR_T0SZ 25
#define TCR_IRGN0_WBWA (1 << 8)
#define TCR_ORGN0_WBWA (1 << 10)
#define TCR_SH0_INNER (3 << 12)
#define TCR_EPD1 (1 << 23)
#define TCR_IPS_SHIFT 32

/* Level 1 block descriptors (1 GiB). */
#define PTE_BLOCK 0x1
#define PTE_ATTR(index) ((index) << 2)
#define PTE_SH_INNER (3 << 8)
#define PTE_AF (1 << 10)
#define PTE_PXN_UXN (3 << 53)
#define BLOCK_SHIFT 30
/* The identity map: [0, 1 GiB) is I/O (Device-nGnRnE, never executed);
 * [1 GiB, 4 GiB) is RAM (Normal). The payloads live below 4 GiB (a ucall
 * carries a 32-bit address); everything above is left unmapped. */
#define IO_BLOCKS 1
#define MAPPED_BLOCKS 4

/* The exception frame exc.S builds: x0-x30, ELR_EL1, SPSR_EL1, padding to 16 bytes. */
#define FRAME_ELR (31 * 8)
#define FRAME_SPSR (32 * 8)
#define FRAME_SIZE (34 * 8)

/* Exception classes (ESR_EL1.EC) the runtime names. */
#define EC_DABT_CUR 0x25

#endif
