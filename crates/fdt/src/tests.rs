//! Write, parse back with the independent reader, check node by node.

use super::reader::{parse, Node};
use super::*;

const MIB: u64 = 1 << 20;

/// Two vCPUs as KVM reports them: MPIDR_EL1 with its RES1 bit 31.
fn two_cpus() -> Vec<u64> {
    vec![0x8000_0000, 0x8000_0001]
}

fn full() -> VirtMachine {
    let mut m = VirtMachine::qemu_virt(256 * MIB, two_cpus());
    m.bootargs = "console=ttyAMA0 earlycon".to_owned();
    m.initrd = Some(Initrd {
        start: abi::VIRT_RAM_BASE + 128 * MIB,
        end: abi::VIRT_RAM_BASE + 128 * MIB + 0x1234,
    });
    m.pmu_ppi = Some(abi::VIRT_PMU_PPI);
    m.virtio = (0..2)
        .map(|n| {
            let (w, spi) = abi::virt_virtio_mmio(n).unwrap();
            MmioDevice {
                window: Window::new(w.base, w.len),
                spi,
            }
        })
        .collect();
    m
}

fn tree(m: &VirtMachine) -> Node {
    let blob = write(m).expect("writes");
    parse(&blob).1
}

fn node<'a>(root: &'a Node, path: &str) -> &'a Node {
    root.at(path).unwrap_or_else(|| panic!("no node {path}"))
}

#[test]
fn the_header_is_a_version_17_blob_within_the_kernel_limit() {
    let blob = write(&full()).unwrap();
    let (h, _) = parse(&blob);
    assert_eq!(h.totalsize as usize, blob.len());
    assert_eq!((h.version, h.last_comp_version), (17, 16));
    assert_eq!(h.boot_cpuid_phys, 0);
    assert!(blob.len() <= MAX_DTB_SIZE);
}

#[test]
fn root_says_dummy_virt_with_two_cells_and_the_gic_as_interrupt_parent() {
    let t = tree(&full());
    assert_eq!(t.name, "");
    assert_eq!(t.str("compatible"), "linux,dummy-virt");
    assert_eq!(t.u32("#address-cells"), 2);
    assert_eq!(t.u32("#size-cells"), 2);
    let gic = node(&t, "/intc@8000000");
    assert_eq!(t.u32("interrupt-parent"), gic.u32("phandle"));
}

#[test]
fn memory_is_one_range_at_the_ram_base() {
    let t = tree(&full());
    let mem = node(&t, "/memory@40000000");
    assert_eq!(mem.str("device_type"), "memory");
    assert_eq!(mem.u64s("reg"), [0x4000_0000, 256 * MIB]);
}

#[test]
fn cpus_carry_their_mpidr_affinity_and_psci_enable_method() {
    let t = tree(&full());
    let cpus = node(&t, "/cpus");
    assert_eq!(cpus.u32("#address-cells"), 1);
    assert_eq!(cpus.u32("#size-cells"), 0);
    assert_eq!(cpus.children.len(), 2);
    for (i, cpu) in cpus.children.iter().enumerate() {
        assert_eq!(cpu.name, format!("cpu@{i}"));
        assert_eq!(cpu.str("device_type"), "cpu");
        assert_eq!(cpu.str("compatible"), "arm,arm-v8");
        assert_eq!(cpu.str("enable-method"), "psci");
        // RES1 bit 31 is dropped: reg is the affinity only.
        assert_eq!(cpu.u32("reg"), i as u32);
    }
}

#[test]
fn an_aff3_mpidr_makes_cpu_regs_two_cells() {
    let mut m = full();
    m.mpidrs = vec![0x8000_0000, 0x01_8000_0102];
    let t = tree(&m);
    let cpus = node(&t, "/cpus");
    assert_eq!(cpus.u32("#address-cells"), 2);
    assert_eq!(node(&t, "/cpus/cpu@0").u64s("reg"), [0]);
    assert_eq!(node(&t, "/cpus/cpu@1").u64s("reg"), [0x01_0000_0102]);
}

