//! The arm64 device tree: `trapline_fdt::write` on descriptions the input
//! makes, read back by the crate's own independent reader
//! (`trapline_fdt::reader`, which panics on anything malformed).
//!
//! Input: a flags byte (bit 0 ITS, 1 PL011, 2 PL031, 3 PCIe host, 4
//! initrd, 5 PMU, 6 PSCI through SMC, 7 windows from the input rather than
//! QEMU's map); a CPU count byte and a byte choosing KVM's default MPIDRs
//! or MPIDRs from the input (u64 each); RAM (u64 base and length with bit
//! 7, else QEMU's base and a u32 count of pages); with bit 7 the GIC's,
//! UART's, RTC's and PCIe windows (u64 pairs); a virtio transport count
//! byte and, per transport, QEMU's slot or a u64 base; the initrd's u64
//! start and end; the rest is the command line (lossy UTF-8).
//!
//! Checks: `write` never panics; a vm-fdt error is never the answer (the
//! crate validates first: vm-fdt refusing means a description got past
//! `validate` that it should not have); no CPUs is `NoCpus` and a NUL in
//! the command line is refused; errors format. A written blob is at most
//! 2 MiB and reads back: its header's size, the boot CPU, the memory node's
//! `reg`, one cpu node per vCPU with the MPIDR's affinity as `reg`, one
//! virtio_mmio node per transport, `chosen`'s `bootargs` (absent when
//! empty), initrd range and `stdout-path` as described.

#![no_main]

use libfuzzer_sys::fuzz_target;
use trapline_abi as abi;
use trapline_fdt::reader::{parse, Node};
use trapline_fdt::{
    write, FdtError, Initrd, MmioDevice, PsciMethod, VirtMachine, Window, MAX_DTB_SIZE,
    MPIDR_AFFINITY_MASK,
};
use trapline_fuzz::Input;

fn window(input: &mut Input<'_>) -> Window {
    Window::new(input.u64(), input.u64())
}

/// KVM's reset MPIDR for vCPU `i` (Aff0 = i % 16, Aff1 = i / 16).
fn default_mpidr(i: u64) -> u64 {
    (i & 0xf) | ((i >> 4) & 0xff) << 8
}

fn describe(input: &mut Input<'_>) -> VirtMachine {
    let flags = input.u8();
    let custom = flags & 0x80 != 0;
    let ncpus = u64::from(input.u8());
    let random_mpidrs = input.u8() & 1 != 0;
    let mpidrs = (0..ncpus)
        .map(|i| {
            if random_mpidrs {
                input.u64()
            } else {
                default_mpidr(i)
            }
        })
        .collect();
    let ram = if custom {
        window(input)
    } else {
        Window::new(abi::VIRT_RAM_BASE, u64::from(input.u32()) << 12)
    };
    let mut m = VirtMachine::qemu_virt(ram.len, mpidrs);
    m.ram = ram;
    if custom {
        m.gic.dist = window(input);
        m.gic.redist = window(input);
        m.gic.its = Some(window(input));
        m.uart = Some(MmioDevice {
            window: window(input),
            spi: input.u32(),
        });
        m.rtc = Some(MmioDevice {
            window: window(input),
            spi: input.u32(),
        });
        if let Some(p) = m.pcie.as_mut() {
            p.ecam = window(input);
            p.io = window(input);
            p.mmio = window(input);
            p.first_spi = input.u32();
        }
    }
    if flags & 1 == 0 {
        m.gic.its = None;
    }
    if flags & 2 == 0 {
        m.uart = None;
    }
    if flags & 4 == 0 {
        m.rtc = None;
    }
    if flags & 8 == 0 {
        m.pcie = None;
    }
    if flags & 0x20 != 0 {
        m.pmu_ppi = Some(u32::from(input.u8()));
    }
    if flags & 0x40 != 0 {
        m.psci = PsciMethod::Smc;
    }
    let transports = u64::from(input.u8() % 40);
    m.virtio = (0..transports)
        .map(|n| {
            let base = if input.u8() & 1 == 0 {
                abi::VIRT_VIRTIO_MMIO_BASE + n * abi::VIRT_VIRTIO_MMIO_STRIDE
            } else {
                input.u64()
            };
            MmioDevice {
                window: Window::new(base, abi::VIRT_VIRTIO_MMIO_STRIDE),
                spi: abi::VIRT_VIRTIO_MMIO_FIRST_SPI + n as u32,
            }
        })
        .collect();
    let initrd = Initrd {
        start: input.u64(),
        end: input.u64(),
    };
    if flags & 0x10 != 0 {
        m.initrd = Some(initrd);
    }
    m.bootargs = String::from_utf8_lossy(input.bytes(usize::MAX)).into_owned();
    m
}

