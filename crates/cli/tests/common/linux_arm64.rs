//! Debian's stock arm64 kernel as trapline's guest (tests/linux_arm64.rs,
//! tests/virtio_blk.rs): the very kernel the emulated ARM64 host of
//! scripts/arm64/ boots (`vmlinuz`, an uncompressed arm64 `Image`), with an
//! initramfs written here by crates/guest's cpio writer from the busybox
//! and the virtio modules scripts/arm64/setup.sh unpacked beside it, and
//! the `/init` below. They are found in `$TRAPLINE_ARM64_CACHE` (test.sh
//! packs them at the same path in the emulated host), else in the
//! repository's `target/arm64-host/`; without them the tests say loudly
//! that they did not run.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::{Mutex, OnceLock};

use trapline_guest::cpio::{newc, Entry};

use super::trapline;

/// The guest's `/init` (busybox sh). The kernel passes the command line's
/// unknown `name=value` words (no dot in the name) to init's environment:
///
/// * `tl_echo=1`: prints `LINUX-ARM64-READY`, reads one line from the
///   console (PL011 receive) and prints it back as `LINUX-ARM64-ECHO …`;
/// * `tl_disk=1` or `tl_net=ADDR`: loads the modules of
///   `/lib/modules/order` (virtio_mmio, virtio_blk, virtio_net and what it
///   needs);
/// * `tl_disk=1`: prints the
///   first 16 bytes of `/dev/vda` in hex, writes `LINUX-WROTE-<tl_woff>`
///   at byte `tl_woff` (buffered, then fsync), and when there is a
///   `/dev/vdb` (the tests' read-only disk) tries one byte there;
/// * `tl_net=ADDR`: brings eth0 up with busybox `ip` at ADDR/24, prints
///   `LINUX-ARM64-ETH0 <mac> <operstate>`, then runs `/bin/nettest`
///   (crates/guest's `c/linux/nettest.c`, which takes `net.ip=`,
///   `net.peer=` and `net.count=` from the command line and prints
///   `NETTEST-UDP …` and `NETTEST-RESULT ok|fail …`) and
///   `LINUX-ARM64-NET status=<its exit status>`;
/// * always: `LINUX-ARM64-PCI` lists the PCI functions Linux enumerated on
///   the PCIe host bridge (`0000:00:00.0=0x1b36:0x0008 …`);
/// * `tl_end=reboot` reboots (PSCI SYSTEM_RESET), anything else powers off
///   (PSCI SYSTEM_OFF).
///
/// A failing init would panic the kernel and, with `panic=-1`, reboot it:
/// the tests therefore look for `LINUX-ARM64-END`, printed last.
pub const INIT: &str = r#"#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo "LINUX-ARM64-INIT pid=$$ cpus=$(grep -c ^processor /proc/cpuinfo) uptime=$(cut -d ' ' -f 1 /proc/uptime)"
echo "LINUX-ARM64-CMDLINE $(cat /proc/cmdline)"
echo "LINUX-ARM64-IRQS $(head -n 1 /proc/interrupts)"
dmesg | grep -E 'earlycon|console \[' | sed 's/^/LINUX-ARM64-DMESG /'
echo "LINUX-ARM64-PCI $(for d in /sys/bus/pci/devices/*; do [ -e "$d" ] && printf '%s=%s:%s ' "${d##*/}" "$(cat "$d/vendor")" "$(cat "$d/device")"; done)"
if [ -n "$tl_echo" ]; then
  echo "LINUX-ARM64-READY"
  read -r -t 120 line
  echo "LINUX-ARM64-ECHO $line"
fi
if [ -n "$tl_disk$tl_net" ]; then
  for m in $(cat /lib/modules/order); do
    insmod "/lib/modules/$m" || echo "LINUX-ARM64-INSMOD-FAILED $m"
  done
fi
if [ -n "$tl_disk" ]; then
  i=0
  while [ ! -b /dev/vda ] && [ "$i" -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
  echo "LINUX-ARM64-VDA-HEAD $(dd if=/dev/vda bs=16 count=1 2>/dev/null | od -An -tx1 | tr -d ' \n')"
  printf 'LINUX-WROTE-%s' "$tl_woff" | dd of=/dev/vda bs=1 seek="$tl_woff" conv=notrunc,fsync 2>/dev/null
  echo "LINUX-ARM64-VDA-WRITE status=$?"
  if [ -b /dev/vdb ]; then
    echo "LINUX-ARM64-VDB-RO $(cat /sys/block/vdb/ro)"
    printf 'X' | dd of=/dev/vdb bs=1 conv=notrunc,fsync 2>/dev/null
    echo "LINUX-ARM64-VDB-WRITE status=$?"
  fi
fi
if [ -n "$tl_net" ]; then
  i=0
  while [ ! -e /sys/class/net/eth0 ] && [ "$i" -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
  ip link set eth0 up && ip addr add "$tl_net/24" dev eth0
  echo "LINUX-ARM64-ETH0 $(cat /sys/class/net/eth0/address) $(cat /sys/class/net/eth0/operstate)"
  /bin/nettest
  echo "LINUX-ARM64-NET status=$?"
fi
echo "LINUX-ARM64-END ${tl_end:-poweroff}"
case "$tl_end" in
  reboot) reboot -f ;;
  *) poweroff -f ;;
esac
"#;

/// The command line every boot starts with: the PL011 as the console
/// (and as the early console, found through the device tree's
/// `stdout-path`), quiet (every console byte is an exit), and a panic
/// ends the VM at once. As for the emulated host itself, the crypto
/// self-tests and the read-only kernel memory's W+X check are skipped:
/// seconds under the emulator, nothing of trapline's.
pub const APPEND: &str = "console=ttyAMA0 earlycon quiet panic=-1 cryptomgr.notests=1 rodata=off";

/// What a boot needs: the kernel and the initramfs written for it.
pub struct LinuxGuest {
    pub kernel: PathBuf,
    pub initrd: PathBuf,
}

/// Where setup.sh unpacked the kernel, busybox and modules.
pub fn cache_dir() -> PathBuf {
    match std::env::var_os("TRAPLINE_ARM64_CACHE") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/arm64-host"),
    }
}

