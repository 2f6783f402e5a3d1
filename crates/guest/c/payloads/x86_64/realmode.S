/*
 * realmode: a Multiboot image linked at 0x8000 (see low.lds) that leaves
 * 32-bit protected mode for 16-bit real mode, runs 16-bit code there and
 * exits through isa-debug-exit from real mode. It is what kvm-unit-tests'
 * real-mode tests need from a loader: an image below 1 MiB that loads, a
 * valid MBI that is not inside the image, and nothing of the loader's in
 * the way.
 *
 * Exit value (port 0xf4; trapline and QEMU exit with (V << 1) | 1):
 *   82 (status 165)  all went well: sum(1..12) = 78 computed by a 16-bit
 *                    loop, plus 4 read back through a real-mode segment
 *                    (ES = 0x0800, so ES:off is linear 0x8000 + off);
 *   0x10 (status 33) EAX was not the Multiboot magic;
 *   0x11 (status 35) EBX (the MBI) points inside the image;
 *   0x12 (status 37) CR0.PE still set after clearing it.
 * A real-mode segment load that went wrong (still in protected mode) would
 * fault instead: no IDT, so a triple fault.
 *
 * COM1 gets one line, printed from real mode:
 *   "realmode: 16-bit real mode at CS:IP 0000:XXXX, MBI at XXXXXXXX, exit 0052"
 */

#define MB_MAGIC 0x1badb002
#define MB_BOOT_MAGIC 0x2badb002
#define DEBUG_EXIT 0xf4
#define COM1 0x3f8
#define SCRATCH_SEG 0x0800          /* real-mode segment whose base is 0x8000 */

    .section .init, "ax"
    .code32
    .balign 4
mb_header:
    .long MB_MAGIC
    .long 0
    .long -MB_MAGIC

    .globl start
start:
    cli
    cld
    mov $0x10, %dx                  /* exit value if EAX is wrong */
    cmp $MB_BOOT_MAGIC, %eax
    jne exit32
    mov %ebx, mbi_addr
    mov $0x11, %dx                  /* exit value if the MBI is in the image */
    cmp $image_start, %ebx
    jb 1f
    cmp $image_end, %ebx
    jb exit32
1:
    /* 16-bit protected mode first (CS must be a 16-bit segment before PE
     * goes off), then real mode with CS = 0: the image is below 64 KiB. */
    lgdt gdt16_desc
    ljmp $0x08, $pm16

exit32:
    mov %dx, %ax
    mov $DEBUG_EXIT, %dx
    out %ax, %dx
2:  hlt
    jmp 2b

    .code16
pm16:
    mov $0x10, %ax
    mov %ax, %ds
    mov %ax, %es
    mov %ax, %ss
    mov %ax, %fs
    mov %ax, %gs
    mov %cr0, %eax
    and $~1, %eax                   /* PE off */
    mov %eax, %cr0
    ljmp $0, $rm16

rm16:
    xor %ax, %ax
    mov %ax, %ds
    mov %ax, %ss
    mov %ax, %fs
    mov %ax, %gs
    mov $stack_top, %sp
    lidt rm_idt_desc                /* the real-mode IVT at 0 */

    mov $0x12, %dx
    smsw %ax
    test $1, %al
    jnz exit16

    /* 16-bit arithmetic: sum(1..12) in a loop. */
    xor %bx, %bx
    mov $12, %cx
3:  add %cx, %bx
    loop 3b

    /* Real-mode segmentation: ES = 0x0800 has base 0x8000, so ES:off is
     * linear 0x8000 + off; read it back through DS = 0. */
    mov $SCRATCH_SEG, %ax
    mov %ax, %es
    movw $4, %es:(scratch - 0x8000)
    add scratch, %bx
    mov %bx, result

    mov $msg_head, %si
    call puts
    mov %cs, %ax
    call puthex16
    mov $':', %al
    call putc
    call 4f                         /* IP of the next instruction */
4:  pop %ax
    call puthex16
    mov $msg_mbi, %si
    call puts
    mov mbi_addr + 2, %ax
    call puthex16
    mov mbi_addr, %ax
    call puthex16
    mov $msg_exit, %si
    call puts
    mov result, %ax
    call puthex16
    mov $'\n', %al
    call putc

    mov result, %dx
exit16:
    mov %dx, %ax
    mov $DEBUG_EXIT, %dx
    out %ax, %dx
5:  hlt
    jmp 5b

/* Print the NUL-terminated string at DS:SI. */
puts:
    lodsb
    test %al, %al
    jz 6f
    call putc
    jmp puts
6:  ret

/* Print AX as four hex digits. */
puthex16:
    mov $4, %cx
7:  rol $4, %ax
    push %ax
    and $0xf, %al
    add $'0', %al
    cmp $'9', %al
    jbe 8f
    add $('a' - '0' - 10), %al
8:  call putc
    pop %ax
    loop 7b
    ret

/* Print AL on COM1 (trapline's and QEMU's UART take bytes at once). */
putc:
    push %dx
    mov $COM1, %dx
    out %al, %dx
    pop %dx
    ret

    .balign 8
gdt16:
    .quad 0
    .quad 0x00009a000000ffff        /* 0x08: 16-bit code, base 0, 64 KiB */
    .quad 0x000092000000ffff        /* 0x10: 16-bit data, base 0, 64 KiB */
gdt16_end:
gdt16_desc:
    .word gdt16_end - gdt16 - 1
    .long gdt16
rm_idt_desc:
    .word 0x3ff
    .long 0

msg_head:
    .asciz "realmode: 16-bit real mode at CS:IP "
msg_mbi:
    .asciz ", MBI at "
msg_exit:
    .asciz ", exit "

    .section .bss
    .balign 16
mbi_addr:
    .long 0
result:
    .word 0
scratch:
    .word 0
    .balign 16
stack:
    .skip 256
stack_top:
