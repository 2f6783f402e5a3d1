/*
 * The runtime every payload links against: console, ucall, exit, command
 * line, per-CPU data and SMP bring-up. Payloads define main() (and, for SMP,
 * ap_main()); the runtime's entry code calls them with IF=0 on an identity
 * mapped 0-4 GiB address space.
 */
#ifndef TRAPLINE_RT_H
#define TRAPLINE_RT_H

#include "runtime.h"
#include "layout.h"

_Static_assert(MAX_CPUS == MAX_VCPUS, "layout.h MAX_CPUS must equal trapline-abi MAX_VCPUS");
#include "io.h"

/* The APs' entry point, weak in the runtime (main() is in runtime.h). */
void ap_main(u32 cpu, u32 apic_id);

/* ---- Multiboot info and command line ---- */
struct mbi {
    u32 flags;
    u32 mem_lower;
    u32 mem_upper;
    u32 boot_device;
    u32 cmdline;
    u32 mods_count;
    u32 mods_addr;
};

extern u32 mb_info_addr; /* EBX/RBX at entry, stored by the entry code */
const struct mbi *mbi(void);
u64 mem_top(void);
/* The Multiboot command line into lib.h's argv (rt_argv, cmdline_get). */
void cmdline_init(void);

/* ---- per-CPU data, reached through GS ---- */
struct percpu {
    struct percpu *self; /* must stay first: this_cpu() loads %gs:0 */
    u32 index;
    u32 apic_id;
    struct ucall ucall; /* one per CPU so vCPUs can ucall concurrently */
} __attribute__((aligned(64)));

extern struct percpu percpu[MAX_CPUS];
void percpu_init(u32 index);

static inline struct percpu *this_cpu(void)
{
    struct percpu *c;
    asm volatile("mov %%gs:0, %0" : "=r"(c));
    return c;
}

/* The ucall doorbell (lib/ucall.c): OUT the message's address to UCALL_PORT. */
static inline void ucall_send(struct percpu *c, struct ucall *u)
{
    (void)c;
    outl(UCALL_PORT, (u32)(uintptr_t)u);
}

/* ---- interrupts ---- */
void idt_init(void);
void idt_load(void);
void idt_set(unsigned vector, void (*entry)(void)); /* vectors 32..255 */

/*
 * DEFINE_IRQ_ENTRY(name, handler) defines `void name(void)`, an interrupt
 * entry for idt_set(): it saves the caller-saved registers, calls
 * `void handler(void)` (which must not be static: only asm references it)
 * and returns with iretq. The CPU's 16-byte alignment of RSP on entry plus
 * 5 frame words and 9 pushes leave the stack aligned for the call.
 */
#define DEFINE_IRQ_ENTRY(name, handler)                                                          \
    void name(void);                                                                             \
    void handler(void);                                                                          \
    asm(".pushsection .text\n\t.globl " #name "\n" #name ":\n\t"                                   \
        "push %rax\n\tpush %rcx\n\tpush %rdx\n\tpush %rsi\n\tpush %rdi\n\t"                       \
        "push %r8\n\tpush %r9\n\tpush %r10\n\tpush %r11\n\t"                                      \
        "cld\n\tcall " #handler "\n\t"                                                            \
        "pop %r11\n\tpop %r10\n\tpop %r9\n\tpop %r8\n\t"                                          \
        "pop %rdi\n\tpop %rsi\n\tpop %rdx\n\tpop %rcx\n\tpop %rax\n\t"                           \
        "iretq\n\t.popsection")

/* ---- xAPIC and SMP (flat payloads only) ---- */
u32 lapic_read(u32 reg);
void lapic_write(u32 reg, u32 v);
u32 lapic_id(void);
void lapic_enable(void);
void lapic_eoi(void);
void lapic_send_ipi(u32 apic_id, u8 vector);
void smp_start_aps(void);

/* ---- IOAPIC (indirect: select a register, then its window) ---- */
#define IOAPIC_REGSEL 0x00
#define IOAPIC_WIN 0x10
#define IOAPIC_VER 0x01
#define IOAPIC_REDTBL(pin) (0x10 + 2 * (pin))
#define IOAPIC_MASKED (1u << 16)
u32 ioapic_read(u32 reg);
void ioapic_write(u32 reg, u32 v);

/* ---- QEMU fw_cfg, legacy port interface (flat payloads only) ---- */
#define FW_CFG_PORT_SEL 0x510  /* 16-bit OUT of the key */
#define FW_CFG_PORT_DATA 0x511 /* 8-bit INs, little-endian */
#define FW_CFG_SIGNATURE 0x00
#define FW_CFG_ID 0x01
#define FW_CFG_RAM_SIZE 0x03
#define FW_CFG_NB_CPUS 0x05
#define FW_CFG_MAX_RAM 0x11 /* kvm-unit-tests' name; QEMU's FW_CFG_KERNEL_DATA */
void fwcfg_read_bytes(u16 key, void *buf, unsigned len);
u64 fwcfg_read(u16 key, unsigned len); /* len <= 8 */

/* ---- ACPI (flat payloads only) ---- */
#define ACPI_SIG(a, b, c, d) ((u32)(a) | (u32)(b) << 8 | (u32)(c) << 16 | (u32)(d) << 24)
#define ACPI_FADT_PM_TMR_BLK 76 /* u32 offset in the FACP */
struct acpi_header {
    u32 signature;
    u32 length;
    u8 revision;
    u8 checksum;
    char oem_id[6];
    char oem_table_id[8];
    u32 oem_revision;
    u32 creator_id;
    u32 creator_revision;
} __attribute__((packed));
/* The RSDP as kvm-unit-tests finds it: "RSD PTR " at 16-byte steps in 0xE0000-0xFFFFF. */
const u8 *acpi_find_rsdp(void);
/* The first table with `sig` in the XSDT (if the RSDP is rev >= 2 and the XSDT is valid) or else the RSDT. */
const struct acpi_header *acpi_find_table(u32 sig);
u8 acpi_sum(const void *p, u32 len); /* byte sum; 0 for a valid checksum */

/* ---- PCI configuration mechanism #1, bus 0 (flat payloads only) ---- */
/*
 * As kvm-unit-tests: OUT 0x80000000 | devfn << 8 | reg (bits 1:0 included)
 * to 0xCF8, then one access of the given width at 0xCFC.
 */
#include "pci_regs.h"
static inline u32 pci_cf8_addr(u32 devfn, u32 reg) { return 0x80000000u | (devfn & 0xff) << 8 | (reg & 0xff); }
u8 pci_readb(u32 devfn, u32 reg);
u16 pci_readw(u32 devfn, u32 reg);
u32 pci_readl(u32 devfn, u32 reg);
void pci_writel(u32 devfn, u32 reg, u32 v);
int pci_find_dev(u16 vendor, u16 device); /* devfn, or -1 */


#endif