fn cell_or_pair(node: &Node, name: &str) -> u64 {
    match node.u32s(name).as_slice() {
        [one] => u64::from(*one),
        [hi, lo] => (u64::from(*hi) << 32) | u64::from(*lo),
        other => panic!("{}: {name} has {} cells", node.name, other.len()),
    }
}

fn read_back(m: &VirtMachine, blob: &[u8]) {
    assert!(blob.len() <= MAX_DTB_SIZE, "{} bytes", blob.len());
    let (header, root) = parse(blob);
    assert_eq!(header.totalsize as usize, blob.len());
    assert_eq!(
        header.boot_cpuid_phys,
        (m.mpidrs[0] & MPIDR_AFFINITY_MASK) as u32
    );

    let memory = root
        .at(&format!("/memory@{:x}", m.ram.base))
        .expect("the memory node");
    assert_eq!(memory.u64s("reg"), vec![m.ram.base, m.ram.len]);

    let cpus = root.at("/cpus").expect("the cpus node");
    let cpu_nodes: Vec<&Node> = cpus
        .children
        .iter()
        .filter(|c| c.name.starts_with("cpu@"))
        .collect();
    assert_eq!(cpu_nodes.len(), m.mpidrs.len());
    for (i, (node, mpidr)) in cpu_nodes.iter().zip(&m.mpidrs).enumerate() {
        assert_eq!(node.name, format!("cpu@{i}"));
        assert_eq!(
            cell_or_pair(node, "reg"),
            mpidr & MPIDR_AFFINITY_MASK,
            "cpu {i}"
        );
    }

    let transports = root
        .children
        .iter()
        .filter(|c| c.name.starts_with("virtio_mmio@"))
        .count();
    assert_eq!(transports, m.virtio.len());

    let chosen = root.at("/chosen").expect("the chosen node");
    if m.bootargs.is_empty() {
        assert!(!chosen.has("bootargs"));
    } else {
        assert_eq!(chosen.str("bootargs"), m.bootargs);
    }
    match m.initrd {
        Some(i) => {
            assert_eq!(cell_or_pair(chosen, "linux,initrd-start"), i.start);
            assert_eq!(cell_or_pair(chosen, "linux,initrd-end"), i.end);
        }
        None => assert!(!chosen.has("linux,initrd-start")),
    }
    match m.stdout_path() {
        Some(path) => {
            assert_eq!(chosen.str("stdout-path"), path);
            assert!(root.at(&path).is_some(), "stdout-path {path} names no node");
        }
        None => assert!(!chosen.has("stdout-path")),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let m = describe(&mut input);
    match write(&m) {
        Ok(blob) => {
            assert!(!m.mpidrs.is_empty());
            assert!(
                !m.bootargs.contains('\0'),
                "a NUL in the command line was written"
            );
            read_back(&m, &blob);
        }
        Err(e) => {
            let _ = e.to_string();
            match e {
                FdtError::Writer(w) => panic!("vm-fdt refused what validate let through: {w}"),
                FdtError::NoCpus => assert!(m.mpidrs.is_empty()),
                FdtError::NulInBootargs => assert!(m.bootargs.contains('\0')),
                _ => assert!(!m.mpidrs.is_empty()),
            }
        }
    }
});
