//! The exit profile behind `trapline run --stat`: every exit that reached
//! trapline, keyed the way `perf kvm stat report` keys them (`0xf4:POUT`,
//! `0x3f8:PIN`, `0xfebff000:W`, `HLT`, …), with the TSC cycles trapline
//! spent handling it (from KVM_RUN's return to the next KVM_RUN) as a
//! total, min, max and log2 histogram, plus the split of each vCPU's time
//! between KVM_RUN and trapline. The first [`HIST_KEYS`] keys also keep two
//! log-linear distributions (`trapline_abi::hist`: 0.78 % bound) — the
//! handling time and the time inside the KVM_RUN that ended with the exit
//! (entry to return) — in `u32` counters below 2^32 cycles, from a pool the
//! profile allocates and touches when it is made.
//!
//! One [`ExitProfile`] per vCPU; its vCPU thread is the only writer, so every
//! update is a relaxed load and store (no locked instruction, no lock, no
//! allocation). Keys live in a fixed open-addressing table allocated when
//! the profile is made; a guest that touches more distinct addresses than
//! the table holds has the rest counted under one overflow key per kind
//! (`*:POUT`, `*:R`, …), so counts by kind stay exact.

use std::sync::atomic::{
    AtomicU32, AtomicU64, Ordering::Acquire, Ordering::Relaxed, Ordering::Release,
};

use trapline_abi::{hist_bucket, hist_buckets_below, Histogram};

use crate::exit_kind::ExitKind;

/// Key slots per vCPU (a power of two).
pub const KEY_SLOTS: usize = 256;
/// How far a key is looked for past its hash slot before it overflows.
const MAX_PROBE: usize = 16;
/// The address a snapshot gives the overflow key of a kind: every
/// address that found no slot.
pub const OVERFLOW_ADDR: u64 = u64::MAX;
/// log2 histogram buckets: bucket `b` counts handling times in
/// `[2^(b-1), 2^b)` cycles (bucket 0: zero cycles); the last also holds
/// everything longer.
pub const HIST_BUCKETS: usize = 40;
/// Keys that keep distributions (the first this many keys a vCPU meets; the
/// rest, and the overflow keys, keep count, total, min, max and log2 buckets).
pub const HIST_KEYS: usize = 32;
/// Values at or past this many bits of cycles (2^32: ~1.4 s at 3 GHz) count
/// in a distribution's last bucket; its max stays exact.
pub const DIST_BITS: u32 = 32;
/// Log-linear buckets one distribution keeps.
pub const DIST_BUCKETS: usize = hist_buckets_below(DIST_BITS);
/// Bytes of distributions one vCPU's profile allocates (two per key).
pub const DIST_BYTES: usize = HIST_KEYS * 2 * DIST_BUCKETS * std::mem::size_of::<u32>();

/// A key as `perf kvm stat report` prints it: `0xf4:POUT`, `0xfebff000:W`,
/// `HLT`; [`OVERFLOW_ADDR`] (addresses beyond the table) prints as `*:POUT`.
pub fn perf_key(kind: ExitKind, addr: u64) -> String {
    if kind.has_address() && addr == OVERFLOW_ADDR {
        format!("*:{}", kind.perf_name())
    } else if kind.has_address() {
        format!("{addr:#x}:{}", kind.perf_name())
    } else {
        kind.perf_name().to_string()
    }
}

/// A slot's tag for `kind`: its index plus one, so that 0 means empty.
#[inline(always)]
fn tag_of(kind: ExitKind) -> u64 {
    kind as u64 + 1
}

/// The kind a slot's tag stands for (`None`: an empty slot).
fn kind_of_tag(tag: u64) -> Option<ExitKind> {
    let index = usize::try_from(tag.checked_sub(1)?).ok()?;
    ExitKind::ALL.get(index).copied()
}

/// The histogram bucket for `cycles`.
#[inline(always)]
pub fn bucket(cycles: u64) -> usize {
    ((64 - cycles.leading_zeros()) as usize).min(HIST_BUCKETS - 1)
}

