//! Guest RAM as the loader reasons about it: RAM runs, the device ranges
//! the machine reserves, and the range arithmetic between them (merging,
//! subtracting holes, finding where RAM stops). The memory map
//! (`bootinfo`) and the boot area's placement (`place`)
//! are both built from it.

use std::fmt;
use std::ops::Range;

use vm_memory::{GuestMemoryBackend, GuestMemoryMmap, GuestMemoryRegion};

/// A guest-physical range the machine owns (a device window, the KVM TSS,
/// ...). Nothing is loaded over it, and ranges below 4 GiB are reported as
/// reserved in the memory map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reserved {
    /// First byte.
    pub base: u64,
    /// Length in bytes (0 means "nothing", and is ignored).
    pub len: u64,
    /// Name used in error messages ("IOAPIC", "pci-testdev BAR0", ...).
    pub name: &'static str,
}

/// Guest RAM as sorted, merged, half-open ranges (regions of a
/// `GuestMemoryMmap` that touch are one range here).
#[derive(Debug, Clone)]
pub struct Ram {
    pub runs: Vec<Range<u64>>,
}

impl Ram {
    pub fn of(mem: &GuestMemoryMmap) -> Ram {
        let mut v: Vec<Range<u64>> = mem
            .iter()
            .map(|r| {
                let start = r.start_addr().0;
                start..start.saturating_add(r.len())
            })
            .filter(|r| !r.is_empty())
            .collect();
        v.sort_by_key(|r| r.start);
        Ram { runs: merge(v) }
    }

    /// Total bytes of RAM (what the user asked for with --mem).
    pub fn size(&self) -> u64 {
        self.runs.iter().map(|r| r.end - r.start).sum()
    }

    /// One past the highest RAM byte.
    pub fn top(&self) -> u64 {
        self.runs.last().map_or(0, |r| r.end)
    }

    /// The first address in `range` that is not RAM, if any.
    pub fn first_hole(&self, range: &Range<u64>) -> Option<u64> {
        let mut cur = range.start;
        while cur < range.end {
            match self.runs.iter().find(|r| r.contains(&cur)) {
                Some(run) => cur = run.end,
                None => return Some(cur),
            }
        }
        None
    }
}

/// Merges sorted ranges that overlap or touch.
pub(crate) fn merge(sorted: Vec<Range<u64>>) -> Vec<Range<u64>> {
    let mut out: Vec<Range<u64>> = Vec::with_capacity(sorted.len());
    for r in sorted {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// `runs` minus every range in `holes` (both sorted by start; holes may overlap).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // only the x86 loader uses it so far
pub(crate) fn subtract(runs: &[Range<u64>], holes: &[Range<u64>]) -> Vec<Range<u64>> {
    let mut out = Vec::new();
    for run in runs {
        let mut cur = run.start;
        for h in holes {
            if h.end <= cur || h.start >= run.end {
                continue;
            }
            if h.start > cur {
                out.push(cur..h.start);
            }
            cur = cur.max(h.end);
            if cur >= run.end {
                break;
            }
        }
        if cur < run.end {
            out.push(cur..run.end);
        }
    }
    out
}

/// `v` rounded up to a multiple of `align` (a power of two); the highest
/// multiple when that would overflow.
pub(crate) fn align_up(v: u64, align: u64) -> u64 {
    v.checked_add(align - 1)
        .map_or(!(align - 1), |x| x & !(align - 1))
}

/// A reserved range as a half-open range, saturating instead of wrapping.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // only the x86 loader uses it so far
pub fn reserved_range(r: &Reserved) -> Range<u64> {
    r.base..r.base.saturating_add(r.len)
}

/// A half-open guest-physical range, printed as `0x400000..0x1060000`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}..{:#x}", self.start, self.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ram(runs: &[Range<u64>]) -> Ram {
        Ram {
            runs: runs.to_vec(),
        }
    }

    #[test]
    fn subtract_carves_holes() {
        let got = subtract(&[0..100, 200..300], &[10..20, 15..30, 90..210, 250..260]);
        assert_eq!(got, vec![0..10, 30..90, 210..250, 260..300]);
    }

    #[test]
    fn first_hole_walks_adjacent_runs() {
        let r = ram(&[0..0x1000, 0x2000..0x3000]);
        assert_eq!(r.first_hole(&(0..0x1000)), None);
        assert_eq!(r.first_hole(&(0x800..0x2800)), Some(0x1000));
        assert_eq!(r.first_hole(&(0x2800..0x3001)), Some(0x3000));
    }
}
