//! Subcommand arguments clap defines only when that subcommand is used.
//!
//! clap's derive builds every subcommand's arguments before it parses;
//! `bench` and `report` have many, with long help texts, and a plain
//! `trapline run` paid for building (and dropping) all of them, and for
//! the pages of their code, before its guest started
//! (docs/bench.md#footprint). [`Lazy`] hands clap a deferred definition
//! (`Command::defer`), which it expands when it builds that subcommand:
//! parsing it, its help, or `debug_assert`.

use clap::builder::{Resettable, StyledStr};
use clap::{ArgMatches, Args, Command, FromArgMatches};

/// `T`'s arguments, defined when clap builds the subcommand holding them.
#[derive(Debug)]
pub struct Lazy<T>(pub T);

impl<T: Args> Args for Lazy<T> {
    fn augment_args(cmd: Command) -> Command {
        cmd.defer(define::<T>)
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        cmd.defer(define_for_update::<T>)
    }
}

/// `T`'s arguments on `cmd`, keeping the about texts `cmd` already has.
/// Without deferral clap's derive sets the variant's doc comment (the
/// subcommand's about) after the arguments' struct, whose own doc comment
/// would otherwise win now that the struct comes last.
fn define<T: Args>(cmd: Command) -> Command {
    let abouts = Abouts::of(&cmd);
    abouts.restore(T::augment_args(cmd))
}

/// [`define`] for clap's update path.
fn define_for_update<T: Args>(cmd: Command) -> Command {
    let abouts = Abouts::of(&cmd);
    abouts.restore(T::augment_args_for_update(cmd))
}

/// A command's about and long about.
struct Abouts {
    about: Option<StyledStr>,
    long_about: Option<StyledStr>,
}

impl Abouts {
    fn of(cmd: &Command) -> Self {
        Self {
            about: cmd.get_about().cloned(),
            long_about: cmd.get_long_about().cloned(),
        }
    }

    fn restore(self, cmd: Command) -> Command {
        let cmd = match self.about {
            Some(a) => cmd.about(a),
            None => cmd.about(Resettable::Reset),
        };
        match self.long_about {
            Some(a) => cmd.long_about(a),
            None => cmd.long_about(Resettable::Reset),
        }
    }
}

impl<T: FromArgMatches> FromArgMatches for Lazy<T> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(matches).map(Lazy)
    }

    fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches_mut(matches).map(Lazy)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)
    }

    fn update_from_arg_matches_mut(&mut self, matches: &mut ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches_mut(matches)
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use crate::args::{Cli, Command};

    /// A `run` leaves `bench` and `report` undefined; asking for them
    /// defines them in full (the derive's own checks pass on the whole
    /// tree).
    #[test]
    fn bench_and_report_are_defined_only_when_used() {
        let mut cmd = Cli::command();
        for name in ["bench", "report"] {
            let sub = cmd.find_subcommand(name).unwrap();
            assert_eq!(sub.get_arguments().count(), 0, "{name} defined eagerly");
        }
        let run = cmd.find_subcommand("run").unwrap();
        assert!(run.get_arguments().any(|a| a.get_id() == "kernel"));
        cmd.build();
        for name in ["bench", "report"] {
            let sub = cmd.find_subcommand(name).unwrap();
            assert!(sub.get_arguments().count() > 3, "{name} not defined");
        }
        Cli::command().debug_assert();
    }

    /// The subcommand's about is the variant's doc comment, as it was
    /// before deferral, not the argument struct's.
    #[test]
    fn deferred_subcommands_keep_their_about() {
        let mut cmd = Cli::command();
        cmd.build();
        let about = |name: &str| {
            cmd.find_subcommand(name)
                .and_then(|c| c.get_about())
                .map(|a| a.to_string())
                .unwrap_or_default()
        };
        assert!(
            about("bench").starts_with("Measure exit costs"),
            "{}",
            about("bench")
        );
        assert!(
            about("report").starts_with("Render a saved run"),
            "{}",
            about("report")
        );
    }

    #[test]
    fn deferred_subcommands_still_parse() {
        let cli = Cli::try_parse_from(["trapline", "report", "--help"]);
        assert!(cli.is_err_and(|e| e.kind() == clap::error::ErrorKind::DisplayHelp));
        let cli = Cli::try_parse_from(["trapline", "run", "--kernel", "builtin:hello"]).unwrap();
        assert!(matches!(cli.command, Command::Run(_)));
    }
}
