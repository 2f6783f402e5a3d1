//! `trapline bench` flag sets that contradict themselves or ask for what
//! this host cannot do (refused: a usage error, before anything runs), and
//! flags the chosen view never reads (a warning each: the run still does
//! what was asked, and a script may pass one set of flags to several
//! views).

use super::args::{BenchArgs, FormatArg, ViewArg, DEFAULTS, LINUX_BOOT_ACPI, LINUX_BOOT_CPU};

/// Why `args` cannot run, as a usage error.
pub fn contradiction(args: &BenchArgs) -> Option<String> {
    if args.min_iters > args.max_iters {
        return Some(format!(
            "--min-iters {} is above --max-iters {}: the smallest timed loop cannot be longer \
             than the largest (raise --max-iters or lower --min-iters)",
            args.min_iters, args.max_iters
        ));
    }
    if args.micro_bench.is_some() && cfg!(not(target_arch = "aarch64")) {
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
    match args.view {
        ViewArg::LinuxBoot | ViewArg::Virtio => {
            let why = format!(
                "with --view {} (its own experiment, not a probe run: it prints its own table \
                 and keeps no report)",
                if args.view == ViewArg::Virtio {
                    "virtio"
                } else {
                    "linux-boot"
                }
            );
            flag(args.only.is_some(), "--only", &why);
            flag(args.goal.is_some(), "--goal", &why);
            flag(args.min_iters != DEFAULTS.min_iters, "--min-iters", &why);
            flag(args.max_iters != DEFAULTS.max_iters, "--max-iters", &why);
            flag(args.warmup != DEFAULTS.warmup, "--warmup", &why);
            flag(args.format != FormatArg::Table, "--format", &why);
            flag(args.verbose, "--verbose", &why);
            flag(args.html.is_some(), "--html", &why);
            flag(args.save.is_some(), "--save", &why);
            flag(!args.export.is_empty(), "--export", &why);
            flag(args.compare.is_some(), "--compare", &why);
            flag(args.no_stat, "--no-stat", &why);
            if args.view == ViewArg::Virtio {
                flag(
                    args.peer.is_some(),
                    "--peer",
                    "with --view virtio (it runs QEMU's Linux rows whenever QEMU and \
                     TRAPLINE_LINUX_KERNEL are there)",
                );
                linux_flags(args, &mut flag);
            } else {
                flag(args.no_seccomp, "--no-seccomp", &why);
            }
        }
        ViewArg::Report(view) => {
            linux_flags(args, &mut flag);
            let table_all = args.format == FormatArg::Table && view.name() == "all";
            flag(
                args.verbose && !table_all,
                "--verbose",
                "outside the table format's default view (--view all)",
            );
        }
    }
    out
}

/// `--linux-*` outside `--view linux-boot`.
fn linux_flags(args: &BenchArgs, flag: &mut impl FnMut(bool, &str, &str)) {
    let why = "without --view linux-boot";
    flag(args.linux_smp != DEFAULTS.linux_smp, "--linux-smp", why);
    flag(args.linux_cpu != LINUX_BOOT_CPU, "--linux-cpu", why);
    flag(args.linux_acpi != LINUX_BOOT_ACPI, "--linux-acpi", why);
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
    #[cfg(target_arch = "x86_64")]
    fn micro_bench_on_x86_says_it_does_nothing_here() {
        let why = contradiction(&args(&["--micro-bench", "m.flat"])).unwrap();
        assert!(why.contains("does nothing on this x86_64 host"), "{why}");
    }

    #[test]
    fn flags_a_view_ignores_are_named() {
        assert!(ignored(&args(&[])).is_empty());
        assert!(ignored(&args(&["--view", "vmm", "--quick"])).is_empty());
        let w = ignored(&args(&[
            "--view",
            "linux-boot",
            "--only",
            "pio-*",
            "--format",
            "json",
            "--linux-smp",
            "2",
        ]));
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].starts_with("--only does nothing with --view linux-boot"),
            "{w:?}"
        );
        assert!(w[1].starts_with("--format does nothing"), "{w:?}");
        let w = ignored(&args(&[
            "--view",
            "virtio",
            "--linux-cpu",
            "host",
            "--peer",
            "qemu",
        ]));
        assert_eq!(w.len(), 2, "{w:?}");
        let w = ignored(&args(&[
            "--view",
            "paper",
            "--verbose",
            "--linux-acpi",
            "full",
        ]));
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].starts_with("--linux-acpi does nothing without --view linux-boot"));
        assert!(w[1].starts_with("--verbose does nothing outside"), "{w:?}");
    }
}
