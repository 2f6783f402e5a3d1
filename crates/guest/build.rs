//! Builds the guest payloads with the system's gcc and binutils.
//!
//! rustup cannot add a bare-metal target here, and the payloads are tiny C
//! and GNU as programs anyway, so this script drives gcc directly. Which set
//! it builds follows the target architecture (`CARGO_CFG_TARGET_ARCH`); both
//! are built the same way (a [`Gcc`]: the shared flags plus the
//! architecture's, the same include path shape, `c/lib` and
//! `c/payloads/common` beside `c/arch/<arch>` and `c/payloads/<arch>`):
//!
//! - x86_64: the runtime and each payload freestanding, linked at 4 MiB
//!   with `c/arch/x86_64/flat.lds`; Multiboot payloads are converted from
//!   ELF64 to ELF32 with objcopy, exactly like kvm-unit-tests' `.flat` files.
//!   Low payloads (`realmode`) are self-contained assembly linked at 0x8000
//!   with `c/arch/x86_64/low.lds`, without the runtime, and converted the
//!   same way. Plus the Linux programs (`c/linux`).
//! - aarch64: ELF64 AArch64 linked at trapline-abi's `VIRT_PAYLOAD_BASE`
//!   with `aarch64-linux-gnu-gcc` (the name Debian gives both its cross
//!   compiler and its native arm64 gcc), into `OUT_DIR/aarch64/`, and the
//!   probe again for kvmtool's machine. An x86_64 build builds this set too
//!   with the `aarch64-payloads` feature, for host-side tests of the arm64
//!   image loaders.
//!
//! The ABI header is generated from `trapline-abi`, never written by hand.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// gcc flags for every guest source of either architecture.
const CFLAGS: &[&str] = &[
    "-std=gnu11",
    "-O2",
    "-ffreestanding",
    "-fno-pic",
    "-fno-pie",
    "-fno-stack-protector",
    "-fno-asynchronous-unwind-tables",
    "-fno-unwind-tables",
    "-mgeneral-regs-only",
    "-mcmodel=small",
    // Stops gcc from turning memset/memcpy's own loops into calls to themselves.
    "-fno-tree-loop-distribute-patterns",
    "-fno-omit-frame-pointer",
    "-Wall",
    "-Wextra",
];

/// Link flags for every payload of either architecture.
const LDFLAGS: &[&str] = &[
    "-nostdlib",
    "-static",
    "-no-pie",
    "-Wl,--build-id=none",
    "-Wl,-z,max-page-size=0x1000",
    "-Wl,-z,noexecstack",
    "-Wl,-z,noseparate-code",
];

// ---- x86_64 ----

/// Runtime sources every x86 payload links.
const RT_X86_64: &[&str] = &[
    "lib/console.c",
    "lib/string.c",
    "lib/format.c",
    "lib/args.c",
    "lib/ucall.c",
    "arch/x86_64/exit.c",
    "arch/x86_64/cmdline.c",
    "arch/x86_64/percpu.c",
    "arch/x86_64/idt.c",
    "arch/x86_64/start.c",
    "arch/x86_64/exc.S",
];
/// Extra runtime for Multiboot payloads: 32-bit entry, long mode, SMP.
const RT_X86_64_MULTIBOOT: &[&str] = &[
    "arch/x86_64/cstart.S",
    "arch/x86_64/smp.c",
    "arch/x86_64/fwcfg.c",
    "arch/x86_64/acpi.c",
    "arch/x86_64/pci.c",
];
/// Extra runtime for payloads the VMM enters directly in 64-bit mode.
const RT_X86_64_ELF64: &[&str] = &["arch/x86_64/entry64.S"];

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// Multiboot v1 ELF32 `.flat`, 64-bit code inside.
    Flat,
    /// Plain ELF64 with no Multiboot header.
    Elf64,
    /// Multiboot v1 ELF32 linked below 1 MiB, no runtime (`c/arch/x86_64/low.lds`).
    Low,
}

