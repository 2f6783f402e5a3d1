//! The anatomy of user exits: trapline's probe VMs with the exit-stamp
//! mailbox armed run the probe's anatomy pass (`anatomy=<ids>`), and the
//! raw-KVM floor stamps the same paths on a bare VM; each path's legs
//! (exit, the VMM's handling, entry) and round trip come back as
//! histograms and go into the report (`Report::attach_anatomy` adds each
//! path's ordinary cost per iteration from the run's own scenarios).

use std::collections::BTreeMap;
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};

use trapline_abi::{
    self as abi, AnatomyHeader, ClockAlign, GuestHist, Histogram, UcallKind, ANATOMY_HEADER_SIZE,
    ANATOMY_ITERATIONS, GUEST_HIST_SIZE, HIST_BUCKETS,
};
use trapline_lab_devices::{self as lab, LabFixtures};
use trapline_machine::{
    ExtensionContext, HostKvm, Machine, MachineConfig, MachineExtension, SeccompMode, SerialOutput,
};
use trapline_report::{Anatomy, AnatomyPath, Spread, TRAPLINE_VMM};
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};

use crate::arch;
use crate::catalog::{self, MachineKind, Scenario};
use crate::floor::{self, FloorAnatomy};
use crate::runner::LabOptions;

/// The floor's rung its anatomy VM is (the bare one).
const FLOOR_VMM: &str = "raw-kvm";
/// Unstamped accesses before the floor's stamped run.
const FLOOR_WARMUP: usize = 32;

/// Measure every user path of this host's architecture on trapline and
/// on the raw-KVM floor.
pub(crate) fn measure(kvm: &HostKvm, opts: &LabOptions) -> Anatomy {
    let names = trapline_report::anatomy_paths(arch::ARM64);
    measure_paths(kvm, opts, names, ANATOMY_ITERATIONS as usize)
}

/// Measure `names` on trapline (the probe's pass: [`ANATOMY_ITERATIONS`]
/// accesses each) and on the raw-KVM floor (`floor_n` accesses each).
fn measure_paths(
    kvm: &HostKvm,
    opts: &LabOptions,
    names: &[&'static str],
    floor_n: usize,
) -> Anatomy {
    let mut out = Anatomy {
        iterations: ANATOMY_ITERATIONS,
        ..Anatomy::default()
    };
    let mut by_kind: BTreeMap<MachineKind, Vec<&'static Scenario>> = BTreeMap::new();
    // As the scenarios' own runs ask: a path this host's KVM cannot take
    // (arm64's HVC without KVM's SMCCC filter, which KVM then answers
    // itself) says why instead of reporting accesses with no exit.
    let mut support = arch::HostSupport::new();
    for &name in names {
        match catalog::find(name) {
            Some(s) => match support.why_not(kvm, s) {
                Some(why) => out.paths.push(unmeasured(name, TRAPLINE_VMM, &why)),
                None => by_kind.entry(s.machine).or_default().push(s),
            },
            None => out
                .paths
                .push(unmeasured(name, TRAPLINE_VMM, "not in this host's catalog")),
        }
    }
    let mut aligned: Option<String> = None;
    for (kind, list) in by_kind {
        match run_vm(kvm, kind, &list, opts) {
            Ok((rows, align)) => {
                out.paths.extend(rows);
                aligned = aligned.or(align);
            }
            Err(e) => out
                .paths
                .extend(list.iter().map(|s| unmeasured(s.name(), TRAPLINE_VMM, &e))),
        }
    }
    out.notes.push(format!(
        "trapline: {}",
        aligned.unwrap_or_else(|| "no path was stamped".into())
    ));
    let mut floor_note = None;
    for &name in names {
        let row = floor_path(kvm, name, floor_n);
        floor_note = floor_note.or_else(|| (!row.align.is_empty()).then(|| row.align.clone()));
        out.paths.push(row);
    }
    out.notes.push(format!(
        "raw-kvm floor: {}",
        floor_note.unwrap_or_else(|| "no path was stamped".into())
    ));
    out
}

/// A row that says why it has no numbers.
fn unmeasured(name: &str, vmm: &str, why: &str) -> AnatomyPath {
    AnatomyPath {
        name: name.into(),
        vmm: vmm.into(),
        align: ClockAlign::None.describe().into(),
        reason: Some(why.into()),
        ..AnatomyPath::default()
    }
}

/// The probe's machine for `kind`, with the mailbox armed and the lab's
/// devices, running only the anatomy pass over `list`.
fn config(kind: MachineKind, list: &[&Scenario], opts: &LabOptions) -> MachineConfig {
    let ids: Vec<String> = list.iter().map(|s| s.id.id.to_string()).collect();
    let mut cfg = MachineConfig::new(trapline_guest::PROBE.to_vec(), "probe");
    cfg.append = format!("s= warmup=1 anatomy={}", ids.join(","));
    cfg.vcpus = crate::peer::cpus_for(kind);
    cfg.pit = false;
    if kind == MachineKind::NoIrqchip {
        cfg.irqchip = trapline_machine::Irqchip::None;
    }
    cfg.timeout = Some(opts.vm_timeout);
    cfg.extension = Some(Box::new(|ctx: &mut ExtensionContext<'_>| {
        ctx.publish_exit_stamps(arch::ANATOMY_MAILBOX);
        Box::new(LabFixtures::all()).install(ctx)
    }));
    // As the scenarios' own VMs were run: the legs then add up to the
    // same round trip the batches timed.
    cfg.profile = opts.stat;
    cfg.pci_testdev = true;
    cfg.seccomp = if opts.seccomp {
        SeccompMode::VcpusOnly
    } else {
        SeccompMode::Off
    };
    cfg
}