/// The initramfs: `/init`, `/bin/busybox`, `/bin/nettest`, `/lib/modules/`
/// with `order`.
fn initramfs(cache: &Path) -> std::io::Result<Vec<u8>> {
    let busybox = std::fs::read(cache.join("busybox"))?;
    let modules_dir = cache.join("modules");
    let order = std::fs::read_to_string(modules_dir.join("order"))?;
    let mut modules = Vec::new();
    for name in order.split_whitespace() {
        modules.push((
            format!("lib/modules/{name}"),
            std::fs::read(modules_dir.join(name))?,
        ));
    }
    let mut entries = vec![
        Entry::Dir("bin", 0o755),
        Entry::Dir("lib", 0o755),
        Entry::Dir("lib/modules", 0o755),
        Entry::File("init", 0o755, INIT.as_bytes()),
        Entry::File("bin/busybox", 0o755, &busybox),
        Entry::File("bin/nettest", 0o755, trapline_guest::LINUX_NETTEST),
        Entry::File("lib/modules/order", 0o644, order.as_bytes()),
    ];
    for (path, bytes) in &modules {
        entries.push(Entry::File(path, 0o644, bytes));
    }
    Ok(newc(&entries))
}

/// The kernel and the initramfs (written once per test executable), or
/// `None`, said loudly, when setup.sh's files are not there.
pub fn linux_guest(test: &str) -> Option<&'static LinuxGuest> {
    static GUEST: OnceLock<Result<LinuxGuest, String>> = OnceLock::new();
    let guest = GUEST.get_or_init(|| {
        let cache = cache_dir();
        let kernel = cache.join("vmlinuz");
        if !kernel.is_file() {
            return Err(format!("no {}", kernel.display()));
        }
        let cpio = initramfs(&cache)
            .map_err(|e| format!("busybox or modules/ in {}: {e}", cache.display()))?;
        let initrd = super::tmp("linux-arm64-initramfs.cpio");
        std::fs::write(&initrd, cpio).map_err(|e| format!("{}: {e}", initrd.display()))?;
        Ok(LinuxGuest { kernel, initrd })
    });
    match guest {
        Ok(g) => Some(g),
        Err(why) => {
            eprintln!(
                "SKIPPED {test}: {why} (scripts/arm64/setup.sh unpacks Debian's arm64 kernel, busybox and modules there; TRAPLINE_ARM64_CACHE moves it) — this Linux test did NOT run"
            );
            None
        }
    }
}

