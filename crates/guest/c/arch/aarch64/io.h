/*
 * MMIO, system register and counter primitives. Every MMIO accessor is a
 * single plain load or store (no writeback, no pair), so KVM can decode it
 * from the syndrome and forward it to the VMM; each has a "memory" clobber
 * so the compiler neither merges, elides nor reorders them.
 */
#ifndef TRAPLINE_AARCH64_IO_H
#define TRAPLINE_AARCH64_IO_H

#include <stdint.h>

static inline uint8_t mmio_read8(uint64_t a)
{
    uint8_t v;
    asm volatile("ldrb %w0, [%1]" : "=r"(v) : "r"(a) : "memory");
    return v;
}

static inline uint16_t mmio_read16(uint64_t a)
{
    uint16_t v;
    asm volatile("ldrh %w0, [%1]" : "=r"(v) : "r"(a) : "memory");
    return v;
}

static inline uint32_t mmio_read32(uint64_t a)
{
    uint32_t v;
    asm volatile("ldr %w0, [%1]" : "=r"(v) : "r"(a) : "memory");
    return v;
}

static inline uint64_t mmio_read64(uint64_t a)
{
    uint64_t v;
    asm volatile("ldr %0, [%1]" : "=r"(v) : "r"(a) : "memory");
    return v;
}

static inline void mmio_write8(uint64_t a, uint8_t v) { asm volatile("strb %w0, [%1]" : : "r"(v), "r"(a) : "memory"); }
static inline void mmio_write16(uint64_t a, uint16_t v) { asm volatile("strh %w0, [%1]" : : "r"(v), "r"(a) : "memory"); }
static inline void mmio_write32(uint64_t a, uint32_t v) { asm volatile("str %w0, [%1]" : : "r"(v), "r"(a) : "memory"); }
static inline void mmio_write64(uint64_t a, uint64_t v) { asm volatile("str %0, [%1]" : : "r"(v), "r"(a) : "memory"); }

/* Orders earlier normal-memory stores before a following MMIO store (Linux's __iowmb). */
static inline void io_wmb(void) { asm volatile("dmb oshst" : : : "memory"); }
/* Orders memory a device shares (virtqueues): before publishing a ring index, after reading the device's. */
static inline void dma_mb(void) { asm volatile("dmb ish" : : : "memory"); }
static inline void dma_rmb(void) { asm volatile("dmb ish" : : : "memory"); }

#define read_sysreg(r)                                       \
    ({                                                       \
        uint64_t __v;                                        \
        asm volatile("mrs %0, " #r : "=r"(__v) : : "memory"); \
        __v;                                                 \
    })

#define write_sysreg(r, v) asm volatile("msr " #r ", %0" : : "r"((uint64_t)(v)) : "memory")

static inline void isb(void) { asm volatile("isb" : : : "memory"); }
static inline void cpu_relax(void) { asm volatile("yield" : : : "memory"); }

/* The virtual counter (CNTVCT_EL0), after an ISB so it is not read early. */
static inline uint64_t counter_now(void)
{
    isb();
    return read_sysreg(cntvct_el0);
}

/* The clock both architectures time with (x86: the TSC). */
static inline uint64_t clock_now(void) { return counter_now(); }

/* Counter ticks per second. */
static inline uint64_t counter_freq(void) { return read_sysreg(cntfrq_el0); }

#endif