#[test]
fn psci_is_0_2_through_hvc() {
    let t = tree(&full());
    let psci = node(&t, "/psci");
    assert_eq!(psci.strs("compatible"), ["arm,psci-0.2", "arm,psci"]);
    assert_eq!(psci.str("method"), "hvc");
    assert_eq!(psci.u32("cpu_on"), 0xC400_0003);
    assert_eq!(psci.u32("cpu_off"), 0x8400_0002);
    let mut m = full();
    m.psci = PsciMethod::Smc;
    assert_eq!(node(&tree(&m), "/psci").str("method"), "smc");
}

#[test]
fn the_timer_has_the_four_ppis_level_high() {
    let t = tree(&full());
    let timer = node(&t, "/timer");
    assert_eq!(
        timer.strs("compatible"),
        ["arm,armv8-timer", "arm,armv7-timer"]
    );
    assert!(timer.has("always-on"));
    assert_eq!(
        timer.u32s("interrupts"),
        [1, 13, 4, 1, 14, 4, 1, 11, 4, 1, 10, 4]
    );
}

#[test]
fn the_gic_has_distributor_and_redistributors_and_an_its_child() {
    let t = tree(&full());
    let gic = node(&t, "/intc@8000000");
    assert_eq!(gic.str("compatible"), "arm,gic-v3");
    assert!(gic.has("interrupt-controller"));
    assert_eq!(gic.u32("#interrupt-cells"), 3);
    assert_eq!(
        gic.u64s("reg"),
        [0x0800_0000, 0x1_0000, 0x080A_0000, 0x00F6_0000]
    );
    assert_eq!(gic.u32("#redistributor-regions"), 1);
    assert_eq!(gic.prop("ranges"), Some(&[][..]));
    assert_eq!(gic.children.len(), 1);
    let its = node(&t, "/intc@8000000/its@8080000");
    assert_eq!(its.str("compatible"), "arm,gic-v3-its");
    assert!(its.has("msi-controller"));
    assert_eq!(its.u32("#msi-cells"), 1);
    assert_eq!(its.u64s("reg"), [0x0808_0000, 0x2_0000]);
    assert_ne!(its.u32("phandle"), gic.u32("phandle"));
}

#[test]
fn without_an_its_the_gic_has_no_child_and_no_msi_controller() {
    let mut m = full();
    m.gic.its = None;
    let t = tree(&m);
    let gic = node(&t, "/intc@8000000");
    assert!(gic.children.is_empty());
    assert!(!gic.has("msi-controller"));
    assert_eq!(gic.u64s("reg").len(), 4);
}

#[test]
fn the_pl011_and_pl031_are_primecells_with_their_spi_and_the_apb_clock() {
    let t = tree(&full());
    let clk = node(&t, "/apb-pclk");
    assert_eq!(clk.str("compatible"), "fixed-clock");
    assert_eq!(clk.u32("clock-frequency"), 24_000_000);
    assert_eq!(clk.u32("#clock-cells"), 0);
    let phandle = clk.u32("phandle");

    let uart = node(&t, "/pl011@9000000");
    assert_eq!(uart.strs("compatible"), ["arm,pl011", "arm,primecell"]);
    assert_eq!(uart.u64s("reg"), [0x0900_0000, 0x1000]);
    assert_eq!(uart.u32s("interrupts"), [0, 1, 4]);
    assert_eq!(uart.u32s("clocks"), [phandle, phandle]);
    assert_eq!(uart.strs("clock-names"), ["uartclk", "apb_pclk"]);

    let rtc = node(&t, "/pl031@9010000");
    assert_eq!(rtc.strs("compatible"), ["arm,pl031", "arm,primecell"]);
    assert_eq!(rtc.u64s("reg"), [0x0901_0000, 0x1000]);
    assert_eq!(rtc.u32s("interrupts"), [0, 2, 4]);
    assert_eq!(rtc.u32s("clocks"), [phandle]);
    assert_eq!(rtc.strs("clock-names"), ["apb_pclk"]);
}

#[test]
fn virtio_transports_are_edge_spis_and_dma_coherent() {
    let t = tree(&full());
    let v0 = node(&t, "/virtio_mmio@a000000");
    assert_eq!(v0.str("compatible"), "virtio,mmio");
    assert_eq!(v0.u64s("reg"), [0x0A00_0000, 0x200]);
    assert_eq!(v0.u32s("interrupts"), [0, 16, 1]);
    assert!(v0.has("dma-coherent"));
    assert_eq!(
        node(&t, "/virtio_mmio@a000200").u32s("interrupts"),
        [0, 17, 1]
    );
}