/// One anatomy VM: its rows and how its clocks were aligned.
fn run_vm(
    kvm: &HostKvm,
    kind: MachineKind,
    list: &[&Scenario],
    opts: &LabOptions,
) -> Result<(Vec<AnatomyPath>, Option<String>), String> {
    let (tx, rx) = channel();
    let serial = Arc::new(Mutex::new(Vec::new()));
    let mut cfg = config(kind, list, opts);
    cfg.serial = SerialOutput::Capture(serial.clone());
    cfg.ucall_sink = Some(tx);
    let machine = Machine::build(kvm, cfg).map_err(|e| format!("building the anatomy VM: {e}"))?;
    let memory = lab::handles(&machine)
        .map_err(|e| format!("anatomy VM handles: {e}"))?
        .memory;
    let run = machine
        .run()
        .map_err(|e| format!("running the anatomy VM: {e}"))?;
    let mut rows = Vec::new();
    let mut align = None;
    for ev in rx.try_iter().filter(|e| e.kind == UcallKind::Anatomy) {
        let Some(s) = list.iter().find(|s| u64::from(s.id.id) == ev.args[0]) else {
            continue;
        };
        let row = match read_path(&memory, ev.args[1], ev.args[2]) {
            Ok((h, legs)) => {
                let row = path_row(s.name(), TRAPLINE_VMM, &h, &legs);
                align.get_or_insert_with(|| align_note(&h));
                row
            }
            Err(e) => unmeasured(s.name(), TRAPLINE_VMM, &e),
        };
        rows.push(row);
    }
    for s in list {
        if !rows.iter().any(|r| r.name == s.name()) {
            let tail = String::from_utf8_lossy(&serial.lock().unwrap_or_else(|e| e.into_inner()))
                .lines()
                .last()
                .unwrap_or("")
                .to_string();
            rows.push(unmeasured(
                s.name(),
                TRAPLINE_VMM,
                &format!(
                    "the probe sent no anatomy for it ({}; serial: {tail})",
                    run.outcome.describe()
                ),
            ));
        }
    }
    Ok((rows, align))
}

/// How a block's clocks were aligned, in words.
fn align_note(h: &AnatomyHeader) -> String {
    let how = ClockAlign::from_raw(h.align);
    match how {
        ClockAlign::None => "clocks not aligned (KVM gave no offset): round trips only".into(),
        _ => format!("{} (error {} ticks)", how.describe(), h.offset_err),
    }
}

