//! Reads a tracefs text trace of KVM's trace points into the kernel's share
//! of each exit: per vCPU thread, every `kvm_exit` opens an exit, the first
//! path event after it (`kvm_pio`, `kvm_mmio`, `kvm_fast_mmio`) names its
//! port or address, a `kvm_userspace_exit` marks it as one that went to user
//! space, and the next `kvm_entry` closes it: the time from exit to re-entry,
//! counted in a [`Histogram`] per key (reason, path detail, kernel or user).
//!
//! Pure text in, numbers out: tested on recorded traces without KVM. Both
//! architectures' `kvm_exit` lines are understood (x86's `reason io`,
//! arm64's `TRAP: HSR_EC: 0x0024 (DABT_LOW)`).

use std::collections::BTreeMap;

use trapline_abi::Histogram;

/// What a trace's timestamps count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// A cycle counter (`x86-tsc`): timestamps are counts, durations cycles.
    Cycles,
    /// Nanoseconds (`mono` and the like; the text shows microseconds),
    /// turned into cycles at `khz` (the TSC's or the arm64 counter's).
    Nanos {
        /// The counter's frequency in kHz.
        khz: u64,
    },
}

/// Where an exit was served.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Side {
    /// Inside the kernel: re-entered without returning to user space.
    Kernel,
    /// It went to user space (a `kvm_userspace_exit` before the re-entry):
    /// its time includes the VMM's handling.
    User,
}

impl Side {
    /// `kernel` or `user`.
    pub fn name(self) -> &'static str {
        match self {
            Side::Kernel => "kernel",
            Side::User => "user",
        }
    }
}

/// One kind of exit as the trace points tell it apart.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ExitKey {
    /// The exit reason as `kvm_exit` prints it (`io`, `npf`, `DABT_LOW`, …).
    pub reason: String,
    /// The first path event's port or address (`pio_write 0x80`, `mmio
    /// write 0xd0000000`, `fast_mmio 0xd0001000`), or empty.
    pub detail: String,
    /// Kernel or user.
    pub side: Side,
}

/// The kernel's share of one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyShare {
    /// Which exits.
    pub key: ExitKey,
    /// Cycles from `kvm_exit` to the next `kvm_entry`.
    pub cycles: Histogram,
}

/// A whole trace read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceShare {
    /// Every key, most exits first.
    pub keys: Vec<KeyShare>,
    /// `kvm_exit` lines seen.
    pub exits: u64,
    /// Exits still open at the end of the trace (no `kvm_entry` followed).
    pub unpaired: u64,
    /// Lines that looked like events but could not be read.
    pub unreadable: u64,
}

/// One event line's parts.
struct Line<'a> {
    tid: u32,
    stamp: u64,
    event: &'a str,
    body: &'a str,
}

/// `  vcpu0-2785    [001] ..... 60054353541802: kvm_pio: pio_read at …`
fn split_line(line: &str) -> Option<Line<'_>> {
    let open = line.find(" [")?;
    let (_, tid) = line[..open].trim().rsplit_once('-')?;
    let close = open + line[open..].find(']')?;
    let mut rest = line[close + 1..].trim_start();
    // Optional flags column (`d..2.`), then `stamp:`.
    let mut words = rest.splitn(3, ' ');
    let first = words.next()?;
    let (stamp, after) = if first.ends_with(':') {
        (first, rest[first.len()..].trim_start())
    } else {
        rest = rest[first.len()..].trim_start();
        let stamp = rest.split(' ').next()?;
        (stamp, rest[stamp.len()..].trim_start())
    };
    let (event, body) = after
        .split_once(": ")
        .unwrap_or((after.trim_end_matches(':'), ""));
    Some(Line {
        tid: tid.parse().ok()?,
        stamp: parse_stamp(stamp.trim_end_matches(':'))?,
        event,
        body: body.trim(),
    })
}