#[test]
fn the_pmu_node_exists_only_with_a_pmu() {
    let t = tree(&full());
    let pmu = node(&t, "/pmu");
    assert_eq!(pmu.str("compatible"), "arm,armv8-pmuv3");
    assert_eq!(pmu.u32s("interrupts"), [1, 7, 4]);
    let mut m = full();
    m.pmu_ppi = None;
    assert!(tree(&m).at("/pmu").is_none());
}

#[test]
fn chosen_has_bootargs_stdout_path_and_the_initrd() {
    let t = tree(&full());
    let chosen = node(&t, "/chosen");
    assert_eq!(chosen.str("bootargs"), "console=ttyAMA0 earlycon");
    let stdout = chosen.str("stdout-path");
    assert_eq!(stdout, "/pl011@9000000");
    assert!(t.at(&stdout).is_some(), "stdout-path names a node");
    assert_eq!(
        chosen.u64s("linux,initrd-start"),
        [abi::VIRT_RAM_BASE + 128 * MIB]
    );
    assert_eq!(
        chosen.u64s("linux,initrd-end"),
        [abi::VIRT_RAM_BASE + 128 * MIB + 0x1234]
    );
}

#[test]
fn a_minimal_machine_leaves_out_what_it_does_not_have() {
    let mut m = VirtMachine::qemu_virt(64 * MIB, vec![0]);
    m.uart = None;
    m.rtc = None;
    m.pcie = None;
    let t = tree(&m);
    let chosen = node(&t, "/chosen");
    assert!(chosen.props.is_empty(), "no bootargs, stdout or initrd");
    assert!(t.at("/pl011@9000000").is_none());
    assert!(t.at("/pl031@9010000").is_none());
    assert!(!t.children.iter().any(|c| c.name.starts_with("virtio_mmio")));
    assert!(!t.children.iter().any(|c| c.name.starts_with("pcie")));
    assert_eq!(node(&t, "/cpus").children.len(), 1);
}

#[test]
fn every_phandle_is_unique_and_every_reference_resolves() {
    let t = tree(&full());
    let mut phandles = Vec::new();
    fn walk<'a>(n: &'a Node, out: &mut Vec<&'a Node>) {
        out.push(n);
        for c in &n.children {
            walk(c, out);
        }
    }
    let mut all = Vec::new();
    walk(&t, &mut all);
    for n in &all {
        if n.has("phandle") {
            phandles.push(n.u32("phandle"));
        }
    }
    let mut sorted = phandles.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), phandles.len());
    for n in &all {
        for r in ["interrupt-parent", "clocks"] {
            if n.has(r) {
                for p in n.u32s(r) {
                    assert!(phandles.contains(&p), "{}: {r} {p} dangles", n.name);
                }
            }
        }
    }
}

#[test]
fn bad_descriptions_are_refused_with_a_reason() {
    let mut m = full();
    m.mpidrs.clear();
    assert!(matches!(write(&m), Err(FdtError::NoCpus)));

    let mut m = full();
    m.mpidrs = (0..=u64::from(abi::VIRT_GIC_REDIST_MAX_VCPUS)).collect();
    let e = write(&m).unwrap_err();
    assert!(matches!(
        e,
        FdtError::RedistributorsTooSmall { cpus: 124, .. }
    ));
    assert!(e.to_string().contains("124 vCPUs"));

    let mut m = full();
    m.ram.len = 0;
    assert!(matches!(
        write(&m),
        Err(FdtError::BadWindow { what: "RAM", .. })
    ));
    m.ram = Window::new(u64::MAX - 10, 20);
    assert!(matches!(write(&m), Err(FdtError::BadWindow { .. })));

    let mut m = full();
    m.initrd = Some(Initrd {
        start: abi::VIRT_RAM_BASE + 255 * MIB,
        end: abi::VIRT_RAM_BASE + 257 * MIB,
    });
    let e = write(&m).unwrap_err();
    assert!(matches!(e, FdtError::InitrdOutsideRam { .. }));
    assert!(e.to_string().contains("not inside RAM"));
    m.initrd = Some(Initrd {
        start: abi::VIRT_RAM_BASE + 2,
        end: abi::VIRT_RAM_BASE + 1,
    });
    assert!(matches!(write(&m), Err(FdtError::InitrdOutsideRam { .. })));

    let mut m = full();
    m.bootargs = "a\0b".to_owned();
    assert!(matches!(write(&m), Err(FdtError::NulInBootargs)));

    let mut m = full();
    m.bootargs = "x".repeat(MAX_DTB_SIZE);
    assert!(matches!(write(&m), Err(FdtError::TooLarge { .. })));
}

