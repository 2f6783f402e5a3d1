/*
 * The Multiboot v1 information and command line: "<argv0> key=value ...".
 * argv0 is the image name the loader chose and is never looked up as a key;
 * the parsing and lookup are lib/args.c's, shared with arm64.
 */
#include "rt.h"

u32 mb_info_addr;

const struct mbi *mbi(void) { return (const struct mbi *)(uintptr_t)mb_info_addr; }

/* Multiboot's mem_upper counts KiB from 1 MiB, so RAM ends 1 MiB above it. */
u64 mem_top(void)
{
    const struct mbi *m = mbi();
    return m ? (u64)m->mem_upper * 1024 + 0x100000 : 0;
}

/*
 * Multiboot's command line starts with argv0 (the image name), so it is
 * parsed whole. Copied, because the string lives in VMM-owned low memory
 * the payload must not rely on.
 */
void cmdline_init(void)
{
    const struct mbi *m = mbi();
    args_init(NULL, m && m->cmdline ? (const char *)(uintptr_t)m->cmdline : "");
}