/// (file name without extension, sources, kind). The names are public API.
const PAYLOADS_X86_64: &[(&str, &[&str], Kind)] = &[
    ("hello", &["payloads/x86_64/hello.c"], Kind::Flat),
    ("echo", &["payloads/x86_64/echo.c"], Kind::Flat),
    ("smp", &["payloads/x86_64/smp.c"], Kind::Flat),
    ("hostile", &["payloads/x86_64/hostile.c"], Kind::Flat),
    ("triple", &["payloads/x86_64/triple.c"], Kind::Flat),
    ("spin", &["payloads/x86_64/spin.c"], Kind::Flat),
    ("emufail", &["payloads/x86_64/emufail.c"], Kind::Flat),
    (
        "probe",
        &[
            // The harness and the exits' loops first, so the loops' addresses
            // (which the raw-KVM floor pins) do not follow the other files.
            "payloads/common/probe/harness.c",
            "payloads/x86_64/probe/exits.c",
            "payloads/common/probe/testdev.c",
            "payloads/x86_64/probe/pci.c",
            "payloads/x86_64/probe/ipi.c",
            "payloads/common/probe/irqfd.c",
            "payloads/x86_64/probe/irqfd_line.c",
            "payloads/common/probe/tails.c",
            "payloads/common/probe/anatomy.c",
            "payloads/x86_64/probe/anatomy_access.c",
        ],
        Kind::Flat,
    ),
    ("compat", &["payloads/x86_64/compat.c"], Kind::Flat),
    ("kutvmexit", &["payloads/x86_64/kutvmexit.c"], Kind::Flat),
    ("ringer", &["payloads/x86_64/ringer.c"], Kind::Flat),
    ("rtc", &["payloads/x86_64/rtc.c"], Kind::Flat),
    ("s3", &["payloads/x86_64/s3.c"], Kind::Flat),
    (
        "vblk",
        &[
            "payloads/common/vblk.c",
            "payloads/common/virtio_mmio.c",
            "payloads/x86_64/vblk_machine.c",
            "payloads/x86_64/gsi_irq.c",
        ],
        Kind::Flat,
    ),
    (
        "vnet",
        &[
            "payloads/common/vnet.c",
            "payloads/common/vnet_frame.c",
            "payloads/common/virtio_mmio.c",
            "payloads/x86_64/vnet_machine.c",
            "payloads/x86_64/gsi_irq.c",
        ],
        Kind::Flat,
    ),
    ("hello64", &["payloads/x86_64/hello64.c"], Kind::Elf64),
    ("realmode", &["payloads/x86_64/realmode.S"], Kind::Low),
];

/// x86's compiler flags beside [`CFLAGS`].
const X86_64: Arch = Arch {
    name: "x86_64",
    cflags: &[
        "-m64",
        "-march=x86-64",
        "-fcf-protection=none",
        "-mno-red-zone",
        // Writing the AP trampoline to GPA 0 is legitimate here.
        "-fno-delete-null-pointer-checks",
    ],
    hint: X86_TOOLS_HINT,
};

// ---- aarch64 ----

/// The arm64 runtime every arm64 payload links (`_start` is in `.init`,
/// which the linker script puts first whatever the order here).
const RT_AARCH64: &[&str] = &[
    "lib/string.c",
    "lib/format.c",
    "lib/args.c",
    "arch/aarch64/start.S",
    "arch/aarch64/exc.S",
    "arch/aarch64/exc.c",
    "lib/console.c",
    "arch/aarch64/psci.c",
    "lib/ucall.c",
    "arch/aarch64/exit.c",
    "arch/aarch64/fdt.c",
    "arch/aarch64/percpu.c",
    "arch/aarch64/smp.c",
    "arch/aarch64/start.c",
];

/// The probe's sources (arm64), for its virt and kvmtool builds alike.
const PROBE_AARCH64: &[&str] = &[
    // The harness and the exits' loops first, as on x86 (the floor pins them).
    "payloads/common/probe/harness.c",
    "payloads/aarch64/probe/exits.c",
    "payloads/common/probe/testdev.c",
    "payloads/aarch64/probe/pci.c",
    "payloads/aarch64/probe/gic.c",
    "payloads/aarch64/probe/ipi.c",
    "payloads/common/probe/irqfd.c",
    "payloads/aarch64/probe/irqfd_line.c",
    "payloads/common/probe/tails.c",
    "payloads/common/probe/anatomy.c",
    "payloads/aarch64/probe/anatomy_access.c",
];

