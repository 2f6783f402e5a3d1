//! `trapline run --stat`: what a run's exits were and what they cost,
//! from both sides — KVM's own per-vCPU counters (in-kernel exits included)
//! and the exits that reached trapline, keyed as `perf kvm stat report`
//! keys them, with the device that served each and trapline's handling
//! time — as a terminal table, versioned JSON, and Firecracker-style
//! newline-delimited metrics.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};
use trapline_abi::Histogram;
use trapline_bus::profile::{KeyStats, HIST_BUCKETS};
use trapline_bus::{Bus, ExitKind, ProfileSnapshot};

mod table;
pub use table::{StatSort, TableOptions};

/// Keys the table lists (the JSON lists all).
pub const TABLE_KEYS: usize = 30;

/// The JSON schema's name and version.
pub const SCHEMA: &str = "trapline-stat/1";

/// One key of one vCPU (or of all of them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyRow {
    /// The numbers.
    pub stats: KeyStats,
    /// The device that served it, or `unmapped`.
    pub device: String,
}

/// One vCPU's side of the profile.
#[derive(Clone, Debug, PartialEq)]
pub struct VcpuStat {
    /// Every key, most frequent first.
    pub keys: Vec<KeyRow>,
    /// Cycles inside KVM_RUN.
    pub in_kvm_cycles: u64,
    /// Cycles in trapline between KVM_RUNs.
    pub in_vmm_cycles: u64,
    /// KVM's per-vCPU counters that moved over the run (name, delta), or
    /// why there are none.
    pub kvm: Result<Vec<(String, u64)>, String>,
}

/// A whole run's profile.
#[derive(Clone, Debug, PartialEq)]
pub struct StatReport {
    /// Wall time of the run.
    pub wall: Duration,
    /// TSC frequency, to turn cycles into time.
    pub tsc_khz: Option<u32>,
    /// Per vCPU.
    pub vcpus: Vec<VcpuStat>,
    /// KVM's per-VM counters that moved, or why there are none.
    pub kvm_vm: Result<Vec<(String, u64)>, String>,
}

/// `a` and `b` merged; `None` unless both are there (a merged key's
/// percentiles stand for all its exits or are not given).
fn merge_dist(a: Option<Histogram>, b: Option<&Histogram>) -> Option<Histogram> {
    let (mut a, b) = (a?, b?);
    a.merge(b);
    Some(a)
}

/// A distribution in the JSON: count, exact mean/min/max, p50/p90/p99/p99.9
/// (bucket midpoints, within 0.78 %) and the non-empty log-linear buckets as
/// `[low, high, count]`; `null` where the profile kept none.
fn dist_json(h: Option<&Histogram>) -> Value {
    let Some(h) = h else {
        return Value::Null;
    };
    json!({
        "count": h.count(),
        "mean": h.mean(),
        "min": h.min(),
        "max": h.max(),
        "p50": h.quantile(0.5),
        "p90": h.quantile(0.9),
        "p99": h.quantile(0.99),
        "p999": h.quantile(0.999),
        "buckets": h.buckets().map(|(lo, hi, n)| [lo, hi, n]).collect::<Vec<_>>(),
    })
}

/// The device on `bus` (PIO or MMIO by the kind) at `addr`.
pub(crate) fn device_name(pio: &Bus, mmio: &Bus, kind: ExitKind, addr: u64) -> String {
    if !kind.has_address() {
        return String::new();
    }
    if addr == trapline_bus::profile::OVERFLOW_ADDR {
        return "(other addresses)".to_string();
    }
    let bus = if kind.is_pio() { pio } else { mmio };
    bus.find(addr)
        .map_or_else(|| "unmapped".to_string(), |m| m.name.to_string())
}

