/*
 * The exception vector table (VBAR_EL1). Every entry saves x0-x30, ELR and
 * SPSR on the current stack and calls exc_handler(kind, frame) (exc.c),
 * which either reports and exits, or returns after adjusting the frame (a
 * skipped faulting access); the entry then restores the frame and ERETs.
 */
#include "layout.h"

.macro entry kind
    .balign 0x80
    sub sp, sp, #FRAME_SIZE
    stp x0, x1, [sp, #0]
    mov x0, #\kind
    b exc_common
.endm

    .text
    .balign 2048
    .global exc_vectors
exc_vectors:
    /* Current EL with SP_EL0, current EL with SP_ELx, lower EL AArch64, lower EL AArch32;
     * each: synchronous, IRQ, FIQ, SError. */
    .irp kind, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
    entry \kind
    .endr

exc_common:
    stp x2, x3, [sp, #16]
    stp x4, x5, [sp, #32]
    stp x6, x7, [sp, #48]
    stp x8, x9, [sp, #64]
    stp x10, x11, [sp, #80]
    stp x12, x13, [sp, #96]
    stp x14, x15, [sp, #112]
    stp x16, x17, [sp, #128]
    stp x18, x19, [sp, #144]
    stp x20, x21, [sp, #160]
    stp x22, x23, [sp, #176]
    stp x24, x25, [sp, #192]
    stp x26, x27, [sp, #208]
    stp x28, x29, [sp, #224]
    str x30, [sp, #240]
    mrs x1, elr_el1
    mrs x2, spsr_el1
    stp x1, x2, [sp, #FRAME_ELR]
    mov x1, sp
    bl exc_handler
    ldp x1, x2, [sp, #FRAME_ELR]
    msr elr_el1, x1
    msr spsr_el1, x2
    ldp x2, x3, [sp, #16]
    ldp x4, x5, [sp, #32]
    ldp x6, x7, [sp, #48]
    ldp x8, x9, [sp, #64]
    ldp x10, x11, [sp, #80]
    ldp x12, x13, [sp, #96]
    ldp x14, x15, [sp, #112]
    ldp x16, x17, [sp, #128]
    ldp x18, x19, [sp, #144]
    ldp x20, x21, [sp, #160]
    ldp x22, x23, [sp, #176]
    ldp x24, x25, [sp, #192]
    ldp x26, x27, [sp, #208]
    ldp x28, x29, [sp, #224]
    ldr x30, [sp, #240]
    ldp x0, x1, [sp, #0]
    add sp, sp, #FRAME_SIZE
    eret
