//! Builds the guest payloads with the system's gcc and binutils.
//!
//! rustup cannot add a bare-metal target here, and the payloads are tiny C
//! and GNU as programs anyway, so this script drives gcc directly: compile
//! the runtime and each payload freestanding, link at 4 MiB with
//! `c/rt/flat.lds`, and for Multiboot payloads convert the ELF64 to ELF32
//! with objcopy, exactly like kvm-unit-tests' `.flat` files. Low payloads
//! (`realmode`) are self-contained assembly linked at 0x8000 with
//! `c/rt/low.lds`, without the runtime, and converted the same way. The ABI header
//! is generated from `trapline-abi`, never written by hand.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runtime sources every payload links.
const RT_COMMON: &[&str] = &[
    "rt/console.c",
    "rt/string.c",
    "rt/ucall.c",
    "rt/exit.c",
    "rt/cmdline.c",
    "rt/percpu.c",
    "rt/idt.c",
    "rt/start.c",
    "rt/exc.S",
];
/// Extra runtime for Multiboot payloads: 32-bit entry, long mode, SMP.
const RT_FLAT: &[&str] = &[
    "rt/cstart.S",
    "rt/smp.c",
    "rt/fwcfg.c",
    "rt/acpi.c",
    "rt/pci.c",
];
/// Extra runtime for payloads the VMM enters directly in 64-bit mode.
const RT_ELF64: &[&str] = &["rt/entry64.S"];

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// Multiboot v1 ELF32 `.flat`, 64-bit code inside.
    Flat,
    /// Plain ELF64 with no Multiboot header.
    Elf64,
    /// Multiboot v1 ELF32 linked below 1 MiB, no runtime (`c/rt/low.lds`).
    Low,
}

/// (file name without extension, sources, kind). The names are public API.
const PAYLOADS: &[(&str, &[&str], Kind)] = &[
    ("hello", &["payloads/hello.c"], Kind::Flat),
    ("echo", &["payloads/echo.c"], Kind::Flat),
    ("smp", &["payloads/smp.c"], Kind::Flat),
    ("hostile", &["payloads/hostile.c"], Kind::Flat),
    ("triple", &["payloads/triple.c"], Kind::Flat),
    ("spin", &["payloads/spin.c"], Kind::Flat),
    ("emufail", &["payloads/emufail.c"], Kind::Flat),
    (
        "probe",
        &[
            "payloads/probe/harness.c",
            "payloads/probe/exits.c",
            "payloads/probe/pci.c",
            "payloads/probe/ipi.c",
            "payloads/probe/irqfd.c",
        ],
        Kind::Flat,
    ),
    ("compat", &["payloads/compat.c"], Kind::Flat),
    ("kutvmexit", &["payloads/kutvmexit.c"], Kind::Flat),
    ("ringer", &["payloads/ringer.c"], Kind::Flat),
    ("rtc", &["payloads/rtc.c"], Kind::Flat),
    ("s3", &["payloads/s3.c"], Kind::Flat),
    ("vblk", &["payloads/vblk.c"], Kind::Flat),
    ("hello64", &["payloads/hello64.c"], Kind::Elf64),
    ("realmode", &["payloads/realmode.S"], Kind::Low),
];

const CFLAGS: &[&str] = &[
    "-m64",
    "-march=x86-64",
    "-std=gnu11",
    "-O2",
    "-ffreestanding",
    "-fno-pic",
    "-fno-pie",
    "-fno-stack-protector",
    "-fno-asynchronous-unwind-tables",
    "-fno-unwind-tables",
    "-fcf-protection=none",
    "-mno-red-zone",
    "-mgeneral-regs-only",
    "-mcmodel=small",
    // Writing the AP trampoline to GPA 0 is legitimate here.
    "-fno-delete-null-pointer-checks",
    // Stops gcc from turning memset/memcpy's own loops into calls to themselves.
    "-fno-tree-loop-distribute-patterns",
    "-fno-omit-frame-pointer",
    "-Wall",
    "-Wextra",
];

const LDFLAGS: &[&str] = &[
    "-m64",
    "-nostdlib",
    "-static",
    "-no-pie",
    "-Wl,--build-id=none",
    "-Wl,-z,max-page-size=0x1000",
    "-Wl,-z,noexecstack",
    "-Wl,-z,noseparate-code",
];