impl VcpuStat {
    pub(crate) fn from_snapshot(s: ProfileSnapshot, pio: &Bus, mmio: &Bus) -> VcpuStat {
        VcpuStat {
            keys: s
                .keys
                .into_iter()
                .map(|k| KeyRow {
                    device: device_name(pio, mmio, k.kind, k.addr),
                    stats: k,
                })
                .collect(),
            in_kvm_cycles: s.in_kvm_cycles,
            in_vmm_cycles: s.in_vmm_cycles,
            kvm: Err("not read".into()),
        }
    }

    /// Exits that reached trapline.
    pub fn exits(&self) -> u64 {
        self.keys.iter().map(|k| k.stats.count).sum()
    }
}

impl StatReport {
    /// Every vCPU's keys merged, most frequent first.
    pub fn total_keys(&self) -> Vec<KeyRow> {
        let mut by_key: BTreeMap<(ExitKind, u64), KeyRow> = BTreeMap::new();
        for k in self.vcpus.iter().flat_map(|v| &v.keys) {
            by_key
                .entry((k.stats.kind, k.stats.addr))
                .and_modify(|t| {
                    let (a, b) = (&mut t.stats, &k.stats);
                    a.count += b.count;
                    a.total_cycles += b.total_cycles;
                    a.min_cycles = a.min_cycles.min(b.min_cycles);
                    a.max_cycles = a.max_cycles.max(b.max_cycles);
                    for i in 0..HIST_BUCKETS {
                        a.hist[i] += b.hist[i];
                    }
                    a.handling = merge_dist(a.handling.take(), b.handling.as_ref());
                    a.in_kvm = merge_dist(a.in_kvm.take(), b.in_kvm.as_ref());
                })
                .or_insert_with(|| k.clone());
        }
        let mut v: Vec<KeyRow> = by_key.into_values().collect();
        v.sort_by_key(|k| std::cmp::Reverse(k.stats.count));
        v
    }

    /// KVM's per-vCPU counters summed over vCPUs (counters every vCPU had).
    pub fn total_kvm(&self) -> Option<Vec<(String, u64)>> {
        let mut sum: BTreeMap<String, u64> = BTreeMap::new();
        for v in &self.vcpus {
            for (n, d) in v.kvm.as_ref().ok()? {
                *sum.entry(n.clone()).or_default() += d;
            }
        }
        Some(sum.into_iter().collect())
    }

    pub(crate) fn cycles_to_secs(&self, c: u64) -> Option<f64> {
        self.tsc_khz
            .filter(|k| *k > 0)
            .map(|k| c as f64 / (f64::from(k) * 1000.0))
    }

    /// The versioned JSON document.
    pub fn json(&self) -> Value {
        let keys = |keys: &[KeyRow]| -> Value {
            keys.iter()
                .map(|k| {
                    let st = &k.stats;
                    let last = st.hist.iter().rposition(|n| *n > 0).map_or(0, |i| i + 1);
                    json!({
                        "key": st.key(),
                        "reason": st.kind.perf_name(),
                        // null for a reason without an address, and for the
                        // key that counts addresses past the table (`*:POUT`),
                        // whose stored address is only a marker.
                        "addr": (st.kind.has_address()
                            && st.addr != trapline_bus::profile::OVERFLOW_ADDR)
                            .then_some(st.addr),
                        "device": (!k.device.is_empty()).then_some(&k.device),
                        "count": st.count,
                        "total_cycles": st.total_cycles,
                        "mean_cycles": st.mean_cycles(),
                        "min_cycles": st.min_cycles,
                        "max_cycles": st.max_cycles,
                        "log2_histogram": &st.hist[..last],
                        "handling": dist_json(st.handling.as_ref()),
                        "in_kvm": dist_json(st.in_kvm.as_ref()),
                    })
                })
                .collect()
        };
        let counters = |c: &Result<Vec<(String, u64)>, String>| -> Value {
            match c {
                Ok(l) => Value::Object(l.iter().map(|(n, d)| (n.clone(), json!(d))).collect()),
                Err(why) => json!({ "unavailable": why }),
            }
        };
        json!({
            "schema": SCHEMA,
            "wall_seconds": self.wall.as_secs_f64(),
            "tsc_khz": self.tsc_khz,
            "histogram": "log2_histogram[b] counts handling times in [2^(b-1), 2^b) cycles; [0] counts 0",
            "distributions": "handling (KVM_RUN's return to the next KVM_RUN) and in_kvm (KVM_RUN's entry to its return), cycles, for the first keys of each vCPU (null past them): log-linear buckets [low, high, count], quantiles are bucket midpoints within 0.78 %",
            "vcpus": self.vcpus.iter().enumerate().map(|(i, v)| json!({
                "index": i,
                "exits": v.exits(),
                "in_kvm_run_cycles": v.in_kvm_cycles,
                "in_trapline_cycles": v.in_vmm_cycles,
                "keys": keys(&v.keys),
                "kvm": counters(&v.kvm),
            })).collect::<Vec<_>>(),
            "total": {
                "exits": self.vcpus.iter().map(VcpuStat::exits).sum::<u64>(),
                "keys": keys(&self.total_keys()),
                "kvm": match self.total_kvm() {
                    Some(t) => counters(&Ok(t)),
                    None => json!(null),
                },
            },
            "kvm_vm": counters(&self.kvm_vm),
        })
    }
}