#[derive(Debug)]
struct Slot {
    /// 0: empty; else [`tag_of`] the kind. Written last (Release) when a slot is
    /// claimed, so a reader that sees it also sees `addr`.
    tag: AtomicU64,
    addr: AtomicU64,
    count: AtomicU64,
    total: AtomicU64,
    min: AtomicU64,
    max: AtomicU64,
    hist: [AtomicU64; HIST_BUCKETS],
    /// Its distributions: 0 none, else the pool index plus one (set when
    /// the slot is claimed, before its tag is published).
    dist: AtomicU32,
    /// Time in the KVM_RUN that ended with this key's exits.
    kvm_count: AtomicU64,
    kvm_total: AtomicU64,
    kvm_min: AtomicU64,
    kvm_max: AtomicU64,
}

impl Slot {
    fn new() -> Self {
        Slot {
            tag: AtomicU64::new(0),
            addr: AtomicU64::new(0),
            count: AtomicU64::new(0),
            total: AtomicU64::new(0),
            min: AtomicU64::new(u64::MAX),
            max: AtomicU64::new(0),
            hist: std::array::from_fn(|_| AtomicU64::new(0)),
            dist: AtomicU32::new(0),
            kvm_count: AtomicU64::new(0),
            kvm_total: AtomicU64::new(0),
            kvm_min: AtomicU64::new(u64::MAX),
            kvm_max: AtomicU64::new(0),
        }
    }

    /// Single-writer update of the in-KVM time.
    #[inline(always)]
    fn add_kvm(&self, cycles: u64) {
        bump(&self.kvm_count, 1);
        bump(&self.kvm_total, cycles);
        if cycles < self.kvm_min.load(Relaxed) {
            self.kvm_min.store(cycles, Relaxed);
        }
        if cycles > self.kvm_max.load(Relaxed) {
            self.kvm_max.store(cycles, Relaxed);
        }
    }

    /// Single-writer update: plain loads and stores.
    #[inline(always)]
    fn add(&self, cycles: u64) {
        bump(&self.count, 1);
        bump(&self.total, cycles);
        if cycles < self.min.load(Relaxed) {
            self.min.store(cycles, Relaxed);
        }
        if cycles > self.max.load(Relaxed) {
            self.max.store(cycles, Relaxed);
        }
        bump(&self.hist[bucket(cycles)], 1);
    }
}

#[inline(always)]
fn bump(c: &AtomicU64, n: u64) {
    c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
}

/// Count `cycles` in the distribution `counts` (single writer).
#[inline(always)]
fn count_in(counts: &[AtomicU32], cycles: u64) {
    if let Some(c) = counts.get(hist_bucket(cycles).min(DIST_BUCKETS - 1)) {
        c.store(c.load(Relaxed).wrapping_add(1), Relaxed);
    }
}

/// A distribution read back, with the exact count, min, max and sum its
/// slot kept (`None` when the counters disagree: a `u32` bucket wrapped).
fn read_dist(counts: &[AtomicU32], count: u64, min: u64, max: u64, sum: u64) -> Option<Histogram> {
    let counts = counts.iter().map(|c| u64::from(c.load(Relaxed)));
    Histogram::from_bucket_counts(counts, count, min, max, u128::from(sum)).ok()
}

/// One vCPU's exit profile. Written only by its vCPU thread.
#[derive(Debug)]
pub struct ExitProfile {
    slots: Box<[Slot]>,
    /// One per kind ([`ExitKind`] as index).
    overflow: Box<[Slot]>,
    in_kvm: AtomicU64,
    in_vmm: AtomicU64,
    /// Every key together, so a reader can take a window's totals without
    /// walking the table (the lab does, at each BEGIN/RESULT ucall).
    all_exits: AtomicU64,
    all_cycles: AtomicU64,
    /// [`HIST_KEYS`] pairs of distributions (handling, then in-KVM), each
    /// [`DIST_BUCKETS`] counters; touched when made, so no exit faults a
    /// page in.
    dists: Box<[AtomicU32]>,
    /// Pairs handed out (written by the vCPU thread only).
    dists_used: AtomicU32,
}

/// Exits and the cycles trapline spent on them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HandlingTotals {
    /// Exits.
    pub exits: u64,
    /// Cycles spent handling them.
    pub cycles: u64,
}

impl HandlingTotals {
    /// The change since `earlier`.
    pub fn since(&self, earlier: &HandlingTotals) -> HandlingTotals {
        HandlingTotals {
            exits: self.exits.wrapping_sub(earlier.exits),
            cycles: self.cycles.wrapping_sub(earlier.cycles),
        }
    }
}

