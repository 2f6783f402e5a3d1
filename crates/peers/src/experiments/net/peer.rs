//! The data path's peers: the same `builtin:vnet` on QEMU with
//! `-device virtio-net-device` on a TAP in the namespace (`vhost=off`, and
//! `vhost=on` where /dev/vhost-net exists; the transport's `ioeventfd` on
//! and off), and kvmtool, which has no row yet (it needs an `lkvm` and a
//! build of the payload for its machine).

use std::path::Path;

use super::endpoints::guest_words;
use super::guest;
use super::netns::{NetLab, TAP_NAME};
use super::{row_from, Backend, Child, NetOptions, NetRow, Outcome};
use crate::arch::qemu_net;

/// QEMU's rows: (label, ioeventfd, vhost).
const QEMU_ROWS: [(&str, bool, bool); 3] = [
    ("ioeventfd=off vhost=off", false, false),
    ("ioeventfd=on vhost=off", true, false),
    ("vhost=on", true, true),
];

/// One QEMU run of the payload in the namespace.
fn qemu_child(
    qemu: &Path,
    opts: &NetOptions,
    lab: &NetLab,
    kernel: &Path,
    (ioeventfd, vhost): (bool, bool),
    tsc_khz: Option<f64>,
) -> Result<Child, String> {
    let mut words = format!(
        "{} {} {}",
        guest_words(true),
        opts.amounts(),
        qemu_net::transport_words()
    );
    if qemu_net::NEEDS_TSC_KHZ {
        let khz = tsc_khz.ok_or("the TSC's rate is unknown (no trapline row measured it)")?;
        words += &format!(" tsc_khz={khz:.0}");
    }
    let onoff = |b: bool| if b { "on" } else { "off" };
    let o = lab
        .command("timeout")
        .arg(format!("{}", opts.timeout.as_secs().max(1)))
        .arg(qemu)
        .args([
            "-accel",
            "kvm",
            "-nodefaults",
            "-no-reboot",
            "-display",
            "none",
        ])
        .args(["-serial", "stdio"])
        .args(qemu_net::MACHINE_ARGS)
        .args([
            "-global",
            &format!("virtio-mmio.ioeventfd={}", onoff(ioeventfd)),
        ])
        .arg("-netdev")
        .arg(format!(
            "tap,id=n0,ifname={TAP_NAME},script=no,downscript=no,vhost={}",
            onoff(vhost)
        ))
        .arg("-device")
        .arg(format!(
            "virtio-net-device,netdev=n0,mac={}",
            super::endpoints::mac_text(super::endpoints::GUEST.mac)
        ))
        .arg("-kernel")
        .arg(kernel)
        .args(["-append", &words])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", qemu.display()))?;
    let out = String::from_utf8_lossy(&o.stdout);
    let run = guest::parse(&out).map_err(|why| {
        format!(
            "QEMU: {why} ({}):\n{}{}",
            o.status,
            super::tail(&out),
            super::tail(&String::from_utf8_lossy(&o.stderr))
        )
    })?;
    #[allow(clippy::cast_precision_loss)]
    let hz = match (run.clock_hz, tsc_khz) {
        (hz, _) if hz > 0 => hz as f64,
        (_, Some(khz)) => khz * 1e3,
        _ => return Err("the guest's clock rate is unknown".into()),
    };
    Ok(Child {
        run,
        counts: None,
        hz,
    })
}

/// QEMU's rows, each "not available" with the reason where it cannot run.
pub fn qemu_rows(
    opts: &NetOptions,
    lab: Option<&NetLab>,
    tsc_khz: Option<f64>,
    dir: &Path,
    progress: &dyn Fn(&str),
) -> Vec<NetRow> {
    let na = |path: &str, why: String| NetRow {
        vmm: "qemu",
        path: path.to_string(),
        backend: Backend::Tap,
        outcome: Outcome::NotAvailable(why),
    };
    let qemu = match crate::qemu::find() {
        Ok(q) => q,
        Err(e) => return QEMU_ROWS.iter().map(|r| na(r.0, e.clone())).collect(),
    };
    let Some(lab) = lab else {
        return QEMU_ROWS
            .iter()
            .map(|r| {
                na(
                    r.0,
                    "no network namespace for the TAP (see the trapline tap rows)".into(),
                )
            })
            .collect();
    };
    let kernel = dir.join(format!("vnet.{}", qemu_net::PAYLOAD_EXT));
    let image = trapline_guest::payload("vnet").unwrap_or_default();
    if let Err(e) = std::fs::write(&kernel, image) {
        return QEMU_ROWS
            .iter()
            .map(|r| na(r.0, format!("{}: {e}", kernel.display())))
            .collect();
    }
    QEMU_ROWS
        .iter()
        .map(|&(label, ioeventfd, vhost)| {
            if vhost && !Path::new("/dev/vhost-net").exists() {
                return na(
                    label,
                    "/dev/vhost-net is absent on this host (load the vhost_net module)".into(),
                );
            }
            progress(&format!("qemu {label}, tap"));
            let runs = (0..opts.repeat.max(1)).map(|_| {
                qemu_child(
                    &qemu.binary,
                    opts,
                    lab,
                    &kernel,
                    (ioeventfd, vhost),
                    tsc_khz,
                )
            });
            row_from("qemu", label.into(), Backend::Tap, runs, opts.packets())
        })
        .collect()
}

/// kvmtool's row: not run (no `lkvm` here, or no build of the payload for its machine).
pub fn kvmtool_row() -> NetRow {
    let why = match crate::kvmtool::find() {
        Err(e) => e,
        Ok(_) => "builtin:vnet has no build for kvmtool's machine yet".to_string(),
    };
    NetRow {
        vmm: "kvmtool",
        path: "virtio-net".into(),
        backend: Backend::Tap,
        outcome: Outcome::NotAvailable(why),
    }
}
