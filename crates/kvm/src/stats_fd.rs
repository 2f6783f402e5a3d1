//! KVM's binary statistics (`KVM_GET_STATS_FD`, Linux 5.14+): every counter
//! KVM keeps for a VM or a vCPU — exits by kind, halt polls, TLB flushes,
//! histograms of halt wait times — read in bulk from one fd.
//!
//! The fd's file is laid out as (Documentation/virt/kvm/api.rst):
//!
//! ```text
//! offset 0            header   {flags, name_size, num_desc, id_offset,
//!                               desc_offset, data_offset: u32}
//! id_offset           id       name_size bytes, NUL-padded
//! desc_offset         num_desc × {flags u32, exponent i16, size u16,
//!                               offset u32, bucket_size u32,
//!                               name[name_size]}
//! data_offset         data     desc.offset → desc.size × u64
//! ```
//!
//! Everything but the data is fixed for the fd's life, so [`StatsFd`] reads
//! and parses it once, at open ([`parse_descriptors`] is the pure parser).
//! [`StatsFd::read`] is then a single `pread64` of the data block into the
//! snapshot's own vector; [`StatsSnapshot::delta`] turns two snapshots into
//! what happened in between.
//!
//! ```no_run
//! # use trapline_kvm::stats_fd::StatsFd;
//! # fn f(vcpu: &trapline_kvm::VcpuFd) -> Result<(), trapline_kvm::stats_fd::StatsError> {
//! let stats = match StatsFd::open_vcpu(vcpu) {
//!     Ok(s) => s,
//!     Err(e) if e.is_unsupported() => {
//!         eprintln!("{e}");
//!         return Ok(());
//!     }
//!     Err(e) => return Err(e),
//! };
//! let before = stats.read()?;
//! // ... run the guest ...
//! let after = stats.read()?;
//! for d in after.moved_since(&before) {
//!     println!("{}: {:?}", d.desc.name, d.value);
//! }
//! # Ok(()) }
//! ```
//!
//! Seccomp: opening needs `ioctl(KVM_GET_STATS_FD)` on the VM or vCPU fd and
//! `pread64` on the new fd; reading needs `pread64` only; dropping needs
//! `close`.

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use kvm_bindings::{
    KVM_STATS_BASE_MASK, KVM_STATS_BASE_POW10, KVM_STATS_BASE_POW2, KVM_STATS_TYPE_CUMULATIVE,
    KVM_STATS_TYPE_INSTANT, KVM_STATS_TYPE_LINEAR_HIST, KVM_STATS_TYPE_LOG_HIST,
    KVM_STATS_TYPE_MASK, KVM_STATS_TYPE_PEAK, KVM_STATS_UNIT_BOOLEAN, KVM_STATS_UNIT_BYTES,
    KVM_STATS_UNIT_CYCLES, KVM_STATS_UNIT_MASK, KVM_STATS_UNIT_NONE, KVM_STATS_UNIT_SECONDS,
};
use kvm_ioctls::{VcpuFd, VmFd};

vmm_sys_util::ioctl_io_nr!(KVM_GET_STATS_FD, kvm_bindings::KVMIO, 0xce);

/// Size of the header at offset 0.
pub const HEADER_SIZE: usize = 24;
/// Size of a descriptor without its trailing name.
pub const DESC_FIXED_SIZE: usize = 16;
/// The most bytes trapline accepts for the header, id and descriptors, or
/// for the data block. Today's kernels use a few KiB of each; a header that
/// claims more is corrupt, and refusing it keeps a bad header from making
/// us allocate gigabytes.
pub const MAX_BLOCK_BYTES: u64 = 16 << 20;

