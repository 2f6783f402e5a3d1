/* The smallest end-to-end check: console, command line, ucall and exit code. */
#include "rt.h"

int main(int argc, char **argv)
{
    int code = (int)cmdline_u64("exit", 0);

    printf("hello from trapline guest\n");
    for (int i = 0; i < argc; i++)
        printf("argv[%d]=%s\n", i, argv[i]);
    finish(code);
}
