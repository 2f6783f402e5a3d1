//! Renders every view in every format from the integration tests' fixture
//! reports into one file each, so a refactor of the renderers can be
//! checked byte for byte: run it before and after into two folders and
//! `diff -r` them.
//!
//! `cargo run -p trapline-report --example render_all -- OUT_DIR`

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::PathBuf;

use trapline_report::{render, Format, Report, View};

/// The fixtures: the shared sample, the full one (every view's rows), and
/// variants that take the other branches (no peer, QEMU's default CPU
/// with a note, unknown TSC frequency, nothing measured).
fn fixtures() -> Vec<(&'static str, Report)> {
    let mut no_peer = common::full_report();
    no_peer.config.peer = None;
    no_peer.config.peer_cpu = None;
    let mut default_cpu = common::full_report();
    default_cpu.config.peer_cpu = Some("default".into());
    default_cpu.config.peer_cpu_note = Some("-cpu host needs KVM".into());
    let mut no_tsc = common::full_report();
    no_tsc.host.tsc_khz = 0;
    no_tsc.host.tsc_khz_crosscheck = None;
    let mut empty = Report::new(Default::default(), Default::default(), Default::default());
    empty.finish();
    vec![
        ("sample", common::sample_report()),
        ("full", common::full_report()),
        ("no-peer", no_peer),
        ("default-cpu", default_cpu),
        ("no-tsc", no_tsc),
        ("empty", empty),
    ]
}

fn main() -> std::io::Result<()> {
    let Some(out) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: render_all OUT_DIR");
        std::process::exit(2);
    };
    std::fs::create_dir_all(&out)?;
    for (name, report) in fixtures() {
        for view in View::all() {
            for format in Format::ALL {
                let file = out.join(format!("{name}.{view}.{format}.{}", format.extension()));
                std::fs::write(file, render(&report, format, view))?;
            }
        }
    }
    Ok(())
}