/// Firecracker-style metrics: one JSON object per line. Field names
/// follow Firecracker's `vcpu.exit_io_in` style; counts are deltas since
/// the previous line, as Firecracker's flushed metrics are. Where KVM's
/// statistics are open, a `kvm` object adds the deltas of KVM's own
/// counters (VM and vCPUs summed: `exits`, `insn_emulation`,
/// `mmu_pte_write`, …), so a guest's timeline (its printk timestamps) can
/// be lined up with where the host's emulation went.
#[derive(Debug, Default)]
pub struct MetricsLines {
    last: BTreeMap<&'static str, u64>,
    kvm_last: BTreeMap<String, u64>,
    /// A write of a line failed and was reported: the warning is said once.
    pub(crate) write_failed: bool,
}

impl MetricsLines {
    /// The next line for `now` (milliseconds since the epoch), from the
    /// cumulative profile snapshots of every vCPU and KVM's cumulative
    /// counters since the run began (`kvm`, where readable).
    pub fn line(
        &mut self,
        utc_ms: u128,
        vcpus: &[ProfileSnapshot],
        kvm: Option<&BTreeMap<String, u64>>,
        final_line: bool,
    ) -> String {
        let mut cum: BTreeMap<&'static str, u64> = BTreeMap::new();
        for v in vcpus {
            for k in &v.keys {
                let field = match k.kind {
                    ExitKind::PioRead => "exit_io_in",
                    ExitKind::PioWrite => "exit_io_out",
                    ExitKind::MmioRead => "exit_mmio_read",
                    ExitKind::MmioWrite => "exit_mmio_write",
                    ExitKind::Hlt => "exit_hlt",
                    ExitKind::Interrupted => "exit_interrupted",
                    // Shutdown and Other have no field of their own; the
                    // profile keys none of the rest (it keys the exit, and
                    // an OUT to the fast port as the OUT it is).
                    ExitKind::Shutdown
                    | ExitKind::UnmappedPio
                    | ExitKind::UnmappedMmio
                    | ExitKind::CoalescedEntries
                    | ExitKind::FastPort
                    | ExitKind::BadUcall
                    | ExitKind::Hypercall
                    | ExitKind::Other => "exit_other",
                };
                *cum.entry(field).or_default() += k.count;
                *cum.entry("handling_cycles").or_default() += k.total_cycles;
            }
            *cum.entry("in_kvm_run_cycles").or_default() += v.in_kvm_cycles;
        }
        let mut vcpu = serde_json::Map::new();
        for f in [
            "exit_io_in",
            "exit_io_out",
            "exit_mmio_read",
            "exit_mmio_write",
            "exit_hlt",
            "exit_interrupted",
            "exit_other",
            "handling_cycles",
            "in_kvm_run_cycles",
        ] {
            let now = cum.get(f).copied().unwrap_or(0);
            let before = self.last.insert(f, now).unwrap_or(0);
            vcpu.insert(f.into(), json!(now.saturating_sub(before)));
        }
        let mut out = json!({ "utc_timestamp_ms": utc_ms as u64, "vcpu": vcpu });
        if let Some(kvm) = kvm {
            let mut moved = serde_json::Map::new();
            for (name, &now) in kvm {
                let before = self.kvm_last.insert(name.clone(), now).unwrap_or(0);
                moved.insert(name.clone(), json!(now.saturating_sub(before)));
            }
            out["kvm"] = Value::Object(moved);
        }
        if final_line {
            out["final"] = json!(true);
        }
        let mut line = out.to_string();
        line.push('\n');
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trapline_bus::ExitProfile;

    /// Two vCPUs with the same keys; KVM's per-VM counters missing.
    pub(crate) fn report() -> StatReport {
        let p = ExitProfile::new();
        for _ in 0..3 {
            p.record_exit(ExitKind::PioWrite, 0xf4, 2000, Some(3000));
        }
        p.record(ExitKind::PioRead, 0x3f8, 500);
        p.record(ExitKind::MmioWrite, 0xfe00_0000, 700);
        p.add_in_kvm(9000);
        p.add_in_vmm(7200);
        let pio = {
            let mut b = trapline_bus::BusBuilder::new();
            b.insert(
                "isa-debug-exit",
                0xf4,
                4,
                std::sync::Arc::new(trapline_devices::debug_exit::DebugExit),
            )
            .unwrap();
            b.build()
        };
        let mmio = trapline_bus::BusBuilder::new().build();
        let mut v = VcpuStat::from_snapshot(p.snapshot(), &pio, &mmio);
        v.kvm = Ok(vec![("exits".into(), 12), ("io_exits".into(), 4)]);
        let mut w = v.clone();
        w.kvm = Ok(vec![("exits".into(), 1), ("io_exits".into(), 0)]);
        StatReport {
            wall: Duration::from_millis(1500),
            tsc_khz: Some(1_000_000),
            vcpus: vec![v, w],
            kvm_vm: Err("this kernel has no KVM_GET_STATS_FD".into()),
        }
    }

    #[test]
    fn keys_name_their_device_and_totals_merge_vcpus() {
        let r = report();
        let t = r.total_keys();
        assert_eq!(t[0].stats.key(), "0xf4:POUT");
        assert_eq!(t[0].device, "isa-debug-exit");
        assert_eq!(t[0].stats.count, 6);
        let unmapped = t.iter().find(|k| k.stats.key() == "0xfe000000:W").unwrap();
        assert_eq!(unmapped.device, "unmapped");
        assert_eq!(
            r.total_kvm().unwrap(),
            vec![("exits".to_string(), 13), ("io_exits".to_string(), 4)]
        );
    }

    #[test]
    fn the_table_and_json_carry_both_sides() {
        let r = report();
        let t = r.table();
        assert!(t.contains("10 exits reached trapline"), "{t}");
        assert!(t.contains("0xf4:POUT"), "{t}");
        assert!(t.contains("isa-debug-exit"), "{t}");
        assert!(
            t.contains("Both sides: KVM counted 13 exits; 10 reached trapline (76.9%), 3 were served inside the kernel"),
            "{t}"
        );
        let j = r.json();
        assert_eq!(j["schema"], SCHEMA);
        assert_eq!(j["total"]["exits"], 10);
        assert_eq!(j["vcpus"][0]["keys"][0]["key"], "0xf4:POUT");
        assert_eq!(j["vcpus"][0]["keys"][0]["count"], 3);
        assert_eq!(j["vcpus"][0]["kvm"]["io_exits"], 4);
        assert_eq!(j["total"]["kvm"]["exits"], 13);
        assert!(j["kvm_vm"]["unavailable"]
            .as_str()
            .unwrap()
            .contains("STATS_FD"));
        let hist = j["vcpus"][0]["keys"][0]["log2_histogram"]
            .as_array()
            .unwrap();
        assert_eq!(hist.len(), 12); // 2000 cycles: bucket 11
        assert_eq!(hist[11], 3);
        let out = &j["vcpus"][0]["keys"][0];
        assert_eq!(out["handling"]["count"], 3);
        assert_eq!(out["handling"]["p50"], 2000);
        assert_eq!(out["in_kvm"]["p99"], 3000);
        assert_eq!(out["in_kvm"]["buckets"], json!([[2976, 3007, 3]]));
        // A key recorded without KVM_RUN's time has no in-KVM distribution.
        let pin = j["vcpus"][0]["keys"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["key"] == "0x3f8:PIN")
            .unwrap();
        assert!(pin["in_kvm"].is_null() && pin["handling"]["max"] == 500);
    }

    #[test]
    fn the_key_for_addresses_past_the_table_has_a_null_address() {
        let p = ExitProfile::new();
        for port in 0..600u64 {
            p.record(ExitKind::PioWrite, port, 10);
        }
        p.record(ExitKind::Hlt, 0, 10);
        let pio = trapline_bus::BusBuilder::new().build();
        let mmio = trapline_bus::BusBuilder::new().build();
        let r = StatReport {
            wall: Duration::from_millis(1),
            tsc_khz: None,
            vcpus: vec![VcpuStat::from_snapshot(p.snapshot(), &pio, &mmio)],
            kvm_vm: Err("none".into()),
        };
        let j = r.json();
        let keys = j["vcpus"][0]["keys"].as_array().unwrap();
        let key = |k: &str| keys.iter().find(|e| e["key"] == k).unwrap();
        assert!(key("*:POUT")["addr"].is_null(), "{}", key("*:POUT"));
        assert!(key("HLT")["addr"].is_null());
        assert_eq!(key("0x5:POUT")["addr"], 5);
        assert!(
            !j.to_string().contains(&u64::MAX.to_string()),
            "no sentinel integer anywhere"
        );
    }

    #[test]
    fn metrics_lines_are_deltas_in_firecracker_names() {
        let p = ExitProfile::new();
        p.record(ExitKind::PioRead, 0x3f8, 5);
        let mut m = MetricsLines::default();
        let a: Value = serde_json::from_str(&m.line(1, &[p.snapshot()], None, false)).unwrap();
        assert_eq!(a["vcpu"]["exit_io_in"], 1);
        assert!(
            a.get("kvm").is_none(),
            "no kvm object without KVM's statistics"
        );
        p.record(ExitKind::PioRead, 0x3f8, 5);
        p.record(ExitKind::PioRead, 0x3f8, 5);
        let line = m.line(2, &[p.snapshot()], None, true);
        assert!(line.ends_with('\n') && line.matches('\n').count() == 1);
        let b: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(b["vcpu"]["exit_io_in"], 2);
        assert_eq!(b["vcpu"]["exit_io_out"], 0);
        assert_eq!(b["final"], true);
        assert_eq!(b["utc_timestamp_ms"], 2);
    }

    #[test]
    fn metrics_lines_carry_kvm_counter_deltas() {
        let mut m = MetricsLines::default();
        let cum = |e: u64, i: u64| {
            BTreeMap::from([("exits".to_string(), e), ("insn_emulation".to_string(), i)])
        };
        let a: Value = serde_json::from_str(&m.line(1, &[], Some(&cum(10, 500)), false)).unwrap();
        assert_eq!(a["kvm"]["exits"], 10);
        assert_eq!(a["kvm"]["insn_emulation"], 500);
        let b: Value = serde_json::from_str(&m.line(2, &[], Some(&cum(15, 900)), true)).unwrap();
        assert_eq!(b["kvm"]["exits"], 5);
        assert_eq!(b["kvm"]["insn_emulation"], 400);
    }
}