impl Default for ExitProfile {
    fn default() -> Self {
        Self::new()
    }
}

impl ExitProfile {
    /// An empty profile (allocates its key table once, here).
    pub fn new() -> Self {
        ExitProfile {
            slots: (0..KEY_SLOTS).map(|_| Slot::new()).collect(),
            overflow: ExitKind::ALL.iter().map(|_| Slot::new()).collect(),
            in_kvm: AtomicU64::new(0),
            in_vmm: AtomicU64::new(0),
            all_exits: AtomicU64::new(0),
            all_cycles: AtomicU64::new(0),
            // Collected element by element: every page is written here, at
            // arming, not on an exit.
            dists: (0..HIST_KEYS * 2 * DIST_BUCKETS)
                .map(|_| AtomicU32::new(0))
                .collect(),
            dists_used: AtomicU32::new(0),
        }
    }

    /// The handling and in-KVM distributions of pool pair `dist` (1-based).
    fn dist_pair(&self, dist: u32) -> Option<(&[AtomicU32], &[AtomicU32])> {
        let start = (dist as usize).checked_sub(1)? * 2 * DIST_BUCKETS;
        let pair = self.dists.get(start..start + 2 * DIST_BUCKETS)?;
        Some(pair.split_at(DIST_BUCKETS))
    }

    /// Count one exit in `slot`: its handling time and, when known, the
    /// time in the KVM_RUN it ended.
    #[inline(always)]
    fn add_to(&self, slot: &Slot, handling: u64, in_kvm: Option<u64>) {
        slot.add(handling);
        if let Some(k) = in_kvm {
            slot.add_kvm(k);
        }
        let dist = slot.dist.load(Relaxed);
        if dist != 0 {
            if let Some((h, k)) = self.dist_pair(dist) {
                count_in(h, handling);
                if let Some(c) = in_kvm {
                    count_in(k, c);
                }
            }
        }
    }

    /// Claim `slot` for a key: hand it the next distribution pair, if any is
    /// left, then publish its tag.
    #[inline(always)]
    fn claim(&self, slot: &Slot, tag: u64, addr: u64) {
        let used = self.dists_used.load(Relaxed);
        if (used as usize) < HIST_KEYS {
            self.dists_used.store(used + 1, Relaxed);
            slot.dist.store(used + 1, Relaxed);
        }
        slot.addr.store(addr, Relaxed);
        slot.tag.store(tag, Release);
    }

    /// Record one exit and the cycles trapline spent on it. Only the
    /// owning vCPU thread may call this.
    #[inline]
    pub fn record(&self, kind: ExitKind, addr: u64, cycles: u64) {
        self.record_exit(kind, addr, cycles, None);
    }

    /// Record one exit, the cycles trapline spent on it and (when known)
    /// the cycles inside the KVM_RUN that ended with it. Only the owning
    /// vCPU thread may call this.
    #[inline]
    pub fn record_exit(&self, kind: ExitKind, addr: u64, cycles: u64, in_kvm: Option<u64>) {
        bump(&self.all_exits, 1);
        bump(&self.all_cycles, cycles);
        let tag = tag_of(kind);
        let addr = if kind.has_address() { addr } else { 0 };
        let start = (Self::hash(tag, addr) >> 56) as usize;
        for i in 0..MAX_PROBE {
            let slot = &self.slots[(start + i) & (KEY_SLOTS - 1)];
            match slot.tag.load(Relaxed) {
                0 => {
                    self.claim(slot, tag, addr);
                    self.add_to(slot, cycles, in_kvm);
                    return;
                }
                t if t == tag && slot.addr.load(Relaxed) == addr => {
                    self.add_to(slot, cycles, in_kvm);
                    return;
                }
                _ => {}
            }
        }
        self.add_to(&self.overflow[kind as usize], cycles, in_kvm);
    }