/// Why the statistics could not be opened or read.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    /// The kernel has no KVM_GET_STATS_FD (before Linux 5.14). Callers that
    /// only want extra detail should say so and carry on without it.
    #[error("{what}: this kernel has no KVM binary statistics (KVM_GET_STATS_FD needs Linux 5.14 or later); continuing without KVM's own counters")]
    Unsupported {
        /// "VM" or "vCPU".
        what: &'static str,
        /// The errno (ENOTTY or EINVAL).
        source: std::io::Error,
    },
    /// The ioctl exists but failed (EMFILE, ENOMEM, ...).
    #[error("KVM_GET_STATS_FD on the {what} fd failed: {source} (EMFILE: raise the open-file limit with ulimit -n)")]
    Open {
        /// "VM" or "vCPU".
        what: &'static str,
        /// The errno.
        source: std::io::Error,
    },
    /// pread64 on the stats fd failed.
    #[error("reading the KVM {what} stats fd at offset {offset} ({len} bytes) failed: {source}")]
    Read {
        /// Which part: "header", "descriptors" or "data".
        what: &'static str,
        /// File offset.
        offset: u64,
        /// Bytes asked for.
        len: usize,
        /// The OS error (UnexpectedEof: the file is shorter than its header says).
        source: std::io::Error,
    },
    /// The header or descriptors do not describe a consistent file.
    #[error("malformed KVM stats block: {0} (a kernel bug, or not a KVM stats fd)")]
    Malformed(String),
}

impl StatsError {
    /// Whether the kernel simply lacks the interface: report it and go on.
    pub fn is_unsupported(&self) -> bool {
        matches!(self, StatsError::Unsupported { .. })
    }
}

/// How a statistic's values evolve (the flags' type field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatKind {
    /// Only ever grows: deltas are meaningful.
    Cumulative,
    /// A current level that goes up and down.
    Instant,
    /// The highest level seen so far.
    Peak,
    /// Histogram, `size` buckets each `bucket_size` wide.
    LinearHist,
    /// Histogram, bucket 0 counts 0, bucket i counts [2^(i-1), 2^i).
    LogHist,
    /// A type newer than this code; its values are kept as levels.
    Other(u32),
}

impl StatKind {
    /// Whether the values are histogram buckets.
    pub fn is_histogram(self) -> bool {
        matches!(self, StatKind::LinearHist | StatKind::LogHist)
    }
}

/// What a statistic counts (the flags' unit field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatUnit {
    /// Plain count of events.
    None,
    /// Bytes.
    Bytes,
    /// Seconds (scaled by the exponent: -9 is nanoseconds).
    Seconds,
    /// CPU cycles.
    Cycles,
    /// 0 or 1.
    Boolean,
    /// A unit newer than this code.
    Other(u32),
}

/// The base the exponent applies to (the flags' base field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatBase {
    /// Value × 10^exponent.
    Pow10,
    /// Value × 2^exponent.
    Pow2,
    /// A base newer than this code.
    Other(u32),
}

/// One statistic as the kernel describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatDesc {
    /// The statistic's name, e.g. `exits` or `halt_poll_success_ns`.
    pub name: String,
    /// Type.
    pub kind: StatKind,
    /// Unit.
    pub unit: StatUnit,
    /// Base of `exponent`.
    pub base: StatBase,
    /// The value is × base^exponent in `unit`.
    pub exponent: i16,
    /// Number of u64 values (1, or the bucket count of a histogram).
    pub size: u16,
    /// Byte offset of the values within the data block.
    pub offset: u32,
    /// Bucket width of a linear histogram.
    pub bucket_size: u32,
    /// The raw flags word.
    pub flags: u32,
}

impl StatDesc {
    /// The factor that turns a raw value into `unit`: base^exponent
    /// (1e-9 for a nanosecond counter).
    pub fn scale(&self) -> f64 {
        let base: f64 = match self.base {
            StatBase::Pow2 => 2.0,
            _ => 10.0,
        };
        base.powi(i32::from(self.exponent))
    }

    /// Index of the first value in the data block, in u64 words.
    fn word(&self) -> usize {
        self.offset as usize / 8
    }

    fn words(&self) -> std::ops::Range<usize> {
        self.word()..self.word() + usize::from(self.size)
    }
}

/// Everything in a stats fd but the data: fixed for the fd's life.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatsLayout {
    /// The id string, e.g. `kvm-1234/vcpu-0`.
    pub id: String,
    /// The statistics, in file order.
    pub descs: Vec<StatDesc>,
    /// File offset of the data block.
    pub data_offset: u64,
    /// Length of the data block the descriptors cover, in u64 words.
    pub data_words: usize,
}

impl StatsLayout {
    /// The descriptor named `name`.
    pub fn find(&self, name: &str) -> Option<(usize, &StatDesc)> {
        self.descs.iter().enumerate().find(|(_, d)| d.name == name)
    }
}

fn malformed(msg: impl Into<String>) -> StatsError {
    StatsError::Malformed(msg.into())
}

fn u32_at(buf: &[u8], at: usize) -> Result<u32, StatsError> {
    let bytes = at
        .checked_add(4)
        .and_then(|end| buf.get(at..end))
        .ok_or_else(|| {
            malformed(format!(
                "u32 at byte {at} is past the end ({} bytes)",
                buf.len()
            ))
        })?;
    // The kernel writes its structs in host byte order.
    Ok(u32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

fn u16_at(buf: &[u8], at: usize) -> Result<u16, StatsError> {
    let bytes = at
        .checked_add(2)
        .and_then(|end| buf.get(at..end))
        .ok_or_else(|| {
            malformed(format!(
                "u16 at byte {at} is past the end ({} bytes)",
                buf.len()
            ))
        })?;
    Ok(u16::from_ne_bytes([bytes[0], bytes[1]]))
}

/// A NUL-padded name field: the text before the first NUL.
fn name_at(buf: &[u8], at: usize, len: usize, what: &str) -> Result<String, StatsError> {
    let field = at
        .checked_add(len)
        .and_then(|end| buf.get(at..end))
        .ok_or_else(|| malformed(format!("{what} at byte {at} ({len} bytes) is past the end")))?;
    let end = field
        .iter()
        .position(|&b| b == 0)
        .ok_or_else(|| malformed(format!("{what} at byte {at} has no NUL in {len} bytes")))?;
    // Names are ASCII identifiers; a stray byte should not cost the rest.
    Ok(String::from_utf8_lossy(&field[..end]).into_owned())
}

/// The header fields, checked only for what the header alone can say.
struct Header {
    name_size: u32,
    num_desc: u32,
    id_offset: u32,
    desc_offset: u32,
    data_offset: u32,
}

impl Header {
    fn parse(buf: &[u8]) -> Result<Self, StatsError> {
        if buf.len() < HEADER_SIZE {
            return Err(malformed(format!(
                "{} bytes, shorter than the {HEADER_SIZE}-byte header",
                buf.len()
            )));
        }
        // flags (offset 0) is reserved, always 0 today: ignored so a future
        // flag does not make old trapline refuse the whole block.
        let h = Header {
            name_size: u32_at(buf, 4)?,
            num_desc: u32_at(buf, 8)?,
            id_offset: u32_at(buf, 12)?,
            desc_offset: u32_at(buf, 16)?,
            data_offset: u32_at(buf, 20)?,
        };
        if h.name_size == 0 {
            return Err(malformed("name_size is 0, so no name can hold its NUL"));
        }
        Ok(h)
    }

    /// One descriptor's size, name included.
    fn desc_size(&self) -> u64 {
        DESC_FIXED_SIZE as u64 + u64::from(self.name_size)
    }

    /// Bytes from offset 0 through the id and the descriptors.
    fn meta_len(&self) -> u64 {
        // u32 × u32 cannot overflow u64; the sums are of u64s under 2^50.
        let descs_end = u64::from(self.desc_offset) + u64::from(self.num_desc) * self.desc_size();
        let id_end = u64::from(self.id_offset) + u64::from(self.name_size);
        descs_end.max(id_end).max(HEADER_SIZE as u64)
    }
}

fn parse_flags(flags: u32) -> (StatKind, StatUnit, StatBase) {
    let kind = match flags & KVM_STATS_TYPE_MASK {
        KVM_STATS_TYPE_CUMULATIVE => StatKind::Cumulative,
        KVM_STATS_TYPE_INSTANT => StatKind::Instant,
        KVM_STATS_TYPE_PEAK => StatKind::Peak,
        KVM_STATS_TYPE_LINEAR_HIST => StatKind::LinearHist,
        KVM_STATS_TYPE_LOG_HIST => StatKind::LogHist,
        t => StatKind::Other(t),
    };
    let unit = match flags & KVM_STATS_UNIT_MASK {
        KVM_STATS_UNIT_NONE => StatUnit::None,
        KVM_STATS_UNIT_BYTES => StatUnit::Bytes,
        KVM_STATS_UNIT_SECONDS => StatUnit::Seconds,
        KVM_STATS_UNIT_CYCLES => StatUnit::Cycles,
        KVM_STATS_UNIT_BOOLEAN => StatUnit::Boolean,
        u => StatUnit::Other(u),
    };
    let base = match flags & KVM_STATS_BASE_MASK {
        KVM_STATS_BASE_POW10 => StatBase::Pow10,
        KVM_STATS_BASE_POW2 => StatBase::Pow2,
        b => StatBase::Other(b),
    };
    (kind, unit, base)
}

/// Parse the header, id and descriptors from `buf`, the stats file's bytes
/// from offset 0 through at least the last descriptor. Pure: the data block
/// need not be present. Any inconsistency (a block past the end of `buf`,
/// a name without NUL, a value not 8-byte aligned, offsets that overflow)
/// is [`StatsError::Malformed`], never a panic.
pub fn parse_descriptors(buf: &[u8]) -> Result<StatsLayout, StatsError> {
    let h = Header::parse(buf)?;
    if h.meta_len() > buf.len() as u64 {
        return Err(malformed(format!(
            "the header puts {} descriptors of {} bytes at byte {} and the id at byte {}, \
             {} bytes in all, but the block has {}",
            h.num_desc,
            h.desc_size(),
            h.desc_offset,
            h.id_offset,
            h.meta_len(),
            buf.len()
        )));
    }
    // From here every descriptor and the id lie inside `buf` (and so inside
    // usize), which the indexing helpers still check rather than trust.
    let name_size = h.name_size as usize;
    let id = name_at(buf, h.id_offset as usize, name_size, "the id string")?;
    let mut descs = Vec::with_capacity(h.num_desc as usize);
    let mut data_words = 0usize;
    for i in 0..h.num_desc as usize {
        let at = h.desc_offset as usize + i * (DESC_FIXED_SIZE + name_size);
        let flags = u32_at(buf, at)?;
        let exponent = u16_at(buf, at + 4)? as i16;
        let size = u16_at(buf, at + 6)?;
        let offset = u32_at(buf, at + 8)?;
        let bucket_size = u32_at(buf, at + 12)?;
        let name = name_at(buf, at + DESC_FIXED_SIZE, name_size, "a descriptor name")?;
        if offset % 8 != 0 {
            return Err(malformed(format!(
                "{name}: data offset {offset} is not a multiple of 8 (values are u64)"
            )));
        }
        // u32 offset + u16 × 8 fits easily in u64 and in usize words.
        let end_bytes = u64::from(offset) + u64::from(size) * 8;
        if end_bytes > MAX_BLOCK_BYTES {
            return Err(malformed(format!(
                "{name}: values end {end_bytes} bytes into the data block, past the {MAX_BLOCK_BYTES}-byte limit"
            )));
        }
        data_words = data_words.max((end_bytes / 8) as usize);
        let (kind, unit, base) = parse_flags(flags);
        descs.push(StatDesc {
            name,
            kind,
            unit,
            base,
            exponent,
            size,
            offset,
            bucket_size,
            flags,
        });
    }
    Ok(StatsLayout {
        id,
        descs,
        data_offset: u64::from(h.data_offset),
        data_words,
    })
}

/// An open KVM statistics fd with its parsed descriptors.
pub struct StatsFd {
    file: File,
    layout: Arc<StatsLayout>,
}

impl std::fmt::Debug for StatsFd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatsFd")
            .field("fd", &self.file.as_raw_fd())
            .field("id", &self.layout.id)
            .field("stats", &self.layout.descs.len())
            .finish()
    }
}

impl StatsFd {
    /// Open the VM's statistics (e.g. `remote_tlb_flush`, `pages_4k`).
    pub fn open_vm(vm: &VmFd) -> Result<Self, StatsError> {
        Self::open(vm, "VM")
    }

    /// Open one vCPU's statistics (e.g. `exits`, `io_exits`, `halt_exits`).
    /// Safe to call from any thread; the fd stays valid after the vCPU's
    /// thread ends, as long as the vCPU exists.
    pub fn open_vcpu(vcpu: &VcpuFd) -> Result<Self, StatsError> {
        Self::open(vcpu, "vCPU")
    }

    fn open(fd: &impl AsRawFd, what: &'static str) -> Result<Self, StatsError> {
        // SAFETY: KVM_GET_STATS_FD takes no argument and touches no user
        // memory; `fd` is a live KVM VM or vCPU fd; the result is checked.
        let ret = unsafe { vmm_sys_util::ioctl::ioctl(fd, KVM_GET_STATS_FD()) };
        if ret < 0 {
            let source = std::io::Error::last_os_error();
            // Unknown ioctls answer ENOTTY on a VM fd and EINVAL on a vCPU fd.
            return Err(match source.raw_os_error() {
                Some(libc::ENOTTY) | Some(libc::EINVAL) => StatsError::Unsupported { what, source },
                _ => StatsError::Open { what, source },
            });
        }
        // SAFETY: the kernel just returned this new fd (O_CLOEXEC) and
        // nothing else owns it.
        let file = unsafe { File::from_raw_fd(ret) };
        Self::from_file(file)
    }

