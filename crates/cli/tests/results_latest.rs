//! A results folder whose `latest` is not the symlink trapline keeps is
//! refused before anything is measured (it was silently left pointing at
//! an older run).

use std::process::Stdio;

mod common;
use common::*;

#[test]
fn a_latest_that_is_a_file_fails_before_measuring() {
    let parent = tmp("latest-is-a-file");
    let _ = std::fs::remove_dir_all(&parent);
    std::fs::create_dir_all(&parent).unwrap();
    let latest = parent.join("latest");
    std::fs::write(&latest, "notes\n").unwrap();
    // No KVM needed: the check comes before /dev/kvm is opened.
    let o = trapline()
        .env("TRAPLINE_KVM", "/nonexistent/kvm")
        .args(["bench", "--no-progress", "--only", "cpuid", "--results-dir"])
        .arg(&parent)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(stdout(&o).is_empty(), "nothing measured: {}", stdout(&o));
    assert!(
        err.contains(&latest.display().to_string())
            && err.contains("not a symlink")
            && err.contains("--results-dir"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // The file is untouched and nothing was added beside it.
    assert_eq!(std::fs::read_to_string(&latest).unwrap(), "notes\n");
    assert_eq!(std::fs::read_dir(&parent).unwrap().count(), 1);
    let _ = std::fs::remove_dir_all(&parent);
}