/// A counter (`60054353541802`) as is; seconds with a fraction
/// (`1234.567890`) in nanoseconds.
fn parse_stamp(s: &str) -> Option<u64> {
    match s.split_once('.') {
        None => s.parse().ok(),
        Some((secs, frac)) => {
            let secs: u64 = secs.parse().ok()?;
            let digits = frac.len().min(9);
            let frac: u64 = frac.get(..digits)?.parse().ok()?;
            let scale = 10u64.pow(9 - u32::try_from(digits).ok()?);
            secs.checked_mul(1_000_000_000)?.checked_add(frac * scale)
        }
    }
}

/// The reason a `kvm_exit` body names: x86 `vcpu 0 reason io rip …`,
/// arm64 `TRAP: HSR_EC: 0x0024 (DABT_LOW), ESR_ELx: …` (`IRQ: …` for an
/// interrupt).
fn exit_reason(body: &str) -> Option<String> {
    if let Some(at) = body.find("reason ") {
        let rest = &body[at + "reason ".len()..];
        let end = rest.find(" rip ").unwrap_or(rest.len());
        return Some(rest[..end].trim().to_string());
    }
    let (kind, rest) = body.split_once(':')?;
    if kind == "TRAP" {
        let open = rest.find('(')?;
        let close = open + rest[open..].find(')')?;
        return Some(rest[open + 1..close].to_string());
    }
    Some(kind.trim().to_string())
}

/// The port or address a path event names.
fn path_detail(event: &str, body: &str) -> Option<String> {
    let word_after = |w: &str| {
        let mut it = body.split_whitespace();
        it.by_ref().find(|x| *x == w)?;
        it.next().map(str::to_string)
    };
    match event {
        // `pio_write at 0x80 size 1 count 1 val 0x0`
        "kvm_pio" => Some(format!(
            "{} {}",
            body.split_whitespace().next()?,
            word_after("at")?
        )),
        // `mmio write len 4 gpa 0xd0000000 val 0x1`
        "kvm_mmio" => Some(format!(
            "mmio {} {}",
            body.split_whitespace().nth(1)?,
            word_after("gpa")?
        )),
        // `fast mmio at gpa 0xd0001000`
        "kvm_fast_mmio" => Some(format!("fast_mmio {}", word_after("gpa")?)),
        _ => None,
    }
}

/// An exit not yet re-entered.
struct Open {
    stamp: u64,
    reason: String,
    detail: String,
    side: Side,
}

/// Reads `text` (a tracefs `trace` file) with timestamps in `clock`.
pub fn read(text: &str, clock: Clock) -> TraceShare {
    let mut open: BTreeMap<u32, Open> = BTreeMap::new();
    let mut keys: BTreeMap<ExitKey, Histogram> = BTreeMap::new();
    let mut share = TraceShare::default();
    for raw in text.lines() {
        if raw.starts_with('#') || raw.trim().is_empty() {
            continue;
        }
        let Some(line) = split_line(raw) else {
            share.unreadable += 1;
            continue;
        };
        match line.event {
            "kvm_exit" => {
                share.exits += 1;
                let Some(reason) = exit_reason(line.body) else {
                    share.unreadable += 1;
                    continue;
                };
                let prev = open.insert(
                    line.tid,
                    Open {
                        stamp: line.stamp,
                        reason,
                        detail: String::new(),
                        side: Side::Kernel,
                    },
                );
                share.unpaired += u64::from(prev.is_some());
            }
            "kvm_userspace_exit" => {
                if let Some(o) = open.get_mut(&line.tid) {
                    o.side = Side::User;
                }
            }
            "kvm_entry" => {
                if let Some(o) = open.remove(&line.tid) {
                    let span = line.stamp.saturating_sub(o.stamp);
                    let key = ExitKey {
                        reason: o.reason,
                        detail: o.detail,
                        side: o.side,
                    };
                    keys.entry(key).or_default().record(to_cycles(span, clock));
                }
            }
            event => {
                if let Some(o) = open.get_mut(&line.tid).filter(|o| o.detail.is_empty()) {
                    if let Some(d) = path_detail(event, line.body) {
                        o.detail = d;
                    }
                }
            }
        }
    }
    share.unpaired += open.len() as u64;
    share.keys = keys
        .into_iter()
        .map(|(key, cycles)| KeyShare { key, cycles })
        .collect();
    share.keys.sort_by(|a, b| {
        b.cycles
            .count()
            .cmp(&a.cycles.count())
            .then(a.key.cmp(&b.key))
    });
    share
}

