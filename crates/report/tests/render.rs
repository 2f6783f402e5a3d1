mod common;

use trapline_report::{render, Format, Report, View, HTML_DATA_ID};

/// Minimal RFC 4180 parser: quoted fields, doubled quotes, CRLF records.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                c => field.push(c),
            }
        } else {
            match c {
                '"' => quoted = true,
                ',' => row.push(std::mem::take(&mut field)),
                '\r' => {}
                '\n' => {
                    row.push(std::mem::take(&mut field));
                    rows.push(std::mem::take(&mut row));
                }
                c => field.push(c),
            }
        }
    }
    assert!(!quoted, "unterminated quote");
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows
}

fn kut_line_ok(line: &str) -> bool {
    let Some((name, value)) = line.split_once(' ') else {
        return false;
    };
    let name_ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == ':');
    let value_ok =
        value == "(skipped)" || (!value.is_empty() && value.chars().all(|c| c.is_ascii_digit()));
    name_ok && value_ok
}

#[test]
fn table_shows_rows_reasons_and_footer() {
    let r = common::sample_report();
    let t = render(&r, Format::Table, View::All);
    assert!(t.contains("scenario"));
    let line = t.lines().find(|l| l.starts_with("pio-user-out ")).unwrap();
    for want in ["ok", "9,000", "8,900", "3,000", "pio-write=1.00"] {
        assert!(line.contains(want), "{want} missing in {line:?}");
    }
    let un = t
        .lines()
        .find(|l| l.starts_with("mmio-kernel-datamatch"))
        .unwrap();
    assert!(
        un.contains("unsupported") && un.contains("KVM_CAP_IOEVENTFD missing"),
        "{un}"
    );
    let failed = t.lines().find(|l| l.starts_with("coalesced-mmio")).unwrap();
    assert!(failed.contains("failed") && failed.contains("guest reported 3 != 4"));
    let premium = t
        .lines()
        .find(|l| l.starts_with("user-exit-premium "))
        .unwrap();
    assert!(
        premium.contains("6,000 cyc") && premium.contains("5,880..6,120 cyc"),
        "{premium}"
    );
    assert!(t.contains("host: Intel(R) Xeon(R) Test CPU"));
    assert!(t.contains("caveat: nested"));
    // Columns line up: every ok row has its median ending at the same column.
    let header = t.lines().find(|l| l.starts_with("scenario")).unwrap();
    let end = header.find("median cyc").unwrap() + "median cyc".len();
    let noop = t.lines().find(|l| l.starts_with("noop ")).unwrap();
    assert_eq!(&noop[end - 5..end], "  100");
}

#[test]
fn json_is_the_report() {
    let r = common::sample_report();
    let j = render(&r, Format::Json, View::All);
    assert_eq!(Report::from_json(&j).unwrap(), r);
    assert!(j.contains("\n  \"schema\""), "pretty printed");
}

#[test]
fn markdown_has_header_and_derived() {
    let r = common::sample_report();
    let m = render(&r, Format::Markdown, View::All);
    assert!(m.contains(
        "| scenario | status | median cyc | net cyc | ±MAD | min | max | ns | own cyc/exit | KVM exits/iter | exits/iter | noise |"
    ));
    assert!(m.contains("| --- | --- | ---: |"));
    assert!(m.contains("### Derived values"));
    assert!(m.contains("| user-exit-premium | 6,000 cyc | 5,880..6,120 cyc |"));
    assert!(m.contains("| mmio-kernel-datamatch | unsupported | KVM_CAP_IOEVENTFD missing"));
    // Within each table (the scenarios, trapline beside qemu), every row
    // has the same number of unescaped pipes.
    let mut tables: Vec<Vec<usize>> = vec![Vec::new()];
    for l in m.lines() {
        if l.starts_with('|') {
            tables
                .last_mut()
                .unwrap()
                .push(l.replace("\\|", "").matches('|').count());
        } else if !tables.last().unwrap().is_empty() {
            tables.push(Vec::new());
        }
    }
    assert!(tables.iter().filter(|t| !t.is_empty()).count() >= 2, "{m}");
    for counts in &tables {
        assert!(counts.windows(2).all(|w| w[0] == w[1]), "{counts:?}");
    }
}