/// A guest's block at `gpa` as the Anatomy ucall with `status` announced
/// it: its header and the four histograms, checked.
fn read_path(
    mem: &GuestMemoryMmap,
    gpa: u64,
    status: u64,
) -> Result<(AnatomyHeader, Vec<Histogram>), String> {
    if status != abi::ResultStatus::Ok as u64 {
        return Err(match abi::ResultStatus::from_raw(status) {
            Some(abi::ResultStatus::Unsupported) => {
                "the probe cannot take this path on this machine".into()
            }
            _ => format!("the probe's anatomy pass failed (status {status})"),
        });
    }
    let len = ANATOMY_HEADER_SIZE + abi::ANATOMY_LEGS as usize * GUEST_HIST_SIZE;
    let mut raw = vec![0u8; len];
    mem.read_slice(&mut raw, GuestAddress(gpa))
        .map_err(|e| format!("the anatomy block at {gpa:#x} is not in RAM: {e}"))?;
    let h = header(&raw[..ANATOMY_HEADER_SIZE]);
    if h.magic != abi::ANATOMY_MAGIC {
        return Err(format!("the anatomy block at {gpa:#x} lacks its magic"));
    }
    let legs = raw[ANATOMY_HEADER_SIZE..]
        .chunks_exact(GUEST_HIST_SIZE)
        .map(|c| Histogram::from_guest(&guest_hist(c)).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((h, legs))
}

/// The little-endian u64 at word `i` of `b`.
fn word(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[8 * i..8 * i + 8]);
    u64::from_le_bytes(w)
}

/// An [`AnatomyHeader`] from its bytes.
fn header(b: &[u8]) -> AnatomyHeader {
    AnatomyHeader {
        magic: word(b, 0),
        align: word(b, 1),
        offset_err: word(b, 2),
        iterations: word(b, 3),
        recorded: word(b, 4),
        misordered: word(b, 5),
        stale: word(b, 6),
        batch: word(b, 7),
        stamp_cost: word(b, 8),
    }
}

/// A [`GuestHist`] from its bytes (`GUEST_HIST_SIZE` of them).
fn guest_hist(b: &[u8]) -> GuestHist {
    let mut counts = [0u32; HIST_BUCKETS];
    for (i, c) in counts.iter_mut().enumerate() {
        let o = 40 + 4 * i;
        *c = u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    }
    GuestHist {
        magic: word(b, 0),
        count: word(b, 1),
        min: word(b, 2),
        max: word(b, 3),
        sum: word(b, 4),
        counts,
    }
}

/// A path's row from its block (legs: exit, VMM, entry, round trip).
fn path_row(name: &str, vmm: &str, h: &AnatomyHeader, legs: &[Histogram]) -> AnatomyPath {
    let align = ClockAlign::from_raw(h.align);
    let why = if align == ClockAlign::None {
        Some("the clocks could not be aligned (KVM gave no offset): round trip only".into())
    } else if h.recorded == 0 {
        Some(format!(
            "no access split: {} with another exit between the stamps, {} out of order on the common time line",
            h.stale, h.misordered
        ))
    } else {
        None
    };
    AnatomyPath {
        name: name.into(),
        vmm: vmm.into(),
        align: align.describe().into(),
        align_error: (align != ClockAlign::None).then_some(h.offset_err),
        reason: why,
        accesses: h.iterations,
        split: h.recorded,
        exit: legs.first().and_then(Spread::of),
        handling: legs.get(1).and_then(Spread::of),
        entry: legs.get(2).and_then(Spread::of),
        round_trip: legs.get(3).and_then(Spread::of),
        per_iteration: (h.batch > 0).then_some(h.batch as f64),
        scenario_per_iteration: None,
        stamp_cost: (h.stamp_cost > 0).then_some(h.stamp_cost),
    }
}

/// The floor's row for `name`, from `n` stamped accesses.
fn floor_path(kvm: &HostKvm, name: &'static str, n: usize) -> AnatomyPath {
    match floor::arch::anatomy::measure(kvm.kvm(), name, n, FLOOR_WARMUP) {
        Ok(a) => floor_row(&a),
        Err(e) => unmeasured(name, FLOOR_VMM, &e),
    }
}

