//! What `builtin:vnet` printed: its `vnet: …` console lines (the one
//! channel every VMM gives it) read back into numbers, the round-trip
//! histogram through [`Histogram::from_guest`] so a guest's block is
//! checked the same way whichever way it arrived.

use trapline_abi::{GuestHist, Histogram, HIST_BUCKETS, HIST_MAGIC};

/// One `builtin:vnet` run as its console tells it (clock ticks: TSC cycles
/// on x86, counter ticks on arm64).
#[derive(Clone, Debug, PartialEq)]
pub struct VnetRun {
    /// Request/response pairs timed.
    pub pairs: u64,
    /// UDP payload bytes of each pair's frames.
    pub pair_size: u64,
    /// Round trips (send to the receive interrupt), in ticks.
    pub rtt: Histogram,
    /// Bursts sent, and how many came back whole.
    pub bursts: u64,
    /// Bursts every frame of which came back.
    pub bursts_whole: u64,
    /// Frames in flight per burst.
    pub depth: u64,
    /// UDP payload bytes of each burst frame.
    pub burst_size: u64,
    /// Ticks the whole bursts took, first send to last receive, summed.
    pub burst_ticks: u64,
    /// Frames that never came back within the bound.
    pub lost: u64,
    /// Frames that came back after a later one.
    pub reordered: u64,
    /// Frames whose bytes were wrong, or broken used entries.
    pub bad: u64,
    /// Frames that came back twice.
    pub dup: u64,
    /// Receive interrupts the guest took.
    pub irqs: u64,
    /// Doorbells (QueueNotify writes) the guest rang.
    pub notifies: u64,
    /// The guest's clock rate when it knew it (0: not known).
    pub clock_hz: u64,
    /// Clock readings behind an earlier one, held at it (the emulated
    /// arm64 host's counter stepped back once); a round trip across a step
    /// reads short.
    pub clock_back: u64,
    /// The guest's verdict line: `vnet: OK`.
    pub ok: bool,
}

/// `key=value` from a line's words.
fn field(line: &str, key: &str) -> Option<u64> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
        .and_then(|v| v.parse().ok())
}

/// The `rtt` histogram's lines: totals, then `b=index:count,…` lines.
fn histogram(out: &str) -> Result<Histogram, String> {
    let mut g = GuestHist {
        magic: HIST_MAGIC,
        count: 0,
        min: u64::MAX,
        max: 0,
        sum: 0,
        counts: [0; HIST_BUCKETS],
    };
    let mut totals = false;
    for line in out
        .lines()
        .filter_map(|l| l.trim().strip_prefix("vnet: hist rtt "))
    {
        if let Some(list) = line.strip_prefix("b=") {
            for pair in list.split(',') {
                let (i, c) = pair
                    .split_once(':')
                    .and_then(|(i, c)| Some((i.parse::<usize>().ok()?, c.parse::<u32>().ok()?)))
                    .ok_or_else(|| format!("unreadable histogram bucket `{pair}`"))?;
                let slot = g
                    .counts
                    .get_mut(i)
                    .ok_or_else(|| format!("histogram bucket {i} out of range"))?;
                *slot = slot.saturating_add(c);
            }
        } else {
            g.count = field(line, "count").ok_or("histogram line without count=")?;
            g.min = field(line, "min").unwrap_or(u64::MAX);
            g.max = field(line, "max").unwrap_or(0);
            g.sum = field(line, "sum").unwrap_or(0);
            totals = true;
        }
    }
    if !totals {
        return Err("no `vnet: hist rtt` line".into());
    }
    Histogram::from_guest(&g).map_err(|e| e.to_string())
}

/// Reads a run's console. Errors name what is missing (a guest that
/// stopped early prints less).
pub fn parse(out: &str) -> Result<VnetRun, String> {
    let line = |prefix: &str| {
        out.lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix(prefix))
            .ok_or_else(|| format!("no `{}` line", prefix.trim_end()))
    };
    let device = line("vnet: device at ")?;
    let pairs = line("vnet: pairs ")?;
    let totals = line("vnet: lost=")?;
    let bursts = line("vnet: bursts ").unwrap_or("");
    let totals = format!("lost={totals}");
    let f = |l: &str, k: &str| field(l, k).unwrap_or(0);
    Ok(VnetRun {
        pairs: f(pairs, "n"),
        pair_size: f(pairs, "size"),
        rtt: histogram(out)?,
        bursts: f(bursts, "n"),
        bursts_whole: f(bursts, "whole"),
        depth: f(bursts, "depth"),
        burst_size: f(bursts, "size"),
        burst_ticks: f(bursts, "ticks"),
        lost: f(&totals, "lost"),
        reordered: f(&totals, "reordered"),
        bad: f(&totals, "bad"),
        dup: f(&totals, "dup"),
        irqs: f(&totals, "irqs"),
        notifies: f(&totals, "notifies"),
        clock_hz: f(device, "clock_hz"),
        clock_back: f(&totals, "clock_back"),
        ok: out.lines().any(|l| l.trim() == "vnet: OK"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUT: &str = "\
vnet: device at 0xd8000000 gsi 5 mac 52:54:00:12:34:56 queues 128/128 event-idx mode echo link 1 clock_hz=0
vnet: pairs n=3 size=64 lost=0 p50=1000 p99=3000 max=3000
vnet: hist rtt count=3 min=1000 max=3000 sum=6000
vnet: hist rtt b=317:1,381:1
vnet: hist rtt b=413:1
vnet: bursts n=2 depth=4 size=1472 whole=2 ticks=8000
vnet: lost=0 reordered=0 bad=0 dup=0 other=1 irqs=9 missed_irqs=0 notifies=12
vnet: OK
";

    #[test]
    fn reads_every_line_and_the_histogram() {
        let r = parse(OUT).unwrap();
        assert_eq!(
            (r.pairs, r.pair_size, r.bursts, r.bursts_whole),
            (3, 64, 2, 2)
        );
        assert_eq!((r.depth, r.burst_size, r.burst_ticks), (4, 1472, 8000));
        assert_eq!(
            (r.lost, r.reordered, r.bad, r.irqs, r.notifies),
            (0, 0, 0, 9, 12)
        );
        assert!(r.ok);
        assert_eq!(r.clock_back, 0);
        assert_eq!(
            parse(&OUT.replace("notifies=12", "notifies=12 clock_back=2"))
                .unwrap()
                .clock_back,
            2
        );
        assert_eq!(r.rtt.count(), 3);
        assert_eq!((r.rtt.min(), r.rtt.max()), (Some(1000), Some(3000)));
        assert_eq!(r.rtt.buckets().count(), 3);
    }

    #[test]
    fn refuses_a_histogram_that_does_not_add_up() {
        let bad = OUT.replace("count=3", "count=4");
        assert!(parse(&bad).unwrap_err().contains("do not add up"));
        let oob = OUT.replace("413:1", "999999:1");
        assert!(parse(&oob).unwrap_err().contains("out of range"));
    }

    #[test]
    fn says_what_a_short_run_lacks() {
        let short: String = OUT.lines().take(1).collect::<Vec<_>>().join("\n");
        assert_eq!(parse(&short).unwrap_err(), "no `vnet: pairs` line");
        let r = parse(&OUT.replace("vnet: OK", "vnet: FAIL")).unwrap();
        assert!(!r.ok);
    }
}
