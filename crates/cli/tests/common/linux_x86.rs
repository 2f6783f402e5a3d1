//! The shared tiny x86 Linux (`vmlinux.xz` in `../shared/guests/linux/`
//! beside the repository, or `TRAPLINE_LINUX_DIR`) for the tests that boot
//! it: linux.rs, net_linux.rs, virtio_blk.rs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use super::{kvm_present, run, tmp};

/// Where the shared guests live.
pub fn linux_dir() -> PathBuf {
    match std::env::var_os("TRAPLINE_LINUX_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/guests/linux"),
    }
}

/// The kernel, decompressed once into this test binary's scratch
/// directory; `None`, said loudly, when `vmlinux.xz` or xz is missing.
pub fn vmlinux(test: &str) -> Option<PathBuf> {
    static KERNEL: OnceLock<Option<PathBuf>> = OnceLock::new();
    let k = KERNEL.get_or_init(|| {
        let xz = linux_dir().join("vmlinux.xz");
        if !xz.exists() {
            return None;
        }
        let out = tmp("vmlinux");
        let Ok(o) = Command::new("xz").arg("-dc").arg(&xz).output() else {
            eprintln!("no xz here (apt-get install xz-utils)");
            return None;
        };
        assert!(o.status.success(), "xz -dc {}: {:?}", xz.display(), o);
        std::fs::write(&out, &o.stdout).unwrap();
        Some(out)
    });
    if k.is_none() {
        eprintln!(
            "SKIPPED {test}: no vmlinux.xz in {} (set TRAPLINE_LINUX_DIR) or no xz — this Linux test did NOT run",
            linux_dir().display()
        );
    }
    k.clone()
}

/// The kernel for a KVM test (see [`vmlinux`]); `None`, said loudly,
/// without /dev/kvm or the kernel.
pub fn kvm_and_vmlinux(test: &str) -> Option<PathBuf> {
    if !kvm_present(test) {
        return None;
    }
    vmlinux(test)
}

/// One boot of `kernel` with a built-in initramfs (`builtin:vblktest`,
/// `builtin:nettest`) as /init on the path `notify` × `irq`: the guest's
/// command line is `append` between the console and the isa-debug-exit
/// port its init writes before powering off, the run is bounded at 900 s
/// (generous for a loaded host), `extra` goes to `trapline run` as is.
pub fn boot_builtin(
    kernel: &Path,
    initrd: &str,
    (notify, irq): (&str, &str),
    append: &str,
    extra: &[&str],
) -> Output {
    let append = format!("console=ttyS0 panic=-1 quiet {append} exitport=0xf4");
    let mut args = vec![
        "run",
        "--kernel",
        kernel.to_str().unwrap(),
        "--initrd",
        initrd,
        "--virtio-notify",
        notify,
        "--virtio-irq",
        irq,
        "--timeout",
        "900",
        "--append",
        &append,
    ];
    args.extend_from_slice(extra);
    run(&args)
}