    /// Parse the statistics of an already open stats file (what `open_*`
    /// do after the ioctl; also lets tests feed a file).
    pub fn from_file(file: File) -> Result<Self, StatsError> {
        let mut head = [0u8; HEADER_SIZE];
        read_at(&file, &mut head, 0, "header")?;
        let meta_len = Header::parse(&head)?.meta_len();
        if meta_len > MAX_BLOCK_BYTES {
            return Err(malformed(format!(
                "the header claims {meta_len} bytes of id and descriptors, past the {MAX_BLOCK_BYTES}-byte limit"
            )));
        }
        let mut meta = vec![0u8; meta_len as usize];
        read_at(&file, &mut meta, 0, "descriptors")?;
        let layout = parse_descriptors(&meta)?;
        Ok(Self {
            file,
            layout: Arc::new(layout),
        })
    }

    /// The id string, e.g. `kvm-1234/vcpu-0`.
    pub fn id(&self) -> &str {
        &self.layout.id
    }

    /// The statistics this fd offers, parsed at open.
    pub fn descriptors(&self) -> &[StatDesc] {
        &self.layout.descs
    }

    /// The full layout, shared with every snapshot.
    pub fn layout(&self) -> &Arc<StatsLayout> {
        &self.layout
    }

    /// Read every statistic now: one `pread64` into the snapshot's vector,
    /// its only allocation.
    pub fn read(&self) -> Result<StatsSnapshot, StatsError> {
        let mut snap = StatsSnapshot {
            layout: Arc::clone(&self.layout),
            words: vec![0u64; self.layout.data_words],
        };
        self.read_into(&mut snap)?;
        Ok(snap)
    }

    /// Re-read into an existing snapshot of this fd: no allocation at all.
    /// A snapshot from another fd is first re-shaped to this one.
    pub fn read_into(&self, snap: &mut StatsSnapshot) -> Result<(), StatsError> {
        if !Arc::ptr_eq(&snap.layout, &self.layout) {
            snap.layout = Arc::clone(&self.layout);
            snap.words.clear();
            snap.words.resize(self.layout.data_words, 0);
        }
        let words = &mut snap.words[..];
        // SAFETY: the byte view covers exactly the initialised `words`
        // slice (len × 8 bytes, u8 has alignment 1) and is dropped before
        // `words` is used again; every bit pattern is a valid u64.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), words.len() * 8)
        };
        read_at(&self.file, bytes, self.layout.data_offset, "data")
    }
}

fn read_at(file: &File, buf: &mut [u8], offset: u64, what: &'static str) -> Result<(), StatsError> {
    // FileExt::read_exact_at is pread64 in a loop (short reads, EINTR):
    // no lseek, so a seccomp filter needs only pread64.
    file.read_exact_at(buf, offset)
        .map_err(|source| StatsError::Read {
            what,
            offset,
            len: buf.len(),
            source,
        })
}

/// Every statistic's values at one moment.
#[derive(Clone, Debug)]
pub struct StatsSnapshot {
    layout: Arc<StatsLayout>,
    words: Vec<u64>,
}

