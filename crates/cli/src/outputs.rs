//! The files a command writes from a report besides standard output:
//! `--save FILE` (always the whole report as JSON, whatever the view, so
//! `--compare` and `trapline report` take it), `--html FILE` (the view's
//! HTML page) and `--export FORMAT:FILE` (the view in any format). Every
//! path is checked before anything is measured, so a typo costs a second,
//! not a run.

use std::io;
use std::path::{Path, PathBuf};

use trapline_report::{render, Format, Report, View};

/// `--format`: what goes to standard output.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatArg {
    /// Aligned columns (the one-screen summary for the default view; the
    /// full table with --verbose).
    #[value(alias = "text")]
    Table,
    /// The view as JSON (the whole report for the default view).
    Json,
    /// GitHub-flavoured markdown.
    #[value(alias = "md")]
    Markdown,
    /// RFC 4180 CSV, a unit in each number column's header.
    Csv,
    /// kvm-unit-tests' `name cycles` lines.
    Kut,
    /// One self-contained HTML page with charts.
    Html,
    /// Bencher Metric Format JSON: `latency` in ns and `cycles` per scenario.
    Bmf,
    /// TAP version 13, one test point per scenario.
    Tap,
}

impl FormatArg {
    /// The report's format.
    pub fn format(self) -> Format {
        match self {
            FormatArg::Table => Format::Table,
            FormatArg::Json => Format::Json,
            FormatArg::Markdown => Format::Markdown,
            FormatArg::Csv => Format::Csv,
            FormatArg::Kut => Format::Kut,
            FormatArg::Html => Format::Html,
            FormatArg::Bmf => Format::Bmf,
            FormatArg::Tap => Format::Tap,
        }
    }
}

/// `--export FORMAT:FILE`: the view in FORMAT, written to FILE.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Export {
    /// The format.
    pub format: Format,
    /// Where.
    pub path: PathBuf,
}

/// Parses `FORMAT:FILE` (`csv:r.csv`, `md:r.md`, `bmf:bencher.json`).
pub fn parse_export(s: &str) -> Result<Export, String> {
    let (format, path) = s
        .split_once(':')
        .filter(|(_, p)| !p.is_empty())
        .ok_or_else(|| format!("'{s}': expected FORMAT:FILE, e.g. csv:results.csv"))?;
    Ok(Export {
        format: format.parse()?,
        path: PathBuf::from(path),
    })
}

/// An output file that cannot be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {flag} {}: {reason}", path.display())]
pub struct OutputError {
    /// The flag that named it (`--save`, `--html`, `--export`).
    pub flag: &'static str,
    /// The file.
    pub path: PathBuf,
    /// Why, in words.
    pub reason: String,
}

/// Whether `path` can be written, without changing what is there: an
/// existing file is opened for appending (nothing written), a new one is
/// created and removed again.
pub fn check_writable(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a directory; name a file in it",
        ));
    }
    match std::fs::OpenOptions::new().append(true).open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|e| match e.kind() {
                    io::ErrorKind::NotFound => {
                        io::Error::new(io::ErrorKind::NotFound, "its folder does not exist")
                    }
                    _ => e,
                })?;
            std::fs::remove_file(path)
        }
        Err(e) => Err(e),
    }
}

/// The files one command writes besides standard output.
#[derive(Clone, Debug, Default)]
pub struct Outputs {
    /// `--save`: the whole report as JSON.
    pub save: Option<PathBuf>,
    /// `--html`: the view's HTML page.
    pub html: Option<PathBuf>,
    /// `--export`: the view in other formats.
    pub exports: Vec<Export>,
}

/// What one file holds.
enum Content {
    /// The whole report, as `--compare` and `trapline report` read it.
    Report,
    /// The view in a format.
    View(Format),
}

impl Outputs {
    fn files(&self) -> Vec<(&'static str, &Path, Content)> {
        let mut v = Vec::new();
        if let Some(p) = &self.save {
            v.push(("--save", p.as_path(), Content::Report));
        }
        if let Some(p) = &self.html {
            v.push(("--html", p.as_path(), Content::View(Format::Html)));
        }
        for e in &self.exports {
            v.push(("--export", e.path.as_path(), Content::View(e.format)));
        }
        v
    }

    /// Checks every path is writable (call it before measuring).
    pub fn check(&self) -> Result<(), OutputError> {
        for (flag, path, _) in self.files() {
            check_writable(path).map_err(|e| OutputError {
                flag,
                path: path.to_path_buf(),
                reason: reason(&e),
            })?;
        }
        Ok(())
    }

    /// Writes every file (`view` for all but `--save`); returns their
    /// paths, in the order given. Stops at the first that fails.
    pub fn write(&self, report: &Report, view: View) -> Result<Vec<PathBuf>, OutputError> {
        let mut written = Vec::new();
        for (flag, path, content) in self.files() {
            let text = match content {
                Content::Report => report.to_json(),
                Content::View(f) => render(report, f, view),
            };
            std::fs::write(path, text).map_err(|e| OutputError {
                flag,
                path: path.to_path_buf(),
                reason: reason(&e),
            })?;
            written.push(path.to_path_buf());
        }
        Ok(written)
    }
}

/// An I/O error in words, in lower case.
fn reason(e: &io::Error) -> String {
    trapline_stdio::words::io(e).to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "trapline-outputs-test-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn exports_parse_as_format_and_file() {
        assert_eq!(
            parse_export("md:out/r.md").unwrap(),
            Export {
                format: Format::Markdown,
                path: "out/r.md".into()
            }
        );
        assert_eq!(parse_export("bmf:b.json").unwrap().format, Format::Bmf);
        for bad in ["csv", "csv:", "xml:r.xml", ":r.csv"] {
            assert!(parse_export(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_writable_path_is_left_as_it_was() {
        let dir = scratch("writable");
        let new = dir.join("new.json");
        check_writable(&new).unwrap();
        assert!(!new.exists(), "the check leaves no file behind");
        let old = dir.join("old.json");
        std::fs::write(&old, "keep").unwrap();
        check_writable(&old).unwrap();
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "keep");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_bad_path_says_which_flag_and_why() {
        let dir = scratch("bad");
        let outputs = Outputs {
            save: Some(dir.join("ok.json")),
            html: Some(dir.join("missing").join("r.html")),
            exports: Vec::new(),
        };
        let e = outputs.check().unwrap_err().to_string();
        assert!(e.starts_with("cannot write --html "), "{e}");
        assert!(e.ends_with("its folder does not exist"), "{e}");
        let outputs = Outputs {
            exports: vec![Export {
                format: Format::Csv,
                path: dir.clone(),
            }],
            ..Outputs::default()
        };
        let e = outputs.check().unwrap_err().to_string();
        assert!(e.contains("--export") && e.contains("directory"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn save_is_the_whole_report_whatever_the_view() {
        let dir = scratch("save");
        let mut report = Report::new(Default::default(), Default::default(), Default::default());
        report.finish();
        let outputs = Outputs {
            save: Some(dir.join("s.json")),
            ..Outputs::default()
        };
        let seeds: View = "seeds".parse().unwrap();
        outputs.write(&report, seeds).unwrap();
        let back = Report::load(dir.join("s.json")).expect("--save loads as a report");
        assert_eq!(back.to_json(), report.to_json());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
