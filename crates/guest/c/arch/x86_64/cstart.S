/*
 * Entry for the Multiboot .flat payloads, modelled on kvm-unit-tests'
 * cstart64.S: a Multiboot v1 header first in .text, a 32-bit protected-mode
 * entry (EBX = MBI), static identity page tables for 0-4 GiB with 2 MiB
 * pages, then long mode. APs arrive through a real-mode trampoline that the
 * BSP copies to GPA 0 and follow the same path with their own stack.
 */
#include "layout.h"

#define MB_MAGIC 0x1badb002
#define MB_FLAGS 0

    .section .init, "ax"
    .code32
    .balign 4
mb_header:
    .long MB_MAGIC
    .long MB_FLAGS
    .long -(MB_MAGIC + MB_FLAGS)

/* Paging from static tables; \target is the 64-bit continuation. Clobbers EAX, ECX, EDX. */
.macro ENTER_LONG target
    mov %cr4, %eax
    bts $5, %eax                /* PAE */
    mov %eax, %cr4
    mov $pml4, %eax
    mov %eax, %cr3
    mov $MSR_EFER, %ecx
    rdmsr
    bts $8, %eax                /* LME */
    wrmsr
    mov %cr0, %eax
    bts $0, %eax                /* PE */
    bts $31, %eax               /* PG */
    mov %eax, %cr0
    ljmp $SEL_CODE64, $\target
.endm

.macro LOAD_DATA_SEGS
    mov $SEL_DATA, %eax
    mov %eax, %ds
    mov %eax, %es
    mov %eax, %fs
    mov %eax, %gs
    mov %eax, %ss
.endm

    .globl start
start:
    cli
    cld
    mov %ebx, mb_info_addr
    lgdt gdt_desc
    LOAD_DATA_SEGS
    ljmp $SEL_CODE32, $1f
1:  mov $(cpu_stacks + STACK_SIZE), %esp
    ENTER_LONG bsp_start64

    .code64
bsp_start64:
    LOAD_DATA_SEGS
    mov $(cpu_stacks + STACK_SIZE), %rsp
    xor %ebp, %ebp
    call rt_start64
    jmp park

/* ---- APs ---- */

    .code32
ap_start32:
    LOAD_DATA_SEGS
    mov $1, %eax
    lock xadd %eax, cpu_next    /* claim a per-CPU slot */
    cmp $MAX_CPUS, %eax
    jae ap_no_slot
    mov %eax, %edi
    inc %eax
    shl $STACK_SHIFT, %eax
    add $cpu_stacks, %eax
    mov %eax, %esp
    ENTER_LONG ap_start64
ap_no_slot:
    cli
    hlt
    jmp ap_no_slot

    .code64
ap_start64:
    LOAD_DATA_SEGS
    mov %esp, %esp              /* zero-extend: upper halves are undefined after the switch */
    mov %edi, %edi
    xor %ebp, %ebp
    cld
    call ap_entry
    jmp park

/*
 * Real-mode trampoline, copied to GPA 0 by smp_start_aps(); SIPI vector 0
 * starts each AP here with CS:IP = 0:0. Only offsets relative to
 * tramp_start are used while it runs from page 0.
 */
    .code16
    .globl tramp_start, tramp_end
tramp_start:
    cli
    xor %ax, %ax
    mov %ax, %ds
    lgdtl tramp_gdt_desc - tramp_start
    mov %cr0, %eax
    or $1, %eax
    mov %eax, %cr0
    ljmpl $SEL_CODE32, $ap_start32
tramp_gdt_desc:
    .word gdt_end - gdt - 1
    .long gdt
tramp_end:

    .code64

    .data
    .balign 8
gdt:
    .quad 0
    .quad 0x00af9b000000ffff    /* SEL_CODE64 */
    .quad 0x00cf93000000ffff    /* SEL_DATA */
    .quad 0x00cf9b000000ffff    /* SEL_CODE32 */
gdt_end:
gdt_desc:
    .word gdt_end - gdt - 1
    .quad gdt

cpu_next:
    .long 1                     /* slot 0 is the BSP's */

/* Static, so no instructions are spent building them (guest code is slow here). */
    .balign 4096
pml4:
    .quad pdpt + 0x3
    .fill 511, 8, 0
pdpt:
    .quad pd + 0x0003, pd + 0x1003, pd + 0x2003, pd + 0x3003
    .fill 508, 8, 0
pd:
    i = 0
    .rept 2048
    .quad (i << 21) + 0x83      /* present, writable, 2 MiB */
    i = i + 1
    .endr

    .section .note.GNU-stack, "", @progbits
