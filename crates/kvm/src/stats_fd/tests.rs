//! The parser and the snapshot arithmetic on hand-built stats blocks; none
//! needs KVM (crates/kvm/tests/stats_fd.rs reads the real thing).

use std::io::Write;
use std::os::fd::FromRawFd;

use super::*;

const NAME_SIZE: usize = 48;
const HIST_LIN: u32 = KVM_STATS_TYPE_LINEAR_HIST;
const HIST_LOG: u32 = KVM_STATS_TYPE_LOG_HIST | KVM_STATS_UNIT_SECONDS;

/// One descriptor to put in a canned block.
struct D {
    flags: u32,
    exponent: i16,
    size: u16,
    offset: u32,
    bucket_size: u32,
    name: &'static str,
}

fn d(flags: u32, size: u16, offset: u32, name: &'static str) -> D {
    D {
        flags,
        exponent: 0,
        size,
        offset,
        bucket_size: 0,
        name,
    }
}

/// The descriptors of a small vCPU-like block: a counter, an instant, a
/// peak, a nanosecond counter, a linear and a log histogram.
fn canned_descs() -> Vec<D> {
    vec![
        d(KVM_STATS_TYPE_CUMULATIVE, 1, 0, "exits"),
        d(
            KVM_STATS_TYPE_INSTANT | KVM_STATS_UNIT_BOOLEAN,
            1,
            8,
            "guest_mode",
        ),
        d(KVM_STATS_TYPE_PEAK, 1, 16, "max_mmu_page_hash_collisions"),
        D {
            exponent: -9,
            ..d(
                KVM_STATS_TYPE_CUMULATIVE | KVM_STATS_UNIT_SECONDS,
                1,
                24,
                "halt_poll_success_ns",
            )
        },
        D {
            bucket_size: 10,
            ..d(HIST_LIN, 4, 32, "lin_hist")
        },
        D {
            exponent: -9,
            ..d(HIST_LOG, 3, 64, "halt_wait_hist")
        },
    ]
}

/// A block as the kernel lays it out: header, id, descriptors, data.
fn block(id: &str, descs: &[D], data: &[u64]) -> Vec<u8> {
    let desc_offset = HEADER_SIZE + NAME_SIZE;
    let data_offset = desc_offset + descs.len() * (DESC_FIXED_SIZE + NAME_SIZE);
    let mut b = Vec::new();
    for v in [
        0u32,
        NAME_SIZE as u32,
        descs.len() as u32,
        HEADER_SIZE as u32,
        desc_offset as u32,
        data_offset as u32,
    ] {
        b.extend_from_slice(&v.to_ne_bytes());
    }
    let name = |b: &mut Vec<u8>, s: &str| {
        let mut field = [0u8; NAME_SIZE];
        field[..s.len()].copy_from_slice(s.as_bytes());
        b.extend_from_slice(&field);
    };
    name(&mut b, id);
    for x in descs {
        b.extend_from_slice(&x.flags.to_ne_bytes());
        b.extend_from_slice(&x.exponent.to_ne_bytes());
        b.extend_from_slice(&x.size.to_ne_bytes());
        b.extend_from_slice(&x.offset.to_ne_bytes());
        b.extend_from_slice(&x.bucket_size.to_ne_bytes());
        name(&mut b, x.name);
    }
    assert_eq!(b.len(), data_offset);
    for v in data {
        b.extend_from_slice(&v.to_ne_bytes());
    }
    b
}

fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_ne_bytes());
}

/// A stats "fd" backed by an anonymous memory file holding `bytes`.
fn memfd(bytes: &[u8]) -> File {
    // SAFETY: a NUL-terminated name; the result is checked.
    let fd = unsafe { libc::memfd_create(c"trapline-stats-test".as_ptr(), libc::MFD_CLOEXEC) };
    assert!(fd >= 0, "memfd_create: {}", std::io::Error::last_os_error());
    // SAFETY: a fresh fd nobody else owns.
    let mut f = unsafe { File::from_raw_fd(fd) };
    f.write_all(bytes).unwrap();
    f
}

fn canned_fd(data: &[u64]) -> StatsFd {
    StatsFd::from_file(memfd(&block("kvm-1/vcpu-0", &canned_descs(), data))).unwrap()
}

