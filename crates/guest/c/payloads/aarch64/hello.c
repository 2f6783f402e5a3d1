/*
 * The smallest arm64 end-to-end check: console, device tree, command line,
 * ucall and the two ways out. exit=<n> (default 0): 0 powers off with PSCI
 * SYSTEM_OFF, anything else goes out through the debug-exit page;
 * reset=1 asks for PSCI SYSTEM_RESET instead. devices=1 also reads the
 * virt machine's PL031 and its first and last virtio-mmio transports.
 */
#include "rt.h"

/* The PL031's count and PrimeCell IDs; the identification registers of
 * virtio-mmio transports 0 and 31, and how many the device tree names. */
static void print_devices(void)
{
    u32 id[8];
    for (int i = 0; i < 8; i++)
        id[i] = mmio_read32(VIRT_PL031_BASE + 0xfe0 + 4 * i);
    printf("pl031: node %s, dr=%u, id %02x %02x %02x %02x %02x %02x %02x %02x\n", dt.pl031 ? "yes" : "no",
           mmio_read32(VIRT_PL031_BASE), id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7]);
    printf("virtio-mmio: %u transports in the device tree\n", dt.nvirtio_mmio);
    u64 last = VIRT_VIRTIO_MMIO_BASE + (VIRT_VIRTIO_MMIO_COUNT - 1) * VIRT_VIRTIO_MMIO_STRIDE;
    u64 bases[2] = {VIRT_VIRTIO_MMIO_BASE, last};
    for (int i = 0; i < 2; i++)
        printf("virtio-mmio@%lx: magic=%08x version=%u device-id=%u vendor=%08x\n", bases[i],
               mmio_read32(bases[i]), mmio_read32(bases[i] + 4), mmio_read32(bases[i] + 8),
               mmio_read32(bases[i] + 0xc));
}

int main(int argc, char **argv)
{
    int code = (int)cmdline_u64("exit", 0);
    u64 v = psci_version();

    printf("hello from trapline arm64 guest\n");
    printf("psci %u.%u, %u cpus in the device tree, ram 0x%lx+0x%lx\n", (u32)(v >> 16) & 0x7fff, (u32)v & 0xffff,
           dt.ncpus, dt.mem_base, dt.mem_size);
    for (int i = 0; i < argc; i++)
        printf("argv[%d]=%s\n", i, argv[i]);
    if (cmdline_u64("devices", 0))
        print_devices();
    if (cmdline_u64("reset", 0)) {
        ucall(UCALL_DONE, "reset", (u64)(u32)code);
        psci_system_reset();
    }
    finish(code);
}
