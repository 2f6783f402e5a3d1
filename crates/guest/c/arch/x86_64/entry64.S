/*
 * Entry for plain ELF64 payloads (hello64): the VMM starts us in long mode
 * with paging on, a flat GDT, a valid RSP and RBX = Multiboot info. We keep
 * its page tables and GDT and only switch to our own stack.
 */
#include "layout.h"

    .section .init, "ax"
    .code64
    .globl start
start:
    cli
    cld
    mov %ebx, mb_info_addr(%rip)
    lea (cpu_stacks + STACK_SIZE)(%rip), %rsp
    xor %ebp, %ebp
    call rt_start64
    jmp park

    .section .note.GNU-stack, "", @progbits