#[test]
fn parses_every_type_unit_and_histogram() {
    let l = parse_descriptors(&block("kvm-1/vcpu-0", &canned_descs(), &[])).unwrap();
    assert_eq!(l.id, "kvm-1/vcpu-0");
    assert_eq!(l.descs.len(), 6);
    assert_eq!(l.data_words, 11);
    assert_eq!(l.data_offset, (HEADER_SIZE + NAME_SIZE + 6 * 64) as u64);
    let exits = &l.descs[0];
    assert_eq!(
        (
            exits.name.as_str(),
            exits.kind,
            exits.unit,
            exits.base,
            exits.size
        ),
        (
            "exits",
            StatKind::Cumulative,
            StatUnit::None,
            StatBase::Pow10,
            1
        )
    );
    assert_eq!(l.descs[1].kind, StatKind::Instant);
    assert_eq!(l.descs[1].unit, StatUnit::Boolean);
    assert_eq!(l.descs[2].kind, StatKind::Peak);
    let ns = &l.descs[3];
    assert_eq!((ns.unit, ns.exponent), (StatUnit::Seconds, -9));
    assert!((ns.scale() - 1e-9).abs() < 1e-18);
    let lin = &l.descs[4];
    assert_eq!(
        (lin.kind, lin.size, lin.bucket_size),
        (StatKind::LinearHist, 4, 10)
    );
    assert!(lin.kind.is_histogram());
    let log = l.find("halt_wait_hist").unwrap().1;
    assert_eq!((log.kind, log.size, log.offset), (StatKind::LogHist, 3, 64));
}

#[test]
fn unknown_flags_are_kept_not_refused() {
    let flags = 0x9 | 0xa0 | 0x300;
    let l = parse_descriptors(&block("x", &[d(flags, 1, 0, "future")], &[])).unwrap();
    let f = &l.descs[0];
    assert_eq!(
        (f.kind, f.unit, f.base),
        (
            StatKind::Other(9),
            StatUnit::Other(0xa0),
            StatBase::Other(0x300)
        )
    );
}

#[test]
fn every_truncation_is_an_error_not_a_panic() {
    let full = block("kvm-1/vcpu-0", &canned_descs(), &[]);
    for len in 0..full.len() {
        let e = parse_descriptors(&full[..len]).unwrap_err();
        assert!(matches!(e, StatsError::Malformed(_)), "{len}: {e}");
    }
    assert!(parse_descriptors(&full).is_ok());
}

#[test]
fn overflowing_counts_and_offsets_are_errors() {
    let good = block("id", &canned_descs(), &[]);
    // (field offset in the header, value)
    for (at, v) in [
        (8, u32::MAX),  // num_desc
        (8, 7),         // num_desc one past what is there
        (16, u32::MAX), // desc_offset
        (12, u32::MAX), // id_offset
        (4, u32::MAX),  // name_size
        (4, 0),         // name_size with no room for a NUL
    ] {
        let mut b = good.clone();
        put_u32(&mut b, at, v);
        let e = parse_descriptors(&b).unwrap_err();
        assert!(
            e.to_string().starts_with("malformed KVM stats block"),
            "{at}={v}: {e}"
        );
    }
    // Values past the data-block limit, and not u64-aligned.
    for (offset, size) in [(u32::MAX - 7, 1u16), (12, 1), (0, u16::MAX)] {
        let x = d(KVM_STATS_TYPE_CUMULATIVE, size, offset, "big");
        let r = parse_descriptors(&block("id", &[x], &[]));
        // 0 + 65535 × 8 is under the limit and fine.
        assert_eq!(r.is_ok(), offset == 0, "offset {offset} size {size}");
    }
}

#[test]
fn names_need_their_nul() {
    let mut b = block("id", &[d(0, 1, 0, "exits")], &[]);
    let name_at = HEADER_SIZE + NAME_SIZE + DESC_FIXED_SIZE;
    b[name_at..name_at + NAME_SIZE].fill(b'a');
    let e = parse_descriptors(&b).unwrap_err().to_string();
    assert!(e.contains("no NUL"), "{e}");
}

#[test]
fn scrambled_blocks_never_panic() {
    let good = block("kvm-1/vcpu-0", &canned_descs(), &[]);
    // A fixed LCG: reproducible, no dependency.
    let mut s = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..20_000 {
        let mut b = good.clone();
        for _ in 0..4 {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let at = (s >> 33) as usize % b.len();
            b[at] = (s >> 17) as u8;
        }
        let _ = parse_descriptors(&b);
        let _ = parse_descriptors(&b[..(s >> 40) as usize % b.len()]);
    }
}