/// Boots `guest` with `args` after `run --kernel K --initrd I`. With
/// `answer`, writes it (and a newline) to the console once the guest
/// prints `LINUX-ARM64-READY`. One boot at a time: under the emulator two
/// guests side by side only starve each other.
pub fn boot(guest: &LinuxGuest, args: &[&str], answer: Option<&str>) -> Output {
    static ONE_BOOT: Mutex<()> = Mutex::new(());
    let _one = ONE_BOOT.lock().unwrap_or_else(|e| e.into_inner());
    let mut child = trapline()
        .arg("run")
        .arg("--kernel")
        .arg(&guest.kernel)
        .arg("--initrd")
        .arg(&guest.initrd)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn trapline");
    let mut stdin = child.stdin.take();
    let mut err_pipe = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err_pipe.read_to_end(&mut b);
        b
    });
    let mut stdout = Vec::new();
    let mut lines = BufReader::new(child.stdout.take().unwrap());
    let mut line = Vec::new();
    while lines.read_until(b'\n', &mut line).unwrap_or(0) > 0 {
        if line.starts_with(b"LINUX-ARM64-READY") {
            if let (Some(answer), Some(mut pipe)) = (answer, stdin.take()) {
                pipe.write_all(format!("{answer}\n").as_bytes())
                    .expect("write to trapline's stdin");
            }
        }
        stdout.append(&mut line);
    }
    drop(stdin);
    let status = child.wait().expect("wait for trapline");
    let out = Output {
        status,
        stdout,
        stderr: stderr.join().unwrap(),
    };
    eprintln!(
        "--- trapline run {args:?}\n--- stdout:\n{}--- stderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The command-line words that make init use the disks ([`INIT`]).
pub const DISK_APPEND: &str = "tl_disk=1 tl_woff=65536";
/// Where init writes its mark on /dev/vda (`tl_woff`).
const WOFF: usize = 65536;

/// Two disk files for one boot: /dev/vda (read-write) and /dev/vdb
/// (`,ro`), 128 KiB each of a known pattern.
pub struct Disks {
    vda: PathBuf,
    vdb: PathBuf,
    bytes: Vec<u8>,
}

impl Disks {
    /// Writes the two files, named after `name`.
    pub fn new(name: &str) -> Self {
        let bytes: Vec<u8> = (0..256 * 512).map(|i| (i * 7 + 3) as u8).collect();
        let vda = super::tmp(&format!("{name}-vda.img"));
        let vdb = super::tmp(&format!("{name}-vdb.img"));
        std::fs::write(&vda, &bytes).unwrap();
        std::fs::write(&vdb, &bytes).unwrap();
        Disks { vda, vdb, bytes }
    }

    /// `--disk VDA --disk VDB,ro --virtio-notify NOTIFY --virtio-irq IRQ`.
    pub fn args(&self, notify: &str, irq: &str) -> Vec<String> {
        [
            "--disk".to_string(),
            self.vda.display().to_string(),
            "--disk".to_string(),
            format!("{},ro", self.vdb.display()),
            "--virtio-notify".to_string(),
            notify.to_string(),
            "--virtio-irq".to_string(),
            irq.to_string(),
        ]
        .to_vec()
    }

    /// Checks what init did with [`DISK_APPEND`] (`out`: the console):
    /// Linux read the host's bytes from /dev/vda, the host reads Linux's
    /// write and nothing else changed; /dev/vdb is read-only to Linux, its
    /// write failed and the file is untouched.
    pub fn check(&self, out: &str, what: &str) {
        let hex: String = self.bytes[..16]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert!(!out.contains("INSMOD-FAILED"), "{what}: {out}");
        assert_eq!(
            after(out, "LINUX-ARM64-VDA-HEAD"),
            Some(hex.as_str()),
            "{what}: Linux read the host's bytes:\n{out}"
        );
        assert_eq!(
            after(out, "LINUX-ARM64-VDA-WRITE"),
            Some("status=0"),
            "{what}: {out}"
        );
        let now = std::fs::read(&self.vda).unwrap();
        let mark = format!("LINUX-WROTE-{WOFF}");
        assert!(
            now[WOFF..].starts_with(mark.as_bytes()),
            "{what}: the host reads Linux's write"
        );
        assert_eq!(now.len(), self.bytes.len(), "{what}");
        assert_eq!(
            now[..WOFF],
            self.bytes[..WOFF],
            "{what}: nothing else written"
        );
        assert_eq!(
            now[WOFF + mark.len()..],
            self.bytes[WOFF + mark.len()..],
            "{what}: nothing else written"
        );
        assert_eq!(after(out, "LINUX-ARM64-VDB-RO"), Some("1"), "{what}: {out}");
        assert!(
            after(out, "LINUX-ARM64-VDB-WRITE").is_some_and(|s| s != "status=0"),
            "{what}: the read-only disk refused the write: {out}"
        );
        assert_eq!(
            std::fs::read(&self.vdb).unwrap(),
            self.bytes,
            "{what}: /dev/vdb untouched"
        );
    }
}

/// The rest of the line after `marker` in `out` (the first such line).
pub fn after<'a>(out: &'a str, marker: &str) -> Option<&'a str> {
    out.lines()
        .find_map(|l| l.split_once(marker).map(|(_, rest)| rest.trim()))
}
