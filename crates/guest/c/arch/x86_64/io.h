/*
 * Port I/O, MMIO, TSC, CPUID and MSR primitives. Every accessor is a single
 * instruction with a "memory" clobber, so the compiler neither merges,
 * elides nor reorders them around ordinary memory traffic (the ucall message
 * must be in memory before the OUT that announces it).
 */
#ifndef TRAPLINE_IO_H
#define TRAPLINE_IO_H

#include <stdint.h>

static inline void outb(uint16_t port, uint8_t v) { asm volatile("outb %0, %1" : : "a"(v), "Nd"(port) : "memory"); }
static inline void outw(uint16_t port, uint16_t v) { asm volatile("outw %0, %1" : : "a"(v), "Nd"(port) : "memory"); }
static inline void outl(uint16_t port, uint32_t v) { asm volatile("outl %0, %1" : : "a"(v), "Nd"(port) : "memory"); }

static inline uint8_t inb(uint16_t port)
{
    uint8_t v;
    asm volatile("inb %1, %0" : "=a"(v) : "Nd"(port) : "memory");
    return v;
}

static inline uint16_t inw(uint16_t port)
{
    uint16_t v;
    asm volatile("inw %1, %0" : "=a"(v) : "Nd"(port) : "memory");
    return v;
}

static inline uint32_t inl(uint16_t port)
{
    uint32_t v;
    asm volatile("inl %1, %0" : "=a"(v) : "Nd"(port) : "memory");
    return v;
}

/* Explicit mov instructions: a volatile C dereference could legally be split or widened. */
static inline uint8_t mmio_read8(uint64_t a)
{
    uint8_t v;
    asm volatile("movb (%1), %0" : "=q"(v) : "r"(a) : "memory");
    return v;
}

static inline uint16_t mmio_read16(uint64_t a)
{
    uint16_t v;
    asm volatile("movw (%1), %0" : "=r"(v) : "r"(a) : "memory");
    return v;
}

static inline uint32_t mmio_read32(uint64_t a)
{
    uint32_t v;
    asm volatile("movl (%1), %0" : "=r"(v) : "r"(a) : "memory");
    return v;
}

static inline uint64_t mmio_read64(uint64_t a)
{
    uint64_t v;
    asm volatile("movq (%1), %0" : "=r"(v) : "r"(a) : "memory");
    return v;
}

static inline void mmio_write8(uint64_t a, uint8_t v) { asm volatile("movb %0, (%1)" : : "q"(v), "r"(a) : "memory"); }
static inline void mmio_write16(uint64_t a, uint16_t v) { asm volatile("movw %0, (%1)" : : "r"(v), "r"(a) : "memory"); }
static inline void mmio_write32(uint64_t a, uint32_t v) { asm volatile("movl %0, (%1)" : : "r"(v), "r"(a) : "memory"); }
static inline void mmio_write64(uint64_t a, uint64_t v) { asm volatile("movq %0, (%1)" : : "r"(v), "r"(a) : "memory"); }

#define readb mmio_read8
#define readw mmio_read16
#define readl mmio_read32
#define readq mmio_read64
#define writeb mmio_write8
#define writew mmio_write16
#define writel mmio_write32
#define writeq mmio_write64

/* lfence keeps RDTSC from being hoisted above earlier work (kvm-unit-tests does the same). */
static inline uint64_t rdtsc_ordered(void)
{
    uint32_t lo, hi;
    asm volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}

/* The clock both architectures time with (arm64: the virtual counter). */
static inline uint64_t clock_now(void) { return rdtsc_ordered(); }

/* No fence and no memory clobber: for deadline polls, where a reading a little early or late does not matter. */
static inline uint64_t rdtsc_plain(void)
{
    uint32_t lo, hi;
    asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

static inline void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    asm volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}

static inline uint64_t rdmsr(uint32_t msr)
{
    uint32_t lo, hi;
    asm volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
    asm volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
}

/*
 * Ordering for memory a device reads or writes (virtqueues), under the
 * names arm64 needs them by: before publishing a ring index (dma_mb),
 * before the MMIO store that notifies (io_wmb), after reading the
 * device's index (dma_rmb). x86 keeps stores in order anyway; the fences
 * are the ones vblk has always issued.
 */
static inline void dma_mb(void) { asm volatile("mfence" : : : "memory"); }
static inline void io_wmb(void) { asm volatile("mfence" : : : "memory"); }
static inline void dma_rmb(void) { asm volatile("" : : : "memory"); }

static inline void cpu_relax(void) { asm volatile("pause" : : : "memory"); }

#endif