#[test]
fn the_same_description_gives_the_same_bytes() {
    assert_eq!(write(&full()).unwrap(), write(&full()).unwrap());
}

#[test]
fn the_pcie_host_is_qemus_ecam_generic_node() {
    let t = tree(&full());
    let gic = node(&t, "/intc@8000000");
    let p = node(&t, "/pcie@10000000");
    assert_eq!(p.str("compatible"), "pci-host-ecam-generic");
    assert_eq!(p.str("device_type"), "pci");
    assert_eq!(p.u32("#address-cells"), 3);
    assert_eq!(p.u32("#size-cells"), 2);
    assert_eq!(p.u32("linux,pci-domain"), 0);
    assert!(p.has("dma-coherent"));
    assert!(!p.has("msi-map") && !p.has("msi-parent"), "INTx only");
    assert_eq!(p.u32s("bus-range"), [0, 15]);
    assert_eq!(p.u64s("reg"), [0x3f00_0000, 0x0100_0000]);
    assert_eq!(
        p.u32s("ranges"),
        [
            // I/O: PCI 0 -> CPU 0x3eff_0000, 64 KiB.
            0x0100_0000,
            0,
            0,
            0,
            0x3eff_0000,
            0,
            0x1_0000,
            // 32-bit memory, identity-mapped.
            0x0200_0000,
            0,
            0x1000_0000,
            0,
            0x1000_0000,
            0,
            0x2eff_0000,
        ]
    );
    assert_eq!(p.u32("#interrupt-cells"), 1);
    assert_eq!(p.u32s("interrupt-map-mask"), [0x1800, 0, 0, 7]);
    let map = p.u32s("interrupt-map");
    assert_eq!(map.len(), 16 * 10);
    let gic_phandle = gic.u32("phandle");
    // The GIC's address cells (2) and interrupt cells (3) follow its phandle.
    assert_eq!(gic.u32("#address-cells"), 2);
    assert_eq!(gic.u32("#interrupt-cells"), 3);
    for (k, e) in map.chunks(10).enumerate() {
        let (slot, pin) = (k as u32 / 4, k as u32 % 4);
        assert_eq!(
            e,
            [
                slot << 11,
                0,
                0,
                pin + 1,
                gic_phandle,
                0,
                0,
                0,
                3 + (slot + pin) % 4,
                4
            ],
            "slot {slot} pin {pin}"
        );
    }
    // pci-testdev at slot 2, INTA: SPI 5, as on QEMU.
    assert_eq!(map[(2 * 4) * 10 + 8], 5);
}

#[test]
fn a_bad_pcie_host_is_refused() {
    for ecam in [
        Window::new(0x3f00_0000, 0),
        Window::new(0x3f00_1000, 1 << 20),
        Window::new(0x3f00_0000, 0x1234),
        Window::new(0x1000_0000, 257 << 20),
    ] {
        let mut m = full();
        m.pcie = Some(PcieHost {
            ecam,
            ..PcieHost::qemu_virt()
        });
        let e = write(&m).unwrap_err();
        assert!(
            matches!(e, FdtError::BadEcam { .. } | FdtError::BadWindow { .. }),
            "{ecam:?}: {e}"
        );
    }
    let mut m = full();
    m.pcie = Some(PcieHost {
        mmio: Window::new(0xf000_0000, 0x2000_0000),
        ..PcieHost::qemu_virt()
    });
    assert!(matches!(write(&m), Err(FdtError::BadWindow { .. })));
}