/// (file name without extension, sources) of the arm64 payloads, each
/// written to `OUT_DIR/aarch64/<name>.elf`. The names are public API.
const PAYLOADS_AARCH64: &[(&str, &[&str])] = &[
    ("hello", &["payloads/aarch64/hello.c"]),
    ("smp", &["payloads/aarch64/smp.c"]),
    ("hostile", &["payloads/aarch64/hostile.c"]),
    (
        "vblk",
        &[
            "payloads/common/vblk.c",
            "payloads/common/virtio_mmio.c",
            "payloads/aarch64/vblk_machine.c",
        ],
    ),
    (
        "vnet",
        &[
            "payloads/common/vnet.c",
            "payloads/common/vnet_frame.c",
            "payloads/common/virtio_mmio.c",
            "payloads/aarch64/vnet_machine.c",
            "payloads/aarch64/probe/gic.c",
        ],
    ),
    ("probe", PROBE_AARCH64),
    ("chrtestdev", &["payloads/aarch64/chrtestdev.c"]),
    ("gic", &["payloads/aarch64/gic.c"]),
    ("its", &["payloads/aarch64/its.c"]),
];

/// arm64's compiler flags beside [`CFLAGS`].
const AARCH64: Arch = Arch {
    name: "aarch64",
    cflags: &[
        "-march=armv8-a",
        "-mbranch-protection=none",
        // Device memory (everything before the MMU is on, and MMIO after)
        // faults on unaligned accesses.
        "-mstrict-align",
        // Atomics inline (LDXR/STXR), not as calls into libgcc.
        "-mno-outline-atomics",
    ],
    hint: AARCH64_TOOLS_HINT,
};

fn main() {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let src = manifest.join("c");
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    println!("cargo:rerun-if-changed=build.rs");
    rerun_for_tree(&src);

    fs::write(out.join("trapline_abi.h"), trapline_abi::c_header()).unwrap();
    fs::write(out.join("trapline_abi_extra.h"), extra_header()).unwrap();

    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    match arch.as_str() {
        "x86_64" => {
            build_x86_64(&src, &out);
            if env::var_os("CARGO_FEATURE_AARCH64_PAYLOADS").is_some() {
                build_aarch64(&src, &out);
            }
        }
        "aarch64" => build_aarch64(&src, &out),
        other => panic!(
            "trapline-guest: no guest payloads for target architecture `{other}`; \
             trapline builds for x86_64 and aarch64"
        ),
    }
}

/// What sets one architecture's build apart.
struct Arch {
    /// The folder name under `c/arch/` and `c/payloads/`.
    name: &'static str,
    /// Compiler flags beside [`CFLAGS`].
    cflags: &'static [&'static str],
    /// What to install when its tools are missing or fail.
    hint: &'static str,
}

/// One architecture's compiler and what it is given: its flags, the
/// machine's defines, the include path and an object folder.
struct Gcc<'a> {
    src: &'a Path,
    cc: String,
    cflags: Vec<String>,
    obj: PathBuf,
    /// What to install when the tool is missing or fails.
    hint: &'static str,
}

impl<'a> Gcc<'a> {
    /// `cc` for `arch` with the machine's `defines`, objects in `obj`.
    fn new(
        src: &'a Path,
        out: &Path,
        arch: &Arch,
        cc: String,
        defines: &[String],
        obj: PathBuf,
    ) -> Self {
        fs::create_dir_all(&obj).unwrap();
        let cflags = arch
            .cflags
            .iter()
            .chain(CFLAGS)
            .map(|f| f.to_string())
            .chain(defines.iter().cloned())
            .chain(includes(src, out, arch.name))
            .collect();
        Gcc {
            src,
            cc,
            cflags,
            obj,
            hint: arch.hint,
        }
    }

    fn compile(&self, rel: &str) -> PathBuf {
        let o = self.obj.join(format!("{}.o", rel.replace(['/', '.'], "_")));
        let mut cmd = Command::new(&self.cc);
        cmd.args(&self.cflags)
            .arg("-c")
            .arg(self.src.join(rel))
            .arg("-o")
            .arg(&o);
        run(cmd, &self.cc, "compile", rel, self.hint);
        o
    }

    fn compile_all(&self, rels: &[&str]) -> Vec<PathBuf> {
        rels.iter().map(|rel| self.compile(rel)).collect()
    }

    /// Links `objects` into `elf` with `LDFLAGS`, `flags` and the linker script `lds`.
    fn link(&self, flags: &[String], lds: &Path, objects: &[PathBuf], elf: &Path) {
        let mut cmd = Command::new(&self.cc);
        cmd.args(LDFLAGS)
            .args(flags)
            .arg(format!("-Wl,-T,{}", lds.display()))
            .arg("-o")
            .arg(elf)
            .args(objects);
        let name = elf.file_name().unwrap().to_string_lossy().into_owned();
        run(cmd, &self.cc, "link", &name, self.hint);
    }
}