    /// Every exit recorded so far except those on one key (e.g. the
    /// ucall port a lab guest brackets its loops with), without walking
    /// or allocating: the totals less that key's slot. A key that
    /// overflowed the table cannot be excluded and stays counted.
    pub fn totals_excluding(&self, kind: ExitKind, addr: u64) -> HandlingTotals {
        let mut t = HandlingTotals {
            exits: self.all_exits.load(Relaxed),
            cycles: self.all_cycles.load(Relaxed),
        };
        let tag = tag_of(kind);
        let addr = if kind.has_address() { addr } else { 0 };
        let start = (Self::hash(tag, addr) >> 56) as usize;
        for i in 0..MAX_PROBE {
            let slot = &self.slots[(start + i) & (KEY_SLOTS - 1)];
            match slot.tag.load(Acquire) {
                0 => break,
                t2 if t2 == tag && slot.addr.load(Relaxed) == addr => {
                    t.exits = t.exits.wrapping_sub(slot.count.load(Relaxed));
                    t.cycles = t.cycles.wrapping_sub(slot.total.load(Relaxed));
                    break;
                }
                _ => {}
            }
        }
        t
    }

    #[inline(always)]
    fn hash(tag: u64, addr: u64) -> u64 {
        (addr ^ (tag << 56)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    /// Add cycles spent inside KVM_RUN.
    #[inline(always)]
    pub fn add_in_kvm(&self, cycles: u64) {
        bump(&self.in_kvm, cycles);
    }

    /// Add cycles spent in trapline between two KVM_RUNs.
    #[inline(always)]
    pub fn add_in_vmm(&self, cycles: u64) {
        bump(&self.in_vmm, cycles);
    }

    /// A copy of everything recorded so far (any thread).
    pub fn snapshot(&self) -> ProfileSnapshot {
        let read = |s: &Slot, kind: ExitKind, addr: u64| {
            let count = s.count.load(Relaxed);
            let (min, max) = (s.min.load(Relaxed), s.max.load(Relaxed));
            let total_cycles = s.total.load(Relaxed);
            let kvm_count = s.kvm_count.load(Relaxed);
            let pair = self.dist_pair(s.dist.load(Relaxed));
            KeyStats {
                kind,
                addr,
                count,
                total_cycles,
                min_cycles: min,
                max_cycles: max,
                hist: std::array::from_fn(|i| s.hist[i].load(Relaxed)),
                handling: pair.and_then(|(h, _)| read_dist(h, count, min, max, total_cycles)),
                in_kvm: pair.filter(|_| kvm_count > 0).and_then(|(_, k)| {
                    let (kmin, kmax) = (s.kvm_min.load(Relaxed), s.kvm_max.load(Relaxed));
                    read_dist(k, kvm_count, kmin, kmax, s.kvm_total.load(Relaxed))
                }),
            }
        };
        let mut keys: Vec<KeyStats> = self
            .slots
            .iter()
            .filter_map(|s| {
                let kind = kind_of_tag(s.tag.load(Acquire))?;
                Some(read(s, kind, s.addr.load(Relaxed)))
            })
            .filter(|k| k.count > 0)
            .collect();
        for (slot, kind) in self.overflow.iter().zip(ExitKind::ALL) {
            let over = read(slot, kind, OVERFLOW_ADDR);
            if over.count > 0 {
                keys.push(over);
            }
        }
        keys.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then(a.key_order().cmp(&b.key_order()))
        });
        ProfileSnapshot {
            keys,
            in_kvm_cycles: self.in_kvm.load(Relaxed),
            in_vmm_cycles: self.in_vmm.load(Relaxed),
        }
    }
}

/// One key's numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyStats {
    /// Why.
    pub kind: ExitKind,
    /// The port or GPA (0 for kinds without one).
    pub addr: u64,
    /// Exits.
    pub count: u64,
    /// Cycles trapline spent on them, in all.
    pub total_cycles: u64,
    /// The shortest.
    pub min_cycles: u64,
    /// The longest.
    pub max_cycles: u64,
    /// log2 histogram of handling cycles (see [`HIST_BUCKETS`]).
    pub hist: [u64; HIST_BUCKETS],
    /// The handling cycles' distribution (`None` past the first
    /// [`HIST_KEYS`] keys, and for the overflow keys).
    pub handling: Option<Histogram>,
    /// The cycles inside the KVM_RUN each of these exits ended (entry to
    /// return), as a distribution (`None` as for `handling`, or when the
    /// loop did not time KVM_RUN).
    pub in_kvm: Option<Histogram>,
}