impl StatsSnapshot {
    /// The layout the values follow.
    pub fn layout(&self) -> &StatsLayout {
        &self.layout
    }

    /// The values of the `index`th descriptor (one, or a histogram's
    /// buckets).
    pub fn values(&self, index: usize) -> Option<&[u64]> {
        let d = self.layout.descs.get(index)?;
        self.words.get(d.words())
    }

    /// The values of the statistic named `name`.
    pub fn get(&self, name: &str) -> Option<&[u64]> {
        let (i, _) = self.layout.find(name)?;
        self.values(i)
    }

    /// The single value of the scalar statistic named `name` (the first
    /// bucket of a histogram).
    pub fn value(&self, name: &str) -> Option<u64> {
        self.get(name)?.first().copied()
    }

    /// Each descriptor with its values, in file order.
    pub fn iter(&self) -> impl Iterator<Item = (&StatDesc, &[u64])> {
        self.layout
            .descs
            .iter()
            .map(|d| (d, self.words.get(d.words()).unwrap_or(&[])))
    }

    /// What changed since `earlier`, one entry per statistic of `self`.
    /// Cumulative counters give their change, histograms the bucket-wise
    /// change, instant and peak values their value now. `earlier` may come
    /// from another fd: statistics are then matched by name, and one
    /// `earlier` lacks counts from zero. A counter that went backwards
    /// (only if the two snapshots are of different VMs) gives 0, not a
    /// wrapped huge number.
    pub fn delta<'a>(&'a self, earlier: &StatsSnapshot) -> Vec<StatDelta<'a>> {
        let same = Arc::ptr_eq(&self.layout, &earlier.layout);
        self.iter()
            .enumerate()
            .map(|(i, (desc, now))| {
                let before = if same {
                    earlier.values(i)
                } else {
                    earlier.get(&desc.name)
                }
                .unwrap_or(&[]);
                StatDelta::between(desc, before, now)
            })
            .collect()
    }

    /// The statistics that moved since `earlier`: counters and buckets
    /// that grew, levels that changed.
    pub fn moved_since<'a>(&'a self, earlier: &StatsSnapshot) -> Vec<StatDelta<'a>> {
        let mut d = self.delta(earlier);
        d.retain(StatDelta::moved);
        d
    }
}

/// What one statistic did between two snapshots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeltaValue {
    /// A cumulative counter's change.
    Count(u64),
    /// An instant or peak value (or a type newer than this code): the later
    /// value.
    Level(u64),
    /// A histogram's bucket-wise change (or a multi-value counter's).
    Buckets(Vec<u64>),
    /// A multi-value level's later values.
    Levels(Vec<u64>),
}

/// One statistic's change between two snapshots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatDelta<'a> {
    /// The statistic.
    pub desc: &'a StatDesc,
    /// What it did.
    pub value: DeltaValue,
    moved: bool,
}

impl<'a> StatDelta<'a> {
    fn between(desc: &'a StatDesc, before: &[u64], now: &[u64]) -> Self {
        let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
        let grows = matches!(desc.kind, StatKind::Cumulative) || desc.kind.is_histogram();
        let moved = (0..now.len()).any(|i| at(now, i) != at(before, i));
        let value = match (grows, now.len()) {
            (true, 1) if !desc.kind.is_histogram() => {
                DeltaValue::Count(now[0].saturating_sub(at(before, 0)))
            }
            (true, _) => DeltaValue::Buckets(
                now.iter()
                    .enumerate()
                    .map(|(i, &v)| v.saturating_sub(at(before, i)))
                    .collect(),
            ),
            (false, 1) => DeltaValue::Level(now[0]),
            (false, _) => DeltaValue::Levels(now.to_vec()),
        };
        StatDelta { desc, value, moved }
    }

    /// Whether the statistic changed at all.
    pub fn moved(&self) -> bool {
        self.moved
    }

    /// The change of a cumulative counter, or the level of an instant or
    /// peak value; `None` for histograms.
    pub fn scalar(&self) -> Option<u64> {
        match self.value {
            DeltaValue::Count(v) | DeltaValue::Level(v) => Some(v),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
