//! The start-up link order (crates/cli/link/hot-symbols.txt, written by
//! scripts/hot-symbols.py, handed to the linker by build.rs): still a list
//! of the code a run executes, first things first, and small enough that
//! placing it together keeps start-up's pages few (docs/bench.md#footprint),
//! and not stale: the names it lists still name this build's functions.

use std::collections::HashSet;
use std::process::Command;

const LIST: &str = include_str!("../link/hot-symbols.txt");

/// The one command that rewrites the list from a fresh traced run.
const REGENERATE: &str = "scripts/hot-symbols.py --write";

/// Most listed names a build may lack before the list counts as stale: a
/// debug build keeps a few closures' drop glue a release build names
/// differently (1 of ~240 on the day this was written).
const MAX_MISSING_SHARE: f64 = 0.02;

#[test]
fn the_hot_list_starts_at_the_entry_and_holds_the_run_path() {
    let names: Vec<&str> = LIST.lines().collect();
    assert_eq!(names.first(), Some(&"_start"), "the entry point leads");
    for part in ["trapline4main", "VcpuFd3run", "trapline_seccomp6filter"] {
        assert!(
            names.iter().any(|n| n.contains(part)),
            "no {part} in the list: regenerate it (scripts/hot-symbols.py)"
        );
    }
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "a name listed twice");
}

/// The list orders what a plain run uses, not the lab: a list that grew to
/// most of the binary would order nothing.
#[test]
fn the_hot_list_stays_a_small_part_of_the_binary() {
    let distinct = LIST
        .lines()
        // A renamed copy `name.N` is listed with its neighbours: count
        // the other names.
        .filter(|n| {
            n.rsplit_once('.')
                .is_none_or(|(_, k)| k.parse::<u32>().is_err())
        })
        .count();
    assert!(
        (300..3000).contains(&distinct),
        "{distinct} names besides renamed copies (a run uses about 950)"
    );
}

/// A name without LTO's copy number and Rust's hash: `_ZN…17h<16 hex>E.N`
/// becomes `_ZN…`, so a debug build (whose hashes differ from the release
/// build's the list was traced from, and which makes no `.N` copies) still
/// shows whether the function exists under that path.
fn without_hash(name: &str) -> &str {
    let name = match name.rsplit_once('.') {
        Some((base, n)) if n.parse::<u32>().is_ok() => base,
        _ => name,
    };
    match name.strip_suffix('E').and_then(|n| n.rsplit_once("17h")) {
        Some((path, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            &name[..path.len()]
        }
        _ => name,
    }
}

#[test]
fn a_hash_is_stripped_only_where_rust_put_one() {
    assert_eq!(
        without_hash("_ZN8trapline4main17h0123456789abcdefE"),
        "_ZN8trapline4main"
    );
    assert_eq!(
        without_hash("_ZN4core3fmt5write17h0123456789abcdefE.42"),
        "_ZN4core3fmt5write"
    );
    assert_eq!(without_hash("_start"), "_start");
    assert_eq!(without_hash("memcpy.2"), "memcpy");
    assert_eq!(without_hash("_ZN3foo17hnothexE"), "_ZN3foo17hnothexE");
}

/// The list goes stale when the functions it names are renamed or moved
/// (a crate renamed, a module split): the linker then skips those names
/// silently and start-up's code spreads out again. This fails when more
/// than [`MAX_MISSING_SHARE`] of the listed names are not symbols of the
/// `trapline` this test built, compared without Rust's hashes and LTO's
/// copy numbers so any profile's build will do. A new function on
/// the start path is not caught here (nothing lists it yet): the lab's
/// `vmm-rss-beyond-guest` is.
#[test]
fn the_hot_list_still_names_this_builds_functions() {
    let exe = env!("CARGO_BIN_EXE_trapline");
    let nm = match Command::new("nm").args(["--defined-only", exe]).output() {
        Ok(o) if o.status.success() => o,
        _ => {
            eprintln!(
                "SKIPPED the_hot_list_still_names_this_builds_functions: nm (binutils) cannot \
                 read {exe} — the link order's staleness was NOT checked"
            );
            return;
        }
    };
    let symbols: HashSet<&str> = std::str::from_utf8(&nm.stdout)
        .expect("nm prints text")
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .map(without_hash)
        .collect();
    let listed: HashSet<&str> = LIST.lines().map(without_hash).collect();
    let mut missing: Vec<&str> = listed
        .iter()
        .copied()
        .filter(|n| !symbols.contains(n))
        .collect();
    missing.sort_unstable();
    let share = missing.len() as f64 / listed.len() as f64;
    assert!(
        share <= MAX_MISSING_SHARE,
        "crates/cli/link/hot-symbols.txt is stale: {} of its {} names are no function or \
         object of this build (at most {:.0} % may be). Regenerate it with `{REGENERATE}` \
         (a release build traced under Valgrind, a few minutes) and commit it. Missing, \
         first 20:\n{}",
        missing.len(),
        listed.len(),
        MAX_MISSING_SHARE * 100.0,
        missing
            .iter()
            .take(20)
            .copied()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