impl KeyStats {
    /// `perf kvm stat`'s key.
    pub fn key(&self) -> String {
        perf_key(self.kind, self.addr)
    }

    /// Mean handling cycles.
    pub fn mean_cycles(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.total_cycles as f64 / self.count as f64
        }
    }

    /// The median's histogram bucket as its upper bound in cycles (the
    /// histogram's resolution: a factor of two).
    pub fn median_bucket_upper(&self) -> u64 {
        let half = self.count.div_ceil(2);
        let mut seen = 0;
        for (b, n) in self.hist.iter().enumerate() {
            seen += n;
            if seen >= half && *n > 0 {
                return if b == 0 { 0 } else { 1u64 << b };
            }
        }
        0
    }

    fn key_order(&self) -> (ExitKind, u64) {
        (self.kind, self.addr)
    }
}

/// A copy of one vCPU's profile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProfileSnapshot {
    /// Every key seen, most frequent first.
    pub keys: Vec<KeyStats>,
    /// Cycles inside KVM_RUN.
    pub in_kvm_cycles: u64,
    /// Cycles in trapline between KVM_RUNs.
    pub in_vmm_cycles: u64,
}

impl ProfileSnapshot {
    /// Exits in all.
    pub fn exits(&self) -> u64 {
        self.keys.iter().map(|k| k.count).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_perf_kvm_stat_keys() {
        assert_eq!(perf_key(ExitKind::PioWrite, 0xf4), "0xf4:POUT");
        assert_eq!(perf_key(ExitKind::PioRead, 0x3f8), "0x3f8:PIN");
        assert_eq!(perf_key(ExitKind::MmioWrite, 0xfebf_f000), "0xfebff000:W");
        assert_eq!(perf_key(ExitKind::MmioRead, 0xfee0_0020), "0xfee00020:R");
        assert_eq!(perf_key(ExitKind::Hlt, 123), "HLT");
        assert_eq!(perf_key(ExitKind::Shutdown, 0), "SHUTDOWN");
    }

    #[test]
    fn buckets_are_log2() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(1), 1);
        assert_eq!(bucket(2), 2);
        assert_eq!(bucket(3), 2);
        assert_eq!(bucket(4), 3);
        assert_eq!(bucket(1023), 10);
        assert_eq!(bucket(1024), 11);
        assert_eq!(bucket(u64::MAX), HIST_BUCKETS - 1);
    }

    #[test]
    fn counts_times_and_histograms_add_up_per_key() {
        let p = ExitProfile::new();
        for i in 0..100 {
            p.record(ExitKind::PioWrite, 0xf4, 1000 + i);
        }
        p.record(ExitKind::PioRead, 0xf4, 10);
        p.record(ExitKind::Hlt, 0xdead, 7);
        p.record(ExitKind::Hlt, 0xbeef, 9);
        p.add_in_kvm(500);
        p.add_in_vmm(300);
        let s = p.snapshot();
        assert_eq!(s.exits(), 103);
        assert_eq!((s.in_kvm_cycles, s.in_vmm_cycles), (500, 300));
        let out = &s.keys[0];
        assert_eq!(out.key(), "0xf4:POUT");
        assert_eq!(out.count, 100);
        assert_eq!(out.total_cycles, (1000..1100).sum::<u64>());
        assert_eq!((out.min_cycles, out.max_cycles), (1000, 1099));
        assert_eq!(out.hist.iter().sum::<u64>(), 100);
        assert_eq!(out.hist[bucket(1000)], 24); // 1000..1023
        assert_eq!(out.hist[bucket(1024)], 76); // 1024..1099
        assert_eq!(out.median_bucket_upper(), 2048);
        // HLT has no address: both HLTs are one key.
        let hlt = s.keys.iter().find(|k| k.kind == ExitKind::Hlt).unwrap();
        assert_eq!((hlt.count, hlt.addr, hlt.key()), (2, 0, "HLT".to_string()));
        // IN and OUT on the same port are different keys.
        assert!(s.keys.iter().any(|k| k.key() == "0xf4:PIN" && k.count == 1));
    }

    #[test]
    fn the_first_keys_keep_handling_and_in_kvm_distributions() {
        let p = ExitProfile::new();
        for i in 0..1000u64 {
            // Handling 100..=199 (exact below 128: log-linear midpoints above).
            p.record_exit(ExitKind::PioWrite, 0xf4, 100 + i % 100, Some(20_000 + i));
        }
        // A huge in-KVM time (past 2^32) counts in the last bucket; max stays exact.
        p.record_exit(ExitKind::PioWrite, 0xf4, 150, Some(1 << 40));
        p.record(ExitKind::Hlt, 0, 7);
        let s = p.snapshot();
        let out = s.keys.iter().find(|k| k.key() == "0xf4:POUT").unwrap();
        let h = out.handling.as_ref().unwrap();
        assert_eq!(h.count(), 1001);
        assert_eq!((h.min(), h.max()), (Some(100), Some(199)));
        let p50 = h.quantile(0.5).unwrap();
        assert!((148..=152).contains(&p50), "p50 {p50}");
        let p99 = h.quantile(0.99).unwrap();
        assert!((196..=199).contains(&p99), "p99 {p99}");
        let k = out.in_kvm.as_ref().unwrap();
        assert_eq!(k.count(), 1001);
        assert_eq!((k.min(), k.max()), (Some(20_000), Some(1 << 40)));
        let k50 = k.quantile(0.5).unwrap();
        assert!(k50.abs_diff(20_500) <= 20_500 / 100, "in-KVM p50 {k50}");
        // Recorded without an in-KVM time: a handling distribution only.
        let hlt = s.keys.iter().find(|k| k.key() == "HLT").unwrap();
        assert_eq!(hlt.handling.as_ref().map(Histogram::count), Some(1));
        assert!(hlt.in_kvm.is_none());
    }

    #[test]
    fn keys_past_the_pool_keep_counts_but_no_distributions() {
        let p = ExitProfile::new();
        let n = HIST_KEYS as u64 + 8;
        for port in 0..n {
            p.record_exit(ExitKind::PioRead, port, 10, Some(10));
        }
        let s = p.snapshot();
        let with = s.keys.iter().filter(|k| k.handling.is_some()).count();
        assert_eq!(with, HIST_KEYS);
        assert_eq!(s.exits(), n);
        assert_eq!(DIST_BUCKETS, hist_bucket(u64::from(u32::MAX)) + 1);
    }

    #[test]
    fn totals_leave_one_key_out() {
        let p = ExitProfile::new();
        p.record(ExitKind::PioWrite, 0x700, 50_000);
        for _ in 0..10 {
            p.record(ExitKind::PioWrite, 0xe0, 100);
        }
        let t0 = p.totals_excluding(ExitKind::PioWrite, 0x700);
        assert_eq!(
            t0,
            HandlingTotals {
                exits: 10,
                cycles: 1000
            }
        );
        p.record(ExitKind::PioWrite, 0x700, 70_000);
        p.record(ExitKind::MmioRead, 0x1000, 30);
        let d = p.totals_excluding(ExitKind::PioWrite, 0x700).since(&t0);
        assert_eq!(
            d,
            HandlingTotals {
                exits: 1,
                cycles: 30
            }
        );
        // A key never seen excludes nothing.
        assert_eq!(p.totals_excluding(ExitKind::Hlt, 0).exits, 13);
    }

    #[test]
    fn more_keys_than_slots_overflow_into_one_key_per_kind_and_nothing_is_lost() {
        let p = ExitProfile::new();
        let n = (KEY_SLOTS * 4) as u64;
        for addr in 0..n {
            p.record(ExitKind::MmioRead, 0x1000_0000 + addr * 4096, 5);
            p.record(ExitKind::PioWrite, addr, 7);
        }
        let s = p.snapshot();
        assert_eq!(s.exits(), 2 * n);
        for (kind, key) in [(ExitKind::MmioRead, "*:R"), (ExitKind::PioWrite, "*:POUT")] {
            let of_kind: u64 = s
                .keys
                .iter()
                .filter(|k| k.kind == kind)
                .map(|k| k.count)
                .sum();
            assert_eq!(of_kind, n, "{key}: counts by kind stay exact");
            let over = s.keys.iter().find(|k| k.key() == key).unwrap();
            assert!(over.count > 0);
        }
        assert!(s.keys.len() <= KEY_SLOTS + ExitKind::ALL.len());
    }
}
