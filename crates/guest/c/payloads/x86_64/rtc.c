/*
 * The MC146818 RTC as PC guests and kvm-unit-tests use it: register D's
 * valid bit, the CMOS memory-size and century bytes, register A's
 * update-in-progress cycle (the seconds advance across it), register C's
 * update flag and clear-on-read, and the alarm interrupt on ISA IRQ 8
 * (routed through the IOAPIC) about two seconds after arming it.
 * One PASS:/FAIL: line per check; exits 0 when all pass, else 1.
 */
#include "rt.h"
#include "cmos.h"

#define RTC_VECTOR 0x38

static int failures;
static volatile u32 rtc_irqs;
static volatile u8 rtc_regc;
static volatile u8 rtc_irq_seconds;

static void check(bool ok, const char *what)
{
    printf("%s: %s\n", ok ? "PASS" : "FAIL", what);
    if (!ok)
        failures++;
}

static u8 bcd(u8 v) { return (u8)((v >> 4) * 10 + (v & 0xf)); }
static u8 to_bcd(u8 v) { return (u8)((v / 10) << 4 | (v % 10)); }

DEFINE_IRQ_ENTRY(rtc_entry, rtc_handler);

/* Read C (which lowers the line) and the seconds, then EOI. */
void rtc_handler(void)
{
    rtc_regc = cmos_read(RTC_REG_C);
    rtc_irq_seconds = cmos_read(RTC_SECONDS);
    rtc_irqs = rtc_irqs + 1;
    lapic_eoi();
}

static u16 cmos_word(u8 lo) { return (u16)(cmos_read(lo) | cmos_read(lo + 1) << 8); }

static void memory_bytes(void)
{
    u16 base = cmos_word(0x15), ext = cmos_word(0x17), ext2 = cmos_word(0x30), high = cmos_word(0x34);
    printf("rtc: CMOS base %u KiB, extended %u KiB, above 16 MiB %u x 64 KiB, century 0x%x\n", base, ext,
           high, cmos_read(RTC_CENTURY));
    check(base == 640, "CMOS base memory is 640 KiB");
    check(ext != 0 && ext == ext2, "CMOS extended memory set, same in 0x17 and 0x30");
    check(cmos_read(RTC_CENTURY) == 0x20, "CMOS century byte is 20 (BCD)");
}

static void uip_and_regc(void)
{
    check((cmos_read(RTC_REG_D) & REG_D_VRT) != 0, "register D: valid RAM and time");
    check((cmos_read(RTC_REG_B) & (REG_B_24H | REG_B_DM_BINARY)) == REG_B_24H, "register B: 24 h BCD");
    /* Catch UIP set, within ten updates (a loaded host may preempt this
     * loop through the 244 us window); the seconds read just before it
     * must advance by one across the update. */
    cmos_sync_update();
    u8 start = cmos_read(RTC_SECONDS), last = start, before = 0, after = 0;
    int updates = 0, seen = 0;
    while (!seen && updates < 10) {
        u8 s = cmos_read(RTC_SECONDS);
        if (cmos_read(RTC_REG_A) & REG_A_UIP) {
            while (cmos_read(RTC_REG_A) & REG_A_UIP)
                ;
            before = bcd(s);
            after = bcd(cmos_read(RTC_SECONDS));
            seen = 1;
        } else if (s != last) {
            updates++;
            last = s;
        }
    }
    printf("rtc: UIP %s; seconds %u before the update, %u after\n", seen ? "seen" : "never seen", before, after);
    check(seen, "UIP: register A shows the update in progress");
    check(seen && after == (before + 1) % 60, "UIP: the seconds advance across the update");
    u8 c1 = cmos_read(RTC_REG_C), c2 = cmos_read(RTC_REG_C);
    printf("rtc: register C 0x%x, then 0x%x\n", c1, c2);
    check((c1 & REG_C_UF) != 0, "register C: update flag after an update");
    check((c2 & (REG_C_UF | REG_C_AF)) == 0, "register C: cleared by reading");
}

static void alarm_interrupt(void)
{
    outb(0x21, 0xff); /* PICs masked: IRQ 8 comes through the IOAPIC */
    outb(0xa1, 0xff);
    lapic_enable();
    idt_set(RTC_VECTOR, rtc_entry);
    /* Fixed, physical, active high, edge; high dword first, unmasked last. */
    ioapic_write(IOAPIC_REDTBL(RTC_IRQ) + 1, lapic_id() << 24);
    ioapic_write(IOAPIC_REDTBL(RTC_IRQ), RTC_VECTOR);

    cmos_sync_update();
    u8 now = bcd(cmos_read(RTC_SECONDS));
    u8 at = (u8)((now + 2) % 60);
    cmos_write(RTC_SECONDS_ALARM, to_bcd(at));
    cmos_write(RTC_MINUTES_ALARM, RTC_ALARM_DONT_CARE);
    cmos_write(RTC_HOURS_ALARM, 0xff);
    (void)cmos_read(RTC_REG_C);
    cmos_write(RTC_REG_B, cmos_read(RTC_REG_B) | REG_B_AIE);
    printf("rtc: alarm armed for second %u (now %u)\n", at, now);
    asm volatile("sti" : : : "memory");
    /* Bounded by the clock itself: at most 5 seconds. */
    u8 last = now;
    int elapsed = 0;
    while (!rtc_irqs && elapsed < 5) {
        u8 s;
        asm volatile("cli" : : : "memory");
        s = bcd(cmos_read(RTC_SECONDS));
        asm volatile("sti; nop" : : : "memory");
        if (s != last) {
            elapsed++;
            last = s;
        }
    }
    asm volatile("cli" : : : "memory");
    cmos_write(RTC_REG_B, cmos_read(RTC_REG_B) & ~REG_B_AIE);
    ioapic_write(IOAPIC_REDTBL(RTC_IRQ), IOAPIC_MASKED | RTC_VECTOR);
    printf("rtc: %u alarm interrupt(s), register C 0x%x at second %u\n", rtc_irqs, rtc_regc,
           bcd(rtc_irq_seconds));
    check(rtc_irqs >= 1, "alarm: IRQ 8 arrived");
    check((rtc_regc & (REG_C_IRQF | REG_C_AF)) == (REG_C_IRQF | REG_C_AF), "alarm: IRQF and AF in register C");
    check(bcd(rtc_irq_seconds) == at, "alarm: fired at the armed second");
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    memory_bytes();
    uip_and_regc();
    alarm_interrupt();
    printf("rtc: %d failure(s)\n", failures);
    finish(failures ? 1 : 0);
}
