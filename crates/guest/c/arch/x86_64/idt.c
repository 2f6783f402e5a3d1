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
/* All 256 vectors, so payloads can install interrupt handlers with idt_set(). */
static struct idt_gate idt[256] __attribute__((aligned(16)));
static u16 idt_cs;

static void set_gate(unsigned vec, u64 h)
{
    idt[vec] = (struct idt_gate){
        .off_lo = (u16)h,
        .sel = idt_cs,
        .type = 0x8e, /* present, 64-bit interrupt gate: IF stays 0 in the handler */
        .off_mid = (u16)(h >> 16),
        .off_hi = (u32)(h >> 32),
    };
}

/* Vectors without a gate are not present: a stray interrupt raises #NP, which is reported. */
void idt_set(unsigned vec, void (*handler)(void))
{
    if (vec >= 32 && vec < ARRAY_SIZE(idt))
        set_gate(vec, (u64)(uintptr_t)handler);
}

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
    /* The current CS, not a constant: hello64 runs on the VMM's GDT, not ours. */
    asm volatile("mov %%cs, %0" : "=r"(idt_cs));
    for (unsigned v = 0; v < 32; v++)
        set_gate(v, exc_stubs[v]);
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
