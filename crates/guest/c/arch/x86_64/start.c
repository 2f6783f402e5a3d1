/* The BSP's first C code, reached from either entry (cstart.S or entry64.S). */
#include "rt.h"

noreturn void rt_start64(void)
{
    percpu_init(0);
    idt_init();
    cmdline_init();
    exit(main(rt_argc, rt_argv));
}