/// A span in the trace's clock as cycles.
fn to_cycles(span: u64, clock: Clock) -> u64 {
    match clock {
        Clock::Cycles => span,
        Clock::Nanos { khz } => {
            let c = u128::from(span) * u128::from(khz) / 1_000_000;
            u64::try_from(c).unwrap_or(u64::MAX)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const X86: &str = include_str!("../../tests/fixtures/kvm-trace-x86.txt");
    const ARM64: &str = include_str!("../../tests/fixtures/kvm-trace-arm64.txt");

    fn find<'a>(s: &'a TraceShare, reason: &str, detail: &str) -> &'a KeyShare {
        s.keys
            .iter()
            .find(|k| k.key.reason == reason && k.key.detail == detail)
            .unwrap_or_else(|| panic!("{reason} {detail} missing: {s:#?}"))
    }

    #[test]
    fn an_x86_trace_pairs_exits_with_entries_per_thread() {
        let s = read(X86, Clock::Cycles);
        // Four ioeventfd OUTs to 0x5d0 on vcpu0, 2000..2600 cycles each.
        let pio = find(&s, "io", "pio_write 0x5d0");
        assert_eq!(pio.key.side, Side::Kernel);
        assert_eq!(pio.cycles.count(), 4);
        assert_eq!(
            (pio.cycles.min(), pio.cycles.max()),
            (Some(2000), Some(2600))
        );
        // A fast-MMIO store, in the kernel.
        let fast = find(&s, "npf", "fast_mmio 0xd0001000");
        assert_eq!((fast.cycles.count(), fast.cycles.max()), (1, Some(1500)));
        // An OUT that went to user space: the user side, its own key.
        let user = find(&s, "io", "pio_write 0xe0");
        assert_eq!(user.key.side, Side::User);
        assert_eq!(user.cycles.max(), Some(30_000));
        // Interleaved with vcpu1's exit, which pairs on its own thread.
        let other = find(&s, "hlt", "");
        assert_eq!(other.cycles.max(), Some(900));
        assert_eq!(s.keys[0].key.detail, "pio_write 0x5d0", "most exits first");
        // One exit at the end never re-entered; the header and a broken
        // line are skipped (the broken one counted).
        assert_eq!((s.exits, s.unpaired, s.unreadable), (8, 1, 1));
    }

    #[test]
    fn an_arm64_trace_in_microseconds_turns_into_counter_cycles() {
        // A 25 MHz counter: 1 us = 25 cycles.
        let s = read(ARM64, Clock::Nanos { khz: 25_000 });
        let mmio = find(&s, "DABT_LOW", "mmio write 0x9000000");
        assert_eq!(mmio.key.side, Side::User);
        assert_eq!(mmio.cycles.max(), Some(8 * 25));
        let ioev = find(&s, "DABT_LOW", "mmio write 0xa000000");
        assert_eq!(ioev.key.side, Side::Kernel);
        assert_eq!(ioev.cycles.count(), 2);
        assert_eq!(ioev.cycles.min(), Some(3 * 25));
        let irq = find(&s, "IRQ", "");
        assert_eq!(irq.cycles.count(), 1);
    }

    #[test]
    fn stamps_and_reasons_read_in_both_forms() {
        assert_eq!(parse_stamp("60054353541802"), Some(60_054_353_541_802));
        assert_eq!(parse_stamp("1234.567890"), Some(1_234_567_890_000));
        assert_eq!(parse_stamp("x.1"), None);
        assert_eq!(
            exit_reason("vcpu 0 reason DE excp rip 0x1 info1 0x0").as_deref(),
            Some("DE excp")
        );
        assert_eq!(
            exit_reason("TRAP: HSR_EC: 0x0016 (HVC64), ESR_ELx: 0x5a000000, PC: 0x40080000")
                .as_deref(),
            Some("HVC64")
        );
        assert_eq!(read("garbage\n", Clock::Cycles).unreadable, 1);
    }
}
