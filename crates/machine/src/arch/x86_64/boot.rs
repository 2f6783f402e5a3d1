//! From the configured image to the boot vCPU's registers: the image
//! loaded (with virtio devices announced on its command line), then every
//! vCPU created, the boot vCPU with the registers the loader asks for.

use trapline_kvm::{BootCpuState, CpuMode, Segment, VcpuFd, Vm};
use trapline_loader::gdt::SegmentFields;
use trapline_loader::{load, BootSetup, EntryMode, LoadRequest, Reserved};

use crate::layout::HOLES;
use crate::{MachineConfig, MachineError};

/// Where the boot vCPU starts.
pub(crate) type Boot = BootCpuState;

fn segment(f: SegmentFields) -> Segment {
    Segment {
        selector: f.selector,
        base: f.base,
        limit: f.limit,
        type_: f.type_,
        s: f.s.into(),
        dpl: f.dpl,
        present: f.present.into(),
        avl: f.avl.into(),
        l: f.l.into(),
        db: f.db.into(),
        g: f.g.into(),
    }
}

/// The boot vCPU state the loader's setup asks for.
pub(crate) fn cpu_state(setup: &BootSetup) -> BootCpuState {
    let (mode, rip, rsp, rax, rbx, rsi) = match setup.entry {
        EntryMode::Protected32 { eip, eax, ebx, esi } => {
            // ESP is not part of the Multiboot, PVH or bzImage contract;
            // point it somewhere harmless (the boot stack, wherever the loader put the boot
            // area) rather than at 0.
            (
                CpuMode::Protected32,
                eip.into(),
                setup.boot_area.stack_top(),
                eax.into(),
                ebx.into(),
                esi.into(),
            )
        }
        EntryMode::Long64 { rip, rsp, rbx, cr3 } => (CpuMode::Long64 { cr3 }, rip, rsp, 0, rbx, 0),
    };
    BootCpuState {
        mode,
        rip,
        rsp,
        rax,
        rbx,
        rsi,
        gdt_base: setup.gdt.base,
        gdt_limit: setup.gdt.limit,
        code: segment(setup.code_segment()),
        data: segment(setup.data_segment()),
    }
}

/// Load the configured image into the VM's memory.
fn load_configured(vm: &Vm, config: &MachineConfig) -> Result<BootCpuState, MachineError> {
    let reserved: Vec<Reserved> = HOLES
        .iter()
        .map(|h| Reserved {
            base: h.base,
            len: h.len,
            name: h.name,
        })
        .collect();
    let setup = load(
        vm.memory(),
        &LoadRequest {
            fresh_memory: true,
            rsdp: Some(trapline_devices::acpi::ACPI_AREA_BASE),
            image: &config.kernel,
            image_name: &config.kernel_name,
            append: &config.append,
            initrd: config.initrd.as_deref(),
            reserved: &reserved,
        },
    )?;
    Ok(cpu_state(&setup))
}

/// Load the image (after announcing virtio devices on its command line
/// where Linux looks for them without firmware tables).
pub(crate) fn load_image(vm: &Vm, config: &mut MachineConfig) -> Result<Boot, MachineError> {
    let devices = config.virtio.device_count();
    // The hardware-reduced machine declares them in its DSDT instead: with
    // no ISA IRQs, a command line's IRQ number is not their GSI.
    if devices > 0 && config.acpi == crate::AcpiMode::Full {
        let words = crate::virtio::cmdline(devices);
        config.append = match config.append.trim() {
            "" => words,
            a => format!("{a} {words}"),
        };
    }
    load_configured(vm, config)
}

/// Every vCPU, the boot vCPU with `boot`'s registers.
pub(crate) fn create_vcpus(vm: &Vm, boot: &mut Boot) -> Result<Vec<VcpuFd>, MachineError> {
    (0..vm.config().vcpus)
        .map(|i| Ok(vm.create_vcpu(i, (i == 0).then_some(&*boot))?))
        .collect()
}

/// Nothing more: the boot vCPU got its registers when it was created.
pub(crate) fn prepare_boot(
    _vm: &Vm,
    _vcpus: &[VcpuFd],
    _boot: &Boot,
    _config: &MachineConfig,
) -> Result<(), MachineError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use trapline_loader::{BootArea, GdtInfo, ImageKind};

    fn setup(entry: EntryMode) -> BootSetup {
        BootSetup {
            kind: ImageKind::BzImage,
            entry,
            gdt: GdtInfo {
                base: BootArea::DEFAULT.gdt(),
                limit: trapline_loader::gdt::GDT_LIMIT,
            },
            code_selector: trapline_loader::gdt::SELECTOR_CODE32,
            data_selector: trapline_loader::gdt::SELECTOR_DATA,
            mbi_address: BootArea::DEFAULT.mmap(),
            image: 0x10_0000..0x200_0000,
            initrd: None,
            cmdline: String::new(),
            mem_upper_kib: 0,
            memory_map: Vec::new(),
            boot_area: BootArea::DEFAULT,
        }
    }

    #[test]
    fn a_bzimage_starts_in_protected_mode_with_esi_at_boot_params() {
        let bp = BootArea::DEFAULT.mmap();
        let s = cpu_state(&setup(EntryMode::Protected32 {
            eip: 0x10_0000,
            eax: 0,
            ebx: 0,
            esi: bp as u32,
        }));
        assert_eq!(s.mode, CpuMode::Protected32);
        assert_eq!((s.rip, s.rsi, s.rax, s.rbx), (0x10_0000, bp, 0, 0));
        let r = s.regs();
        assert_eq!((r.rip, r.rsi), (0x10_0000, bp));
        assert_eq!(s.code.selector, trapline_loader::gdt::SELECTOR_CODE32);
        assert_eq!(s.rsp, BootArea::DEFAULT.stack_top());
    }

    #[test]
    fn long_mode_entries_leave_rsi_zero() {
        let s = cpu_state(&setup(EntryMode::Long64 {
            rip: 0x20_0000,
            rsp: 0x1_0000,
            rbx: 0x8000,
            cr3: 0x2000,
        }));
        assert_eq!(s.rsi, 0);
        assert_eq!(s.mode, CpuMode::Long64 { cr3: 0x2000 });
    }
}
