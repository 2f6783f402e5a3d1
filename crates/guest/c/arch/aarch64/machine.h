/*
 * Which machine the runtime is built for. The default is trapline's (and
 * QEMU's) virt machine, whose map the generated trapline_abi.h gives. The
 * probe's kvmtool build (build.rs: -DTRAPLINE_MACHINE_KVMTOOL and the
 * KVMTOOL_* facts from trapline-abi) moves RAM and the GIC to where lkvm's
 * arm64 machine has them; its console is uart_8250.h. trapline's own MMIO
 * pages (ucall, debug exit, the probe's pages) keep their virt addresses:
 * kvmtool has nothing there, so they are exits it ignores.
 */
#ifndef TRAPLINE_AARCH64_MACHINE_H
#define TRAPLINE_AARCH64_MACHINE_H

#include "trapline_abi.h"

#ifdef TRAPLINE_MACHINE_KVMTOOL
#undef VIRT_RAM_BASE
#define VIRT_RAM_BASE KVMTOOL_RAM_BASE
#undef VIRT_GIC_DIST_BASE
#define VIRT_GIC_DIST_BASE KVMTOOL_GIC_DIST_BASE
#undef VIRT_GICD_IIDR
#define VIRT_GICD_IIDR KVMTOOL_GICD_IIDR
/* lkvm stacks one redistributor per vCPU right below the distributor, so
 * the first one's address follows the vCPU count (the device tree's). */
#undef VIRT_GIC_REDIST_BASE
#define VIRT_GIC_REDIST_BASE (KVMTOOL_GIC_DIST_BASE - (u64)dt.ncpus * KVMTOOL_GIC_REDIST_STRIDE)
#undef VIRT_GIC_REDIST_STRIDE
#define VIRT_GIC_REDIST_STRIDE KVMTOOL_GIC_REDIST_STRIDE
#endif

#endif