/// The floor's stamps split into the same histograms as the guest's.
fn floor_row(a: &FloorAnatomy) -> AnatomyPath {
    let mut legs = vec![Histogram::new(); 4];
    let mut h = AnatomyHeader {
        magic: abi::ANATOMY_MAGIC,
        iterations: a.stamps.len() as u64,
        ..AnatomyHeader::default()
    };
    let offset = match &a.offset {
        Ok((offset, err, how)) => {
            h.align = *how as u64;
            h.offset_err = *err;
            Some(*offset)
        }
        Err(_) => None,
    };
    for s in &a.stamps {
        legs[3].record(s.t3.wrapping_sub(s.t0));
        match offset.map(|o| abi::legs(*s, o)) {
            Some(Some(l)) => {
                legs[0].record(l.exit);
                legs[1].record(l.vmm);
                legs[2].record(l.entry);
                h.recorded += 1;
            }
            Some(None) => h.misordered += 1,
            None => h.stale += 1,
        }
    }
    // No batch beside the floor's legs: the span of consecutive stamped
    // accesses also holds the instructions between them, which a nested
    // host may emulate (measured here: about twice the round trip), so
    // the floor is held to its `raw-kvm` scenario where the run has it,
    // else to its stamped round trip.
    h.stamp_cost = a.stamp_cost;
    let mut row = path_row(a.path, FLOOR_VMM, &h, &legs);
    if let Err(e) = &a.offset {
        row.reason = Some(format!(
            "the clocks could not be aligned: {e}; round trip only"
        ));
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_floor_run_splits_into_the_same_legs_as_the_abi_says() {
        const OFF: u64 = 1 << 40;
        let stamps = (0..100u64)
            .map(|i| {
                let t0 = 17_200 * i + OFF;
                let t1 = t0 - OFF + 9_000 + i;
                let t2 = t1 + 100;
                abi::Stamps {
                    t0,
                    t1,
                    t2,
                    t3: t2 + OFF + 8_000,
                }
            })
            .collect();
        let a = FloorAnatomy {
            path: "pio-user-out",
            stamps,
            stamp_cost: 40,
            offset: Ok((OFF, 0, ClockAlign::TscOffset)),
        };
        let row = floor_row(&a);
        assert_eq!((row.accesses, row.split), (100, 100));
        assert_eq!(
            row.per_iteration, None,
            "no batches beside the floor's legs"
        );
        assert!(row.reason.is_none());
        let e = row.exit.unwrap();
        assert!((9_000..=9_100).contains(&e.p50), "{e:?}");
        assert_eq!(row.handling.unwrap().p50, 100);
        let (c, _) = row.sum_check().unwrap();
        assert!(c.within(1.0), "{c:?}");
        let unaligned = floor_row(&FloorAnatomy {
            offset: Err("no attribute".into()),
            ..a
        });
        assert!(!unaligned.has_legs() && unaligned.round_trip.is_some());
        assert!(unaligned.reason.unwrap().contains("no attribute"));
    }

    #[test]
    fn a_guest_block_is_read_back_field_by_field() {
        let mem = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), 0x20000)]).unwrap();
        let words = [abi::ANATOMY_MAGIC, 1, 0, 2048, 2000, 3, 45, 0, 60];
        for (i, w) in words.iter().enumerate() {
            mem.write_obj(*w, GuestAddress(0x1000 + 8 * i as u64))
                .unwrap();
        }
        for l in 0..4u64 {
            let at = 0x1000 + ANATOMY_HEADER_SIZE as u64 + l * GUEST_HIST_SIZE as u64;
            // magic, count 1, min = max = sum = 5, one count in bucket 5.
            for (i, w) in [trapline_abi::HIST_MAGIC, 1, 5, 5, 5].iter().enumerate() {
                mem.write_obj(*w, GuestAddress(at + 8 * i as u64)).unwrap();
            }
            mem.write_obj(1u32, GuestAddress(at + 40 + 4 * 5)).unwrap();
        }
        let (h, legs) = read_path(&mem, 0x1000, 0).unwrap();
        assert_eq!((h.iterations, h.recorded, h.stale), (2048, 2000, 45));
        assert_eq!(h.stamp_cost, 60);
        assert_eq!(legs.len(), 4);
        assert_eq!(legs[0].quantile(0.5), Some(5));
        assert!(read_path(&mem, 0x1008, 0).is_err(), "no magic there");
        assert!(read_path(&mem, 0x1000, 2)
            .unwrap_err()
            .contains("cannot take"));
        assert!(read_path(&mem, 0x1f000, 0).is_err(), "beyond RAM");
    }

    /// On KVM: every PIO user exit is split (one publish per access, every
    /// leg in order on KVM's time line), and the legs' medians fit inside
    /// the stamped round trip's spread. Skips loudly without /dev/kvm.
    #[test]
    fn a_pio_user_exit_is_split_into_ordered_legs_on_kvm() {
        let Some(row) = pio_user_out_row() else {
            return;
        };
        assert_eq!(row.accesses, ANATOMY_ITERATIONS, "{row:?}");
        assert!(
            row.split * 10 >= row.accesses * 9,
            "most accesses split: {row:?}"
        );
        assert!(
            row.per_iteration.is_some() && row.stamp_cost.is_some(),
            "{row:?}"
        );
        let (e, h, n, r) = (
            row.exit.unwrap(),
            row.handling.unwrap(),
            row.entry.unwrap(),
            row.round_trip.unwrap(),
        );
        assert!(
            e.p50 <= r.p50 && h.p50 <= r.p50 && n.p50 <= r.p50,
            "{row:?}"
        );
        assert!(e.min + h.min + n.min <= r.p99, "{row:?}");
    }

    /// On KVM: the legs add up to the round trip the scenario's own loop
    /// times beside them, within the lab's 5 % (arithmetic, not a speed).
    /// Ignored by default: it needs a host whose guest runs its own
    /// instructions natively (bare metal, or nested VMX/SVM). This
    /// project's hosts run KVM as `kvm_pvm`, where the probe's empty loop
    /// costs ~4,500 cycles an iteration and a guest RDTSC as much as the
    /// exit it brackets, so the stamps cannot be taken off to 5 % (see
    /// docs/results/2026-11-29-anatomy.md). There: `cargo test -p
    /// trapline-lab --lib anatomy -- --ignored`.
    #[test]
    #[ignore = "needs a host whose guest instructions run natively: see the doc comment"]
    fn a_pio_user_exits_legs_add_up_to_its_round_trip_on_kvm() {
        let mut last = None;
        for _ in 0..3 {
            let Some(row) = pio_user_out_row() else {
                return;
            };
            if row.adds_up() == Some(true) {
                return;
            }
            last = Some(row);
        }
        let row = last.unwrap();
        panic!(
            "the legs did not add up in three tries: {:?} ({row:?})",
            row.sum_check()
        );
    }

    /// Accesses the floor stamps per path in the KVM tests (few: under
    /// TCG, the emulated arm64 host, an exit costs 50–600 µs).
    const FLOOR_N: usize = 32;

    /// On KVM, either architecture: the user MMIO paths (and arm64's HVC)
    /// on trapline and on the raw floor, through the lab's own anatomy
    /// measurement. Every row is measured or says why; a measured row has
    /// its accesses as asked, split into legs inside its round trip (the
    /// floor's every access, trapline's nearly all: the probe counts an
    /// access another exit came between as stale). Behaviour, never
    /// timings: it runs in the emulated arm64 host's CI stage.
    #[test]
    fn user_mmio_paths_split_on_trapline_and_the_floor_on_kvm() {
        if !std::path::Path::new("/dev/kvm").exists() {
            eprintln!("SKIPPED: /dev/kvm is absent: this KVM test did NOT run");
            return;
        }
        let kvm = HostKvm::open().unwrap();
        let mut opts = LabOptions::for_tests(None);
        opts.vm_timeout = std::time::Duration::from_secs(180);
        let mut names = vec!["mmio-user-read", "mmio-user-write"];
        if arch::ARM64 {
            names.push("hypercall-user");
        }
        let a = measure_paths(&kvm, &opts, &names, FLOOR_N);
        eprintln!("notes: {:?}", a.notes);
        assert_eq!(a.paths.len(), 2 * names.len(), "{:?}", a.paths);
        for name in &names {
            for (vmm, n) in [
                (TRAPLINE_VMM, ANATOMY_ITERATIONS),
                (FLOOR_VMM, FLOOR_N as u64),
            ] {
                let row = a
                    .paths
                    .iter()
                    .find(|r| r.name == *name && r.vmm == vmm)
                    .unwrap_or_else(|| panic!("{name} on {vmm}: {:?}", a.paths));
                check_row(row, n);
            }
        }
        if arch::ARM64 {
            let floor = a.notes.iter().find(|n| n.starts_with("raw-kvm floor"));
            assert!(
                floor.is_some_and(|n| n.contains("KVM_REG_ARM_TIMER_CNT")),
                "the arm64 floor aligned its clocks as trapline does: {:?}",
                a.notes
            );
        }
    }

    /// One anatomy row: measured (`n` accesses, split, legs inside the
    /// round trip) or unmeasured with a reason (only where the path is
    /// not this host's to take: the HVC without KVM's SMCCC filter).
    fn check_row(row: &AnatomyPath, n: u64) {
        let what = format!("{} on {}", row.name, row.vmm);
        eprintln!(
            "{what}: {} accesses, {} split; p50 exit {:?} handling {:?} entry {:?} round {:?} \
             (ticks; TCG or nested: behaviour only){}",
            row.accesses,
            row.split,
            row.exit.map(|s| s.p50),
            row.handling.map(|s| s.p50),
            row.entry.map(|s| s.p50),
            row.round_trip.map(|s| s.p50),
            row.reason
                .as_ref()
                .map_or(String::new(), |r| format!("; {r}"))
        );
        if row.round_trip.is_none() {
            let why = row.reason.as_deref().unwrap_or("");
            assert!(
                row.name == "hypercall-user" && !why.is_empty(),
                "{what}: not measured: {row:?}"
            );
            return;
        }
        let r = row.round_trip.unwrap();
        assert_eq!((row.accesses, r.count), (n, n), "{what}: {row:?}");
        if row.align == ClockAlign::None.describe() {
            eprintln!("{what}: clocks not aligned here: round trip only");
            assert!(!row.has_legs() && row.reason.is_some(), "{what}: {row:?}");
            return;
        }
        if row.vmm == FLOOR_VMM {
            assert_eq!(row.split, n, "{what}: every access in order: {row:?}");
        } else {
            assert!(
                row.split * 10 >= n * 9,
                "{what}: most accesses split: {row:?}"
            );
        }
        assert!(row.reason.is_none(), "{what}: {row:?}");
        let (e, h, en) = (row.exit.unwrap(), row.handling.unwrap(), row.entry.unwrap());
        assert!(e.count == row.split && h.count == row.split && en.count == row.split);
        for leg in [e, h, en] {
            assert!(
                leg.min <= leg.p50 && leg.p50 <= leg.p99 && leg.p99 <= leg.max,
                "{what}: {leg:?}"
            );
            assert!(
                leg.max <= r.max,
                "{what}: a leg inside the round trip: {row:?}"
            );
        }
        assert!(e.min + h.min + en.min <= r.max, "{what}: {row:?}");
    }

    /// trapline's pio-user-out row from one anatomy VM; `None` (said
    /// loudly) without /dev/kvm or without KVM's TSC offset.
    fn pio_user_out_row() -> Option<AnatomyPath> {
        if !std::path::Path::new("/dev/kvm").exists() {
            eprintln!("SKIPPED: /dev/kvm is absent: this KVM test did NOT run");
            return None;
        }
        let kvm = HostKvm::open().unwrap();
        let mut opts = LabOptions::for_tests(None);
        opts.vm_timeout = std::time::Duration::from_secs(60);
        // PIO is x86's: on arm64 the catalog has no such scenario.
        let Some(s) = catalog::find(trapline_report::derive::names::PIO_USER_OUT) else {
            eprintln!("SKIPPED: no pio-user-out on this architecture (x86's PIO)");
            return None;
        };
        let (rows, align) = run_vm(&kvm, s.machine, &[s], &opts).unwrap();
        let row = rows.into_iter().next().unwrap();
        if align.as_deref().is_some_and(|a| a.contains("not aligned")) {
            eprintln!("this kernel gives no TSC offset: only the round trip is checked");
            assert!(row.round_trip.is_some() && !row.has_legs());
            return None;
        }
        Some(row)
    }
}