/// The include path of every guest source of `arch`, the same shape on
/// both: the generated ABI headers, the architecture's runtime (`rt.h`,
/// `io.h`, `uart.h`, ...), the shared runtime (`runtime.h`, `lib.h`), then
/// the payloads' own folders, so a shared payload file reaches its
/// architecture's half as `probe/arch.h` and an architecture's file the
/// shared half as `probe/probe.h`.
fn includes(src: &Path, out: &Path, arch: &str) -> Vec<String> {
    [
        out.to_path_buf(),
        src.join("arch").join(arch),
        src.join("lib"),
        src.join("payloads").join(arch),
        src.join("payloads/common"),
    ]
    .iter()
    .map(|dir| format!("-I{}", dir.display()))
    .collect()
}

/// The x86 payloads (`.flat`, `hello64.elf`) and Linux programs, in `OUT_DIR`.
fn build_x86_64(src: &Path, out: &Path) {
    let cc = env::var("TRAPLINE_GUEST_CC").unwrap_or_else(|_| "gcc".into());
    let objcopy = env::var("TRAPLINE_GUEST_OBJCOPY").unwrap_or_else(|_| "objcopy".into());
    println!("cargo:rerun-if-env-changed=TRAPLINE_GUEST_CC");
    println!("cargo:rerun-if-env-changed=TRAPLINE_GUEST_OBJCOPY");
    let gcc = Gcc::new(src, out, &X86_64, cc, &[], out.join("obj"));

    let common = gcc.compile_all(RT_X86_64);
    let multiboot = gcc.compile_all(RT_X86_64_MULTIBOOT);
    let elf64 = gcc.compile_all(RT_X86_64_ELF64);
    let flat_lds = src.join("arch/x86_64/flat.lds");
    let low_lds = src.join("arch/x86_64/low.lds");

    for &(name, sources, kind) in PAYLOADS_X86_64 {
        let (lds, mut objects) = match kind {
            Kind::Flat => (&flat_lds, [&multiboot[..], &common[..]].concat()),
            Kind::Elf64 => (&flat_lds, [&elf64[..], &common[..]].concat()),
            Kind::Low => (&low_lds, Vec::new()),
        };
        objects.extend(gcc.compile_all(sources));
        let mut flags = vec!["-m64".to_string()];
        if kind == Kind::Low {
            // One RWX segment is the point: code, data and stack in one page.
            flags.push("-Wl,--no-warn-rwx-segments".into());
        }
        let elf = out.join(format!("{name}.elf"));
        gcc.link(&flags, lds, &objects, &elf);

        if kind != Kind::Elf64 {
            let mut cmd = Command::new(&objcopy);
            cmd.args(["-O", "elf32-i386"])
                .arg(&elf)
                .arg(out.join(format!("{name}.flat")));
            run(cmd, &objcopy, "convert to elf32-i386", name, X86_TOOLS_HINT);
        }
    }
    build_linux_programs(
        src,
        out,
        &gcc.cc,
        LINUX_PROGRAMS,
        (&["-m32", "-fcf-protection=none"], X86_TOOLS_HINT),
    );
}

/// Linux user-space programs (the /init of initramfs images the crate
/// packs at run time, or programs in one): libc-free, like
/// ../shared/guests/linux/tinit.c; on x86 the i386 ABI with `int $0x80`
/// syscalls (`arch_flags` -m32), on arm64 the native one.
fn build_linux_programs(
    src: &Path,
    out: &Path,
    cc: &str,
    programs: &[(&str, &str)],
    (arch_flags, hint): (&[&str], &str),
) {
    for &(name, source) in programs {
        let mut cmd = Command::new(cc);
        cmd.args(arch_flags)
            .args([
                "-static",
                "-nostdlib",
                "-ffreestanding",
                "-fno-pic",
                "-fno-pie",
                "-no-pie",
                "-fno-stack-protector",
                "-fno-asynchronous-unwind-tables",
                "-Os",
                "-Wall",
                "-Wextra",
                "-Wl,--build-id=none",
            ])
            .arg("-o")
            .arg(out.join(name))
            .arg(src.join(source));
        run(cmd, cc, "build the Linux program", name, hint);
    }
}

