//! Which QEMU machine trapline's stands in for: `-machine pc` when built
//! for x86_64, `-machine virt` when built for aarch64. What differs between
//! the two front ends (machine type and properties, devices, CPU models,
//! the `help` listings) is chosen by [`Platform`], so both are parsed and
//! unit-tested on either build.

/// The QEMU machine trapline's stands in for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Platform {
    /// `qemu-system-x86_64 -machine pc`.
    #[default]
    Pc,
    /// `qemu-system-aarch64 -machine virt` (a vGICv3 with its ITS).
    Virt,
}

impl Platform {
    /// The machine of this build.
    pub const HOST: Platform = if cfg!(target_arch = "aarch64") {
        Platform::Virt
    } else {
        Platform::Pc
    };

    /// The machine type's name (`-machine NAME`).
    pub fn machine(self) -> &'static str {
        match self {
            Platform::Pc => "pc",
            Platform::Virt => "virt",
        }
    }

    /// `-machine help`. kvm-unit-tests' arm/run looks for "ARM Virtual
    /// Machine" before it uses `-machine virt`.
    pub fn machine_list(self) -> &'static str {
        match self {
            Platform::Pc => {
                "Supported machines are:\n\
                 pc                   Standard PC (trapline's PC machine, KVM only) (default)\n\
                 microvm              microvm (trapline's PC with hardware-reduced ACPI, KVM only)\n"
            }
            Platform::Virt => {
                "Supported machines are:\n\
                 virt                 ARM Virtual Machine (trapline's virt machine, KVM only) (default)\n"
            }
        }
    }

    /// `-machine TYPE,help`: the properties trapline takes. arm/run greps
    /// for gic-version before it adds `gic-version=host`.
    pub fn machine_options(self) -> &'static str {
        match self {
            Platform::Pc => {
                "pc-machine options:\n\
                 \x20 accel=<string>         - kvm (the only accelerator trapline has)\n\
                 \x20 kernel_irqchip=on|split|off\n\
                 \x20 pit=on|off\n"
            }
            Platform::Virt => {
                "virt-machine options:\n\
                 \x20 accel=<string>         - kvm (the only accelerator trapline has)\n\
                 \x20 gic-version=<string>   - 3, host or max: KVM's vGICv3 (2 is not available)\n\
                 \x20 highmem=<bool>         - accepted: trapline maps nothing above 4 GiB\n\
                 \x20 its=on                 - the vGICv3's ITS (always present)\n"
            }
        }
    }

    /// `-cpu help`.
    pub fn cpu_list(self) -> &'static str {
        match self {
            Platform::Pc => {
                "Available CPUs:\n\
                 x86 host             KVM processor with all supported host features\n\
                 x86 max              Enables all features supported by the accelerator in the current host\n\
                 x86 qemu64           QEMU Virtual CPU version 2.5+\n"
            }
            Platform::Virt => {
                "Available CPUs:\n\
                 \x20 host (the host's CPU under KVM)\n\
                 \x20 max (the same under KVM)\n"
            }
        }
    }

    /// `-device help`. arm/run looks for virtconsole, and adds `-device
    /// pci-testdev` where it is listed (on both machines).
    pub fn device_list(self) -> &'static str {
        match self {
            Platform::Pc => {
                "Misc devices:
name \"isa-debug-exit\", bus ISA, desc \"always present in trapline (iobase=0xf4,iosize=0x4)\"
name \"pc-testdev\", bus ISA
name \"pci-testdev\", bus PCI, desc \"PCI Test Device\"
"
            }
            Platform::Virt => {
                "Misc devices:
name \"pci-testdev\", bus PCI, desc \"PCI Test Device\"
name \"virtio-serial-device\", bus virtio-bus, desc \"on a legacy virtio-mmio transport; one port\"
name \"virtconsole\", bus virtio-serial-bus, desc \"its chardev a -chardev testdev (chr-testdev)\"
"
            }
        }
    }
}
