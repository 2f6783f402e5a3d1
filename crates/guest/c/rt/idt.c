/*
 * Exceptions are always bugs in a payload (or the VMM under test): report
 * the vector and RIP on COM1 and as an ASSERT ucall, then exit(63) like a
 * failed kvm-unit-tests assertion.
 */
#include "rt.h"

struct idt_gate {
    u16 off_lo;
    u16 sel;
    u8 ist;
    u8 type;
    u16 off_mid;
    u32 off_hi;
    u32 reserved;
} __attribute__((packed));

struct exc_frame {
    u64 vector, error, rip, cs, rflags, rsp, ss;
};

extern const u64 exc_stubs[32]; /* exc.S */
static struct idt_gate idt[32] __attribute__((aligned(16)));

void idt_load(void)
{
    struct {
        u16 limit;
        u64 base;
    } __attribute__((packed)) d = { sizeof(idt) - 1, (u64)(uintptr_t)idt };
    asm volatile("lidt %0" : : "m"(d));
}

void idt_init(void)
{
    u16 cs;
    /* The current CS, not a constant: hello64 runs on the VMM's GDT, not ours. */
    asm volatile("mov %%cs, %0" : "=r"(cs));
    for (int v = 0; v < 32; v++) {
        u64 h = exc_stubs[v];
        idt[v] = (struct idt_gate){
            .off_lo = (u16)h,
            .sel = cs,
            .type = 0x8e, /* present, 64-bit interrupt gate: IF stays 0 */
            .off_mid = (u16)(h >> 16),
            .off_hi = (u32)(h >> 32),
        };
    }
    idt_load();
}

noreturn void exception_handler(struct exc_frame *f)
{
    u64 cr2;
    asm volatile("mov %%cr2, %0" : "=r"(cr2));
    console_force_unlock();
    printf("unhandled exception %lu at rip 0x%lx (error 0x%lx cr2 0x%lx cpu %u)\n", f->vector, f->rip,
           f->error, cr2, this_cpu()->index);
    ucall(UCALL_ASSERT, "unhandled exception", __LINE__, f->vector, f->rip, f->error, cr2);
    exit(63);
}
