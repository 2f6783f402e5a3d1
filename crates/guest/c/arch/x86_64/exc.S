/*
 * One stub per exception vector. Each pushes a fake error code where the CPU
 * does not push one, so exception_handler() sees a single frame layout.
 */
    .text
    .code64

.macro EXC vec
    .balign 16
exc_\vec:
    .if (\vec == 8) || (\vec == 10) || (\vec == 11) || (\vec == 12) || (\vec == 13) || (\vec == 14) || (\vec == 17) || (\vec == 21) || (\vec == 29) || (\vec == 30)
    .else
    pushq $0
    .endif
    pushq $\vec
    jmp exc_common
.endm

.irp v, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
    EXC \v
.endr

exc_common:
    cld
    mov %rsp, %rdi
    and $-16, %rsp
    call exception_handler
1:  cli
    hlt
    jmp 1b

    .section .rodata
    .balign 8
    .globl exc_stubs
exc_stubs:
.irp v, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
    .quad exc_\v
.endr
    .section .note.GNU-stack, "", @progbits