/// A scenario's noise flags reach CSV too: one `noise` column, kinds
/// joined by `;`, empty for a clean scenario.
#[test]
fn csv_carries_the_noise_flags() {
    let mut r = common::full_report();
    let pio = r
        .scenarios
        .iter_mut()
        .find(|s| s.vmm == "trapline" && s.name == "pio-user-out")
        .unwrap();
    // One repeat 80 times the others: an outlier.
    pio.samples[4].cycles = pio.samples[4].iterations * 720_000;
    r.finish();
    let rows = parse_csv(&render(&r, Format::Csv, View::All));
    let col = rows[0]
        .iter()
        .position(|h| h == "noise")
        .expect("a noise column");
    let noise_of = |name: &str| {
        rows.iter()
            .find(|row| row[0] == name)
            .map(|row| row[col].clone())
            .unwrap()
    };
    assert_eq!(noise_of("pio-user-out"), "outliers");
    assert_eq!(noise_of("noop"), "");
}

#[test]
fn csv_parses_back() {
    let r = common::sample_report();
    let c = render(&r, Format::Csv, View::All);
    let rows = parse_csv(&c);
    assert_eq!(rows.len(), r.scenarios.len() + 1);
    let width = rows[0].len();
    assert_eq!(width, 22);
    let col = |h: &str| rows[0].iter().position(|x| x == h).unwrap();
    let pio = rows.iter().find(|row| row[0] == "pio-user-out").unwrap();
    assert_eq!(pio[col("handling_median_cycles")], "450");
    // Every number column names its unit.
    for h in [
        "median_cycles",
        "net_median_cycles",
        "mad_cycles",
        "ns_per_iter",
    ] {
        col(h);
    }
    assert_eq!(pio[col("kvm_exits_per_iter")], "exits=1;io_exits=1");
    assert!(rows.iter().all(|row| row.len() == width));
    assert_eq!(rows[0][0], "scenario");
    let reason_col = rows[0].iter().position(|h| h == "reason").unwrap();
    let un = rows
        .iter()
        .find(|row| row[0] == "mmio-kernel-datamatch")
        .unwrap();
    assert_eq!(un[reason_col], r.scenarios[8].reason.clone().unwrap());
    let q = rows
        .iter()
        .find(|row| row[0] == "qemu:pio-user-out")
        .unwrap();
    assert_eq!(q[6], "15000");
}

#[test]
fn kut_lines_match() {
    let r = common::sample_report();
    let k = render(&r, Format::Kut, View::All);
    let lines: Vec<&str> = k.lines().collect();
    assert_eq!(lines.len(), r.scenarios.len());
    for l in &lines {
        assert!(kut_line_ok(l), "bad kut line {l:?}");
    }
    assert!(lines.contains(&"pio-user-out 9000"));
    assert!(lines.contains(&"mmio-kernel-datamatch (skipped)"));
    assert!(lines.contains(&"coalesced-mmio (skipped)"));
    assert!(lines.contains(&"qemu:noop 120"));
}

fn embedded_json(html: &str) -> &str {
    let open = format!("<script type=\"application/json\" id=\"{HTML_DATA_ID}\">");
    let start = html.find(&open).unwrap() + open.len();
    let len = html[start..].find("</script>").unwrap();
    &html[start..start + len]
}

#[test]
fn html_is_self_contained() {
    let r = common::sample_report();
    let h = render(&r, Format::Html, View::All);
    assert!(h.starts_with("<!DOCTYPE html>"));
    assert!(h.matches("<svg").count() >= 3, "three charts");
    assert!(
        !h.contains("http://") && !h.contains("https://"),
        "no network references"
    );
    assert!(!h.contains("<link") && !h.contains("<script src") && !h.contains("@import"));
    // The embedded JSON parses back to the report, though a reason holds `</script>`.
    assert_eq!(h.matches("</script>").count(), 1);
    let back = Report::from_json(embedded_json(&h)).unwrap();
    assert_eq!(back, r);
    // Text is escaped.
    assert!(h.contains("&lt;needs&gt;"));
    assert!(!h.contains("<needs>"));
    assert!(
        h.contains("&lt;L0&gt; &quot;KVM&quot;"),
        "nested note escaped"
    );
    // The caveat is said once, as one sentence: the note itself.
    assert_eq!(h.matches("Nested virtualization").count(), 1);
    assert!(
        h.contains("<strong>Nested virtualization.</strong> Hypervisor bit set; running under &lt;L0&gt; &quot;KVM&quot;.</p>"),
        "caveat paragraph"
    );
    assert!(h.contains("Method"));
    assert!(h.contains("RDTSC"));
    // Chart labels are in the SVG.
    assert!(h.contains(">\npio-kernel-wildcard\n<") || h.contains("pio-kernel-wildcard\n</text>"));
    assert!(h.contains("user-exit-premium"));
}