/// The arm64 payloads, as ELF64 AArch64 in `OUT_DIR/aarch64/`, and the
/// probe's kvmtool build (`probe-kvmtool.bin`, see [`build_probe_kvmtool`]).
fn build_aarch64(src: &Path, out: &Path) {
    let dir = out.join("aarch64");
    fs::write(out.join("trapline_virt_windows.h"), virt_windows_header()).unwrap();

    let cc =
        env::var("TRAPLINE_GUEST_AARCH64_CC").unwrap_or_else(|_| "aarch64-linux-gnu-gcc".into());
    println!("cargo:rerun-if-env-changed=TRAPLINE_GUEST_AARCH64_CC");
    let virt = Gcc::new(src, out, &AARCH64, cc, &[], dir.join("obj"));
    let runtime = virt.compile_all(RT_AARCH64);
    for &(name, sources) in PAYLOADS_AARCH64 {
        let objects = [runtime.clone(), virt.compile_all(sources)].concat();
        link_aarch64(
            &virt,
            trapline_abi::VIRT_PAYLOAD_BASE,
            &objects,
            &dir.join(format!("{name}.elf")),
        );
    }
    build_probe_kvmtool(src, out, &virt.cc, &dir);
    build_linux_programs(
        src,
        &dir,
        &virt.cc,
        LINUX_PROGRAMS_AARCH64,
        (&[], AARCH64_TOOLS_HINT),
    );
}

/// Links an arm64 payload at `base` (`c/arch/aarch64/flat.lds`'s `PAYLOAD_BASE`).
fn link_aarch64(gcc: &Gcc, base: u64, objects: &[PathBuf], elf: &Path) {
    let lds = gcc.src.join("arch/aarch64/flat.lds");
    gcc.link(
        &[format!("-Wl,--defsym=PAYLOAD_BASE={base:#x}")],
        &lds,
        objects,
        elf,
    );
}

/// The probe again, for kvmtool's arm64 machine (`--peer kvmtool`): the
/// runtime built with `TRAPLINE_MACHINE_KVMTOOL` (RAM and the GIC where
/// lkvm has them, `machine.h`; the 8250 console, `uart_8250.h`), linked at
/// `KVMTOOL_PAYLOAD_BASE` and flattened to a raw binary, which lkvm loads
/// there (it loads no ELF). trapline itself runs `probe.elf`.
fn build_probe_kvmtool(src: &Path, out: &Path, cc: &str, dir: &Path) {
    use trapline_abi::{
        KVMTOOL_GIC_DIST_BASE, KVMTOOL_GIC_REDIST_STRIDE, KVMTOOL_PAYLOAD_BASE, KVMTOOL_RAM_BASE,
        KVMTOOL_UART_BASE, VIRT_GICD_IIDR, VIRT_GIC_DIST_BASE,
    };
    let defines = [
        "-DTRAPLINE_MACHINE_KVMTOOL".to_string(),
        format!("-DKVMTOOL_RAM_BASE={KVMTOOL_RAM_BASE:#x}ULL"),
        format!("-DKVMTOOL_UART_BASE={KVMTOOL_UART_BASE:#x}ULL"),
        format!("-DKVMTOOL_GIC_DIST_BASE={KVMTOOL_GIC_DIST_BASE:#x}ULL"),
        format!(
            "-DKVMTOOL_GICD_IIDR={:#x}ULL",
            KVMTOOL_GIC_DIST_BASE + (VIRT_GICD_IIDR - VIRT_GIC_DIST_BASE)
        ),
        format!("-DKVMTOOL_GIC_REDIST_STRIDE={KVMTOOL_GIC_REDIST_STRIDE:#x}ULL"),
    ];
    let kvmtool = Gcc::new(
        src,
        out,
        &AARCH64,
        cc.to_string(),
        &defines,
        dir.join("obj-kvmtool"),
    );
    let elf = dir.join("probe-kvmtool.elf");
    let objects = [
        kvmtool.compile_all(RT_AARCH64),
        kvmtool.compile_all(PROBE_AARCH64),
    ]
    .concat();
    link_aarch64(&kvmtool, KVMTOOL_PAYLOAD_BASE, &objects, &elf);

    let objcopy = env::var("TRAPLINE_GUEST_AARCH64_OBJCOPY")
        .unwrap_or_else(|_| "aarch64-linux-gnu-objcopy".into());
    println!("cargo:rerun-if-env-changed=TRAPLINE_GUEST_AARCH64_OBJCOPY");
    let mut cmd = Command::new(&objcopy);
    cmd.args(["-O", "binary"])
        .arg(&elf)
        .arg(dir.join("probe-kvmtool.bin"));
    run(
        cmd,
        &objcopy,
        "flatten to a raw binary",
        "probe-kvmtool",
        AARCH64_TOOLS_HINT,
    );
}

