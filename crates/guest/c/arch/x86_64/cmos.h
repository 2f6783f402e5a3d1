/*
 * The MC146818 RTC/CMOS at ports 0x70 (index; bit 7 masks NMIs) and 0x71
 * (data), the way kvm-unit-tests' rtc and s3 tests drive it.
 */
#ifndef TRAPLINE_CMOS_H
#define TRAPLINE_CMOS_H

#include "io.h"

#define CMOS_INDEX 0x70
#define CMOS_DATA 0x71

#define RTC_SECONDS 0x00
#define RTC_SECONDS_ALARM 0x01
#define RTC_MINUTES 0x02
#define RTC_MINUTES_ALARM 0x03
#define RTC_HOURS 0x04
#define RTC_HOURS_ALARM 0x05
#define RTC_REG_A 0x0a
#define RTC_REG_B 0x0b
#define RTC_REG_C 0x0c
#define RTC_REG_D 0x0d
#define RTC_CENTURY 0x32

#define REG_A_UIP 0x80
#define REG_B_AIE 0x20
#define REG_B_UIE 0x10
#define REG_B_DM_BINARY 0x04
#define REG_B_24H 0x02
#define REG_C_IRQF 0x80
#define REG_C_AF 0x20
#define REG_C_UF 0x10
#define REG_D_VRT 0x80
#define RTC_ALARM_DONT_CARE 0xc0
#define RTC_IRQ 8

static inline uint8_t cmos_read(uint8_t reg)
{
    outb(CMOS_INDEX, reg);
    return inb(CMOS_DATA);
}

static inline void cmos_write(uint8_t reg, uint8_t v)
{
    outb(CMOS_INDEX, reg);
    outb(CMOS_DATA, v);
}

/*
 * Wait until the next update has happened: UIP seen falling, or the seconds
 * register changed. The UIP window is only 244 us, which a preempted reader
 * on a loaded host can miss, so the seconds register is the fallback.
 */
static inline void cmos_sync_update(void)
{
    uint8_t s0 = cmos_read(RTC_SECONDS);
    for (;;) {
        if (cmos_read(RTC_REG_A) & REG_A_UIP) {
            while (cmos_read(RTC_REG_A) & REG_A_UIP)
                ;
            return;
        }
        if (cmos_read(RTC_SECONDS) != s0)
            return;
    }
}

#endif