#[test]
fn every_format_renders_every_view() {
    let r = common::sample_report();
    for f in Format::ALL {
        for v in View::all() {
            let out = render(&r, f, v);
            assert!(!out.is_empty(), "{f} {v}");
        }
    }
    // An empty report renders too.
    let empty = Report::new(Default::default(), Default::default(), Default::default());
    for f in Format::ALL {
        for v in View::all() {
            let _ = render(&empty, f, v);
        }
    }
    let h = render(&empty, Format::Html, View::All);
    assert!(h.contains("No chart"));
}

#[test]
fn format_and_view_parse() {
    assert_eq!("md".parse::<Format>().unwrap(), Format::Markdown);
    assert_eq!("HTML".parse::<Format>().unwrap(), Format::Html);
    assert_eq!("Text".parse::<Format>().unwrap(), Format::Table);
    assert_eq!(
        "PDF".parse::<Format>().unwrap_err(),
        "unknown format \"pdf\" (expected one of: table, json, markdown, csv, kut, html, bmf, tap)"
    );
    assert_eq!("paper".parse::<View>().unwrap(), common::view("paper"));
    assert_eq!("seeds".parse::<View>().unwrap(), View::Seeds);
    assert!("nope".parse::<View>().is_err());
}

#[test]
fn the_peer_cpu_model_is_named_and_a_fallback_explained() {
    let mut r = common::sample_report();
    let table = render(&r, Format::Table, View::All);
    assert!(table.contains("peer: qemu, -cpu host\n"), "{table}");
    r.config.peer_cpu = Some("default".into());
    r.config.peer_cpu_note = Some(
        "QEMU ran with its default CPU model because it could not start a guest with -cpu host (QEMU exited with signal: 6)".into(),
    );
    for format in [Format::Table, Format::Markdown, Format::Html] {
        let out = render(&r, format, View::All);
        // (HTML escapes the apostrophe.)
        assert!(out.contains("s default CPU model"), "{format:?}: {out}");
        assert!(
            out.contains("could not start a guest with -cpu host"),
            "{format:?}"
        );
    }
    // The JSON keeps both fields; a report without a peer has neither.
    let json = r.to_json();
    assert!(json.contains("\"peer_cpu\": \"default\""), "{json}");
    r.config.peer = None;
    r.config.peer_cpu = None;
    r.config.peer_cpu_note = None;
    let table = render(&r, Format::Table, View::All);
    assert!(!table.contains("peer:"));
    assert!(!r.to_json().contains("peer_cpu"));
}

/// With a peer in the run, the default view sets its rows beside
/// trapline's with the ratio; without one there is no such table.
#[test]
fn peer_rows_sit_beside_traplines_with_a_ratio() {
    let r = common::full_report();
    for format in [Format::Table, Format::Markdown, Format::Html] {
        let out = render(&r, format, View::All);
        assert!(out.contains("trapline beside qemu"), "{format}");
    }
    let t = render(&r, Format::Table, View::All);
    let line = t
        .lines()
        .skip_while(|l| !l.starts_with("trapline beside qemu"))
        .find(|l| l.starts_with("pio-user-out "))
        .unwrap();
    // 9000 − 100 on trapline, 15000 − 120 on QEMU.
    assert!(line.contains("8,900") && line.contains("14,880"), "{line}");
    assert!(line.contains("1.67x") && line.ends_with("net"), "{line}");
    let noop = t
        .lines()
        .skip_while(|l| !l.starts_with("trapline beside qemu"))
        .find(|l| l.starts_with("noop "))
        .unwrap();
    assert!(noop.contains("1.20x") && noop.ends_with("gross"), "{noop}");
    // As the lab names it: the VMM, then its version.
    let mut versioned = r.clone();
    versioned.config.peer = Some("qemu (QEMU emulator version 7.2.22)".into());
    assert!(render(&versioned, Format::Table, View::All).contains("trapline beside qemu"));
    let mut alone = r.clone();
    alone.config.peer = None;
    assert!(!render(&alone, Format::Table, View::All).contains("trapline beside"));
}