/// (output name, source): /init programs for Linux guests.
const LINUX_PROGRAMS: &[(&str, &str)] = &[
    ("vblktest", "linux/vblktest.c"),
    ("nettest", "linux/nettest.c"),
];
/// (output name, source): arm64 Linux programs, into `OUT_DIR/aarch64/`.
const LINUX_PROGRAMS_AARCH64: &[(&str, &str)] = &[("nettest", "linux/nettest.c")];

/// Tables the C side needs beyond `c_header()` (the scenario table: id,
/// name, routine, value check and the value itself of each, whose
/// `ROUTINE_*` and `EXPECT_*` names `c_header()` defines), still taken from
/// `trapline-abi` so nothing is duplicated by hand: the value is
/// `Expect::value()`'s (0 for `EXPECT_ANY`, which checks nothing), so the
/// probe compares against it and never maps a check to its value itself.
fn extra_header() -> String {
    let mut h = String::from(
        "/* Generated by trapline-guest's build.rs from trapline-abi; do not edit. */\n\
         #ifndef TRAPLINE_ABI_EXTRA_H\n#define TRAPLINE_ABI_EXTRA_H\n",
    );
    h.push_str("#define SCENARIO_TABLE { \\\n");
    for s in trapline_abi::SCENARIOS {
        writeln!(
            h,
            "    {{ {}, \"{}\", {}, {}, 0x{:x}ULL }}, \\",
            s.id,
            s.name,
            s.routine.c_name(),
            s.expect.c_name(),
            s.expect.value().unwrap_or(0)
        )
        .unwrap();
    }
    h.push_str("}\n#endif\n");
    h
}

/// The arm64 `virt` machine's windows (name, base, size) from
/// `trapline_abi::VIRT_WINDOWS`, as a C initializer for the hostile arm64
/// payload to aim at.
fn virt_windows_header() -> String {
    let mut h = String::from(
        "/* Generated by trapline-guest's build.rs from trapline-abi; do not edit. */\n\
         #ifndef TRAPLINE_VIRT_WINDOWS_H\n#define TRAPLINE_VIRT_WINDOWS_H\n\
         #define VIRT_WINDOW_TABLE { \\\n",
    );
    for w in trapline_abi::VIRT_WINDOWS {
        writeln!(
            h,
            "    {{ \"{}\", 0x{:x}ULL, 0x{:x}ULL }}, \\",
            w.name, w.base, w.len
        )
        .unwrap();
    }
    h.push_str("}\n#endif\n");
    h
}

fn rerun_for_tree(dir: &Path) {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("trapline-guest: cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rerun_for_tree(&p);
        } else {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
}

/// What to install when the x86 payloads' tools are missing or fail.
const X86_TOOLS_HINT: &str = "The x86 guest payloads need gcc and binutils (objcopy) for x86-64: \
     install them (e.g. `apt-get install gcc binutils`), or point \
     TRAPLINE_GUEST_CC / TRAPLINE_GUEST_OBJCOPY at them.";

/// What to install when the arm64 payloads' compiler is missing or fails.
const AARCH64_TOOLS_HINT: &str = "The arm64 guest payloads need gcc for aarch64: install Debian's \
     `gcc-aarch64-linux-gnu` package (`apt-get install gcc-aarch64-linux-gnu`; on an arm64 \
     host the native `gcc` package provides aarch64-linux-gnu-gcc), or point \
     TRAPLINE_GUEST_AARCH64_CC at an aarch64 gcc (and TRAPLINE_GUEST_AARCH64_OBJCOPY at its \
     objcopy, from the same binutils).";

/// Runs one tool step; a missing or failing tool is a build error that says what to install.
fn run(mut cmd: Command, tool: &str, step: &str, what: &str, hint: &str) {
    let output = cmd.output().unwrap_or_else(|e| {
        panic!("trapline-guest: could not run `{tool}` to {step} {what}: {e}. {hint}")
    });
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        panic!(
            "trapline-guest: `{tool}` failed to {step} {what} ({}):\n{stderr}\n\
             command: {cmd:?}\n{hint}",
            output.status
        );
    }
    for line in stderr.lines().filter(|l| !l.trim().is_empty()) {
        println!("cargo:warning={tool} ({step} {what}): {line}");
    }
}