#[test]
fn read_takes_every_value_and_histogram_bucket() {
    let data: Vec<u64> = (1..=11).collect();
    let fd = canned_fd(&data);
    assert_eq!(fd.id(), "kvm-1/vcpu-0");
    assert_eq!(fd.descriptors().len(), 6);
    let s = fd.read().unwrap();
    assert_eq!(s.value("exits"), Some(1));
    assert_eq!(s.value("halt_poll_success_ns"), Some(4));
    assert_eq!(s.get("lin_hist"), Some(&[5, 6, 7, 8][..]));
    assert_eq!(s.get("halt_wait_hist"), Some(&[9, 10, 11][..]));
    assert_eq!(s.get("nonesuch"), None);
    assert_eq!(s.iter().count(), 6);
}

#[test]
fn a_short_data_block_is_a_read_error() {
    let fd = canned_fd(&[1, 2, 3]);
    let e = fd.read().unwrap_err();
    match &e {
        StatsError::Read { what, source, .. } => {
            assert_eq!(*what, "data");
            assert_eq!(source.kind(), std::io::ErrorKind::UnexpectedEof);
        }
        other => panic!("{other}"),
    }
}

#[test]
fn delta_counts_changes_bucket_wise_and_keeps_levels() {
    let before_data = [10, 1, 5, 100, 0, 1, 2, 3, 7, 0, 0];
    let after_data = [15, 0, 5, 100, 1, 1, 4, 3, 9, 0, 1];
    let before = canned_fd(&before_data).read().unwrap();
    // Another fd over the same layout: matched by name.
    let after_fd = canned_fd(&after_data);
    let after = after_fd.read().unwrap();
    let delta = after.delta(&before);
    assert_eq!(delta.len(), 6);
    let by = |n: &str| delta.iter().find(|d| d.desc.name == n).unwrap();
    assert_eq!(by("exits").value, DeltaValue::Count(5));
    assert_eq!(by("exits").scalar(), Some(5));
    assert_eq!(by("guest_mode").value, DeltaValue::Level(0));
    assert!(by("guest_mode").moved());
    assert_eq!(
        by("max_mmu_page_hash_collisions").value,
        DeltaValue::Level(5)
    );
    assert!(!by("max_mmu_page_hash_collisions").moved());
    assert_eq!(by("halt_poll_success_ns").value, DeltaValue::Count(0));
    assert_eq!(by("lin_hist").value, DeltaValue::Buckets(vec![1, 0, 2, 0]));
    assert_eq!(by("lin_hist").scalar(), None);
    assert_eq!(
        by("halt_wait_hist").value,
        DeltaValue::Buckets(vec![2, 0, 1])
    );

    let moved: Vec<_> = after
        .moved_since(&before)
        .iter()
        .map(|d| d.desc.name.clone())
        .collect();
    assert_eq!(moved, ["exits", "guest_mode", "lin_hist", "halt_wait_hist"]);

    // Same fd, same layout: matched by index, same answer.
    let mut again = after_fd.read().unwrap();
    assert!(again.moved_since(&after).is_empty());
    after_fd.read_into(&mut again).unwrap();
    assert_eq!(again.delta(&after)[0].value, DeltaValue::Count(0));
}

#[test]
fn delta_against_a_stranger_counts_from_zero_and_never_wraps() {
    let fd = canned_fd(&[3; 11]);
    let now = fd.read().unwrap();
    let other = StatsFd::from_file(memfd(&block("other", &[d(0, 1, 0, "exits")], &[9]))).unwrap();
    let earlier = other.read().unwrap();
    let delta = now.delta(&earlier);
    // exits went 9 → 3: a reset or another VM, reported as 0.
    assert_eq!(delta[0].value, DeltaValue::Count(0));
    // halt_poll_success_ns is unknown to `earlier`: counted from zero.
    assert_eq!(delta[3].value, DeltaValue::Count(3));
}

#[test]
fn a_fd_without_the_ioctl_is_unsupported() {
    // /dev/null answers ENOTTY to every ioctl, as an old kernel answers
    // KVM_GET_STATS_FD on a VM fd.
    let null = File::open("/dev/null").unwrap();
    let e = StatsFd::open(&null, "VM").unwrap_err();
    assert!(e.is_unsupported(), "{e}");
    assert!(e.to_string().contains("Linux 5.14"), "{e}");
}
