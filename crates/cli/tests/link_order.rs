//! The start-up link order (crates/cli/link/hot-symbols.txt, written by
//! scripts/hot-symbols.py, handed to the linker by build.rs): still a list
//! of the code a run executes, first things first, and small enough that
//! placing it together keeps start-up's pages few (docs/bench.md#footprint).

const LIST: &str = include_str!("../link/hot-symbols.txt");

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
