//! A run a stop signal ended early: its `partial` record survives the JSON
//! round trip, is absent from complete runs, and every people's format
//! says it.

mod common;

use trapline_report::{render, Format, Partial, Report, View};

fn partial(not_run: usize) -> Partial {
    Partial {
        stopped_by: "SIGINT".into(),
        runs_done: 12,
        runs_planned: 40,
        not_run: (0..not_run).map(|i| format!("s{i}")).collect(),
    }
}

#[test]
fn the_note_names_the_signal_the_runs_and_what_did_not_run() {
    assert_eq!(
        partial(3).note(),
        "partial run: stopped by SIGINT after 12 of 40 VM runs; not run (3): s0, s1, s2"
    );
    let long = partial(10).note();
    assert!(long.ends_with("s7 and 2 more"), "{long}");
    let none = partial(0).note();
    assert!(none.contains("every scenario has a result"), "{none}");
}

#[test]
fn partial_survives_json_and_complete_runs_have_none() {
    let complete = common::sample_report();
    assert!(!complete.to_json().contains("\"partial\""));
    let mut r = complete.clone();
    r.partial = Some(partial(2));
    let back = Report::from_json(&r.to_json()).unwrap();
    assert_eq!(back.partial, Some(partial(2)));
    for format in [Format::Table, Format::Markdown, Format::Html] {
        // (HTML writes it as a sentence: "Stopped by …".)
        let text = render(&r, format, View::All).to_lowercase();
        assert!(
            text.contains("stopped by sigint after 12 of 40 vm runs"),
            "{format:?}"
        );
        assert!(
            !render(&complete, format, View::All)
                .to_lowercase()
                .contains("stopped by"),
            "{format:?}"
        );
    }
    let summary = trapline_report::summary(
        &r,
        &trapline_report::SummaryOptions {
            width: 100,
            files: Vec::new(),
        },
    );
    assert!(
        summary.contains("partial run: stopped by SIGINT"),
        "{summary}"
    );
}
