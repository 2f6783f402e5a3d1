//! `trapline bench` flag sets that contradict themselves or ask for what
//! this host cannot do (refused: a usage error, before anything runs), and
//! flags the chosen view never reads (a warning each: the run still does
//! what was asked, and a script may pass one set of flags to several
//! views).

use super::args::{BenchArgs, FormatArg, ViewArg};

/// Why `args` cannot run, as a usage error.
pub fn contradiction(args: &BenchArgs) -> Option<String> {
    if args.min_iters > args.max_iters {
        return Some(format!(
            "--min-iters {} is above --max-iters {}: the smallest timed loop cannot be longer \
             than the largest (raise --max-iters or lower --min-iters)",
            args.min_iters, args.max_iters
        ));
    }
    if args.micro_bench.is_some() && !crate::arch::ARM64 {
        return Some(format!(
            "--micro-bench is kvm-unit-tests' arm64 micro-bench: it does nothing on this {} \
             host (it runs on arm64 only)",
            std::env::consts::ARCH
        ));
    }
    None
}

/// The flags in `args` that `args.view` ignores, each with why.
pub fn ignored(args: &BenchArgs) -> Vec<String> {
    let mut out = Vec::new();
    let mut flag = |given: bool, name: &str, why: &str| {
        if given {
            out.push(format!("{name} does nothing {why}"));
        }
    };
    if let ViewArg::Report(view) = args.view {
        let table_all = args.format == FormatArg::Table && view.name() == "all";
        flag(
            args.verbose && !table_all,
            "--verbose",
            "outside the table format's default view (--view all)",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        bench: BenchArgs,
    }

    fn args(flags: &[&str]) -> BenchArgs {
        let mut all = vec!["bench"];
        all.extend(flags);
        Cli::try_parse_from(all).unwrap().bench
    }

    #[test]
    fn a_loop_bound_pair_the_wrong_way_round_is_refused() {
        let why = contradiction(&args(&["--min-iters", "100", "--max-iters", "10"])).unwrap();
        assert!(
            why.contains("--min-iters 100 is above --max-iters 10"),
            "{why}"
        );
        assert!(contradiction(&args(&["--min-iters", "10", "--max-iters", "10"])).is_none());
        assert!(contradiction(&args(&[])).is_none());
    }

    #[test]
    fn micro_bench_off_arm64_says_it_does_nothing_here() {
        let why = contradiction(&args(&["--micro-bench", "m.flat"]));
        if crate::arch::ARM64 {
            assert_eq!(why, None);
        } else {
            let why = why.unwrap();
            assert!(why.contains("does nothing on this x86_64 host"), "{why}");
        }
    }

    #[test]
    fn flags_a_view_ignores_are_named() {
        assert!(ignored(&args(&[])).is_empty());
        assert!(ignored(&args(&["--view", "vmm", "--quick"])).is_empty());
        let w = ignored(&args(&["--view", "paper", "--verbose"]));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("--verbose does nothing outside"), "{w:?}");
    }
}