fn main() {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let src = manifest.join("c");
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    let obj = out.join("obj");
    fs::create_dir_all(&obj).unwrap();

    let cc = env::var("TRAPLINE_GUEST_CC").unwrap_or_else(|_| "gcc".into());
    let objcopy = env::var("TRAPLINE_GUEST_OBJCOPY").unwrap_or_else(|_| "objcopy".into());
    println!("cargo:rerun-if-env-changed=TRAPLINE_GUEST_CC");
    println!("cargo:rerun-if-env-changed=TRAPLINE_GUEST_OBJCOPY");
    println!("cargo:rerun-if-changed=build.rs");
    rerun_for_tree(&src);

    fs::write(out.join("trapline_abi.h"), trapline_abi::c_header()).unwrap();
    fs::write(out.join("trapline_abi_extra.h"), extra_header()).unwrap();

    let includes = [
        format!("-I{}", out.display()),
        format!("-I{}", src.join("rt").display()),
    ];
    let compile = |rel: &str| -> PathBuf {
        let o = obj.join(format!("{}.o", rel.replace(['/', '.'], "_")));
        let mut cmd = Command::new(&cc);
        cmd.args(CFLAGS)
            .args(&includes)
            .arg("-c")
            .arg(src.join(rel))
            .arg("-o")
            .arg(&o);
        run(cmd, &cc, "compile", rel);
        o
    };

    let common: Vec<PathBuf> = RT_COMMON.iter().map(|s| compile(s)).collect();
    let flat: Vec<PathBuf> = RT_FLAT.iter().map(|s| compile(s)).collect();
    let elf64: Vec<PathBuf> = RT_ELF64.iter().map(|s| compile(s)).collect();
    let flat_lds = src.join("rt/flat.lds");
    let low_lds = src.join("rt/low.lds");

    for &(name, sources, kind) in PAYLOADS {
        let (lds, runtime): (&Path, Vec<&PathBuf>) = match kind {
            Kind::Flat => (&flat_lds, flat.iter().chain(&common).collect()),
            Kind::Elf64 => (&flat_lds, elf64.iter().chain(&common).collect()),
            Kind::Low => (&low_lds, Vec::new()),
        };
        let elf = out.join(format!("{name}.elf"));
        let mut cmd = Command::new(&cc);
        cmd.args(LDFLAGS)
            .arg(format!("-Wl,-T,{}", lds.display()))
            .arg("-o")
            .arg(&elf)
            .args(runtime)
            .args(sources.iter().map(|s| compile(s)));
        if kind == Kind::Low {
            // One RWX segment is the point: code, data and stack in one page.
            cmd.arg("-Wl,--no-warn-rwx-segments");
        }
        run(cmd, &cc, "link", name);

        if kind != Kind::Elf64 {
            let mut cmd = Command::new(&objcopy);
            cmd.args(["-O", "elf32-i386"])
                .arg(&elf)
                .arg(out.join(format!("{name}.flat")));
            run(cmd, &objcopy, "convert to elf32-i386", name);
        }
    }

    // Linux user-space programs (the /init of initramfs images the crate
    // packs at run time): libc-free, i386 ABI with `int $0x80` syscalls,
    // like ../shared/guests/linux/tinit.c.
    for &(name, source) in LINUX_PROGRAMS {
        let mut cmd = Command::new(&cc);
        cmd.args([
            "-m32",
            "-static",
            "-nostdlib",
            "-ffreestanding",
            "-fno-pic",
            "-fno-pie",
            "-no-pie",
            "-fno-stack-protector",
            "-fno-asynchronous-unwind-tables",
            "-fcf-protection=none",
            "-Os",
            "-Wall",
            "-Wextra",
            "-Wl,--build-id=none",
        ])
        .arg("-o")
        .arg(out.join(name))
        .arg(src.join(source));
        run(cmd, &cc, "build the Linux program", name);
    }
}

/// (output name, source): /init programs for Linux guests.
const LINUX_PROGRAMS: &[(&str, &str)] = &[("vblktest", "linux/vblktest.c")];

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

/// Runs one tool step; a missing or failing tool is a build error that says what to install.
fn run(mut cmd: Command, tool: &str, step: &str, what: &str) {
    let output = cmd.output().unwrap_or_else(|e| {
        panic!(
            "trapline-guest: could not run `{tool}` to {step} {what}: {e}. \
             The guest payloads need gcc and binutils (objcopy) for x86-64: \
             install them (e.g. `apt-get install gcc binutils`), or point \
             TRAPLINE_GUEST_CC / TRAPLINE_GUEST_OBJCOPY at them."
        )
    });
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        panic!(
            "trapline-guest: `{tool}` failed to {step} {what} ({}):\n{stderr}\n\
             command: {cmd:?}\n\
             The guest payloads need a working x86-64 gcc and binutils \
             (e.g. `apt-get install gcc binutils`).",
            output.status
        );
    }
    for line in stderr.lines().filter(|l| !l.trim().is_empty()) {
        println!("cargo:warning={tool} ({step} {what}): {line}");
    }
}
