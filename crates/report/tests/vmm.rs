//! The `vmm` view, and in-guest-timed scenarios having no net cost.

mod common;

use serde_json::Value;
use trapline_report::{render, Derived, Format, Report, ScenarioResult, View, HTML_DATA_ID};

fn ok(name: &str, group: &str, per_iter: f64) -> ScenarioResult {
    ScenarioResult::new(name, group, format!("{name} path"))
        .with_samples(common::samples(per_iter, &[]))
}

fn footprint(name: &str, value: f64, unit: &str) -> Derived {
    Derived {
        name: name.into(),
        value,
        unit: unit.into(),
        formula: format!("median over 5 `trapline run` processes: {name}"),
        note: None,
        range: None,
        goal: None,
    }
}

/// The shared sample report plus a raw-kvm peer and both footprint values
/// (CPU within the goal, memory over it but within Firecracker's promise).
fn vmm_report() -> Report {
    let mut r = common::sample_report();
    r.push(ok("noop", "baseline", 90.0).with_vmm("raw-kvm"));
    r.push(ok("pio-user-out", "floor", 5000.0).with_vmm("raw-kvm"));
    r.push(ok("pio-kernel-wildcard", "floor", 3000.0).with_vmm("raw-kvm"));
    r.finish();
    r.derived
        .push(footprint("vmm-cpu-to-first-kvm-run", 0.75, "ms"));
    r.derived
        .push(footprint("vmm-rss-beyond-guest", 4.5, "MiB"));
    r
}

fn json(r: &Report) -> Value {
    serde_json::from_str(&render(r, Format::Json, View::Vmm)).expect("vmm JSON parses")
}

fn line<'a>(table: &'a str, first: &str) -> &'a str {
    table
        .lines()
        .find(|l| l.starts_with(first))
        .unwrap_or_else(|| panic!("no line starting {first:?} in\n{table}"))
}

fn no_nan(out: &str, what: &str) {
    for token in out.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.')) {
        assert!(
            !matches!(token.trim_matches('.'), "NaN" | "nan" | "inf" | "Infinity"),
            "{token} in {what}:\n{out}"
        );
    }
}

#[test]
fn view_name_parses() {
    assert_eq!("vmm".parse::<View>().unwrap(), View::Vmm);
    assert_eq!(View::Vmm.name(), "vmm");
    assert!(View::all().any(|v| v == View::Vmm));
}

#[test]
fn footprint_against_goals_and_firecracker() {
    let r = vmm_report();
    let j = json(&r);
    assert_eq!(j["view"], "vmm");
    let fp = j["footprint"].as_array().unwrap();
    assert_eq!(fp.len(), 2);
    assert_eq!(fp[0]["name"], "vmm-cpu-to-first-kvm-run");
    assert_eq!(fp[0]["this_host"], 0.75);
    assert_eq!(fp[0]["goal"], 1.0);
    assert_eq!(fp[0]["firecracker"], 8.0);
    assert_eq!(fp[0]["passes_goal"], true);
    assert_eq!(fp[1]["name"], "vmm-rss-beyond-guest");
    assert_eq!(fp[1]["goal"], 2.0);
    assert_eq!(fp[1]["firecracker"], 5.0);
    assert_eq!(fp[1]["passes_goal"], false);
    // The summary's verdict words, in the view's JSON too.
    assert_eq!(fp[0]["verdict"], "met");
    assert_eq!(fp[1]["verdict"], "missed");
    assert_eq!(fp[1]["within_firecracker"], true);

    let t = render(&r, Format::Table, View::Vmm);
    let cpu = line(&t, "CPU time from exec to the first KVM_RUN");
    for want in ["0.75 CPU-ms", "≤ 1 CPU-ms", "≤ 8 CPU-ms", "met"] {
        assert!(cpu.contains(want), "{want} missing in {cpu:?}");
    }
    let rss = line(&t, "resident memory beyond guest RAM");
    for want in ["4.50 MiB", "≤ 2 MiB", "≤ 5 MiB", "missed"] {
        assert!(rss.contains(want), "{want} missing in {rss:?}");
    }
    assert!(t.contains("Firecracker"));
    assert!(t.contains("SPECIFICATION.md"));
}

#[test]
fn cost_per_exit_table() {
    let r = vmm_report();
    let j = json(&r);
    let rows = j["cost_per_exit"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "pio-user-out",
            "vmm-floor-pio",
            "raw-kvm:pio-user-out",
            "raw-kvm:pio-kernel-wildcard",
            "user-exit-premium",
            "dispatch-overhead",
            "premium-ratio-vs-raw-kvm",
            "handling-per-user-exit",
            "stat-overhead",
            "stat-overhead-share-of-premium",
        ]
    );
    let row = |n: &str| rows.iter().find(|r| r["name"] == n).unwrap();
    assert_eq!(row("pio-user-out")["value"], 9000.0);
    assert_eq!(row("pio-user-out")["net"], 8900.0);
    assert_eq!(row("pio-user-out")["ns"], 3000.0);
    assert_eq!(row("raw-kvm:pio-user-out")["net"], 4910.0);
    assert_eq!(row("user-exit-premium")["value"], 6000.0);
    assert_eq!(row("user-exit-premium")["ns"], 2000.0);
    assert_eq!(row("dispatch-overhead")["value"], 2000.0);
    assert_eq!(row("premium-ratio-vs-raw-kvm")["value"], 3.0);
    assert_eq!(row("premium-ratio-vs-raw-kvm")["unit"], "x");
    assert!(row("premium-ratio-vs-raw-kvm")["ns"].is_null());

    let t = render(&r, Format::Table, View::Vmm);
    assert!(t.contains("Cost per exit:"));
    let l = line(&t, "pio-user-out ");
    assert!(
        l.contains("9,000 cyc") && l.contains("8,900") && l.contains("3,000"),
        "{l}"
    );
    let l = line(&t, "premium-ratio-vs-raw-kvm");
    assert!(l.contains("3.00x"), "{l}");

    let k = render(&r, Format::Kut, View::Vmm);
    assert!(k.contains("pio-user-out 9000\n"));
    assert!(k.contains("raw-kvm:pio-kernel-wildcard 3000\n"));
    assert!(k.contains("dispatch-overhead 2000\n"));
    assert!(!k.contains("premium-ratio"), "ratios are not cycles");
    assert!(!k.contains("stat-overhead-share"), "ratios are not cycles");
    assert!(!k.contains("vmm-rss"), "the footprint is not cycles");
}

#[test]
fn markdown_csv_and_html() {
    let r = vmm_report();
    let m = render(&r, Format::Markdown, View::Vmm);
    assert!(m.contains("| measure | trapline | goal | Firecracker | verdict |"));
    assert!(m.contains("### Cost per exit"));
    assert!(m.contains("| cost | value | net cyc | ns | status | what |"));

    let c = render(&r, Format::Csv, View::Vmm);
    let lines: Vec<&str> = c.split("\r\n").filter(|l| !l.is_empty()).collect();
    assert_eq!(
        lines[0],
        "table,name,kind,value,unit,net_cycles,ns,goal,firecracker,result,what"
    );
    assert_eq!(lines.len(), 1 + 2 + 10);
    assert!(lines[1].starts_with("footprint,vmm-cpu-to-first-kvm-run,derived,0.75,ms,,,1,8,met,"));
    assert!(lines[2].starts_with("footprint,vmm-rss-beyond-guest,derived,4.5,MiB,,,2,5,missed,"));
    assert!(lines
        .iter()
        .any(|l| l.starts_with("cost-per-exit,pio-user-out,scenario,9000,cycles,8900,3000,,,ok,")));

    let h = render(&r, Format::Html, View::Vmm);
    assert!(h.contains("<h3>Cost per exit</h3>"));
    assert_eq!(h.matches("<svg").count(), 2, "footprint and cycles charts");
    assert!(h.contains("Footprint against goal and Firecracker"));
    let open = format!("<script type=\"application/json\" id=\"{HTML_DATA_ID}\">");
    let start = h.find(&open).unwrap() + open.len();
    let end = start + h[start..].find("</script>").unwrap();
    assert_eq!(Report::from_json(&h[start..end]).unwrap(), r);
}

#[test]
fn missing_values_are_dashes_never_nan() {
    // No footprint, no raw-kvm peer, no floor: most cells are missing.
    let mut r = common::sample_report();
    r.scenarios.retain(|s| s.name != "vmm-floor-pio");
    r.finish();
    // A footprint value with the wrong unit and one that is NaN.
    r.derived
        .push(footprint("vmm-cpu-to-first-kvm-run", 2.0, "s"));
    r.derived
        .push(footprint("vmm-rss-beyond-guest", f64::NAN, "MiB"));
    for f in Format::ALL {
        let out = render(&r, f, View::Vmm);
        no_nan(&out, f.name());
    }
    let j = json(&r);
    assert!(j["footprint"][0]["this_host"].is_null());
    assert!(j["footprint"][0]["status"]
        .as_str()
        .unwrap()
        .contains("unit"));
    assert!(j["footprint"][1]["this_host"].is_null());
    assert!(j["footprint"][1]["passes_goal"].is_null());
    let t = render(&r, Format::Table, View::Vmm);
    let cpu = line(&t, "CPU time from exec");
    assert!(cpu.contains(" – ") && cpu.contains("unusable"), "{cpu}");
    let floor = line(&t, "vmm-floor-pio");
    assert!(
        floor.contains("–") && floor.contains("not measured"),
        "{floor}"
    );
    let raw = line(&t, "raw-kvm:pio-user-out");
    assert!(raw.contains("not measured"), "{raw}");
    let d = line(&t, "dispatch-overhead");
    assert!(d.contains("not measured"), "{d}");
    assert!(line(&t, "user-exit-premium").contains("6,000 cyc"));
    let k = render(&r, Format::Kut, View::Vmm);
    assert!(k.contains("vmm-floor-pio (skipped)"));

    // An empty report: every row present, nothing measured, no chart.
    let empty = Report::new(Default::default(), Default::default(), Default::default());
    let j = json(&empty);
    assert_eq!(j["footprint"].as_array().unwrap().len(), 2);
    assert_eq!(j["cost_per_exit"].as_array().unwrap().len(), 10);
    let t = render(&empty, Format::Table, View::Vmm);
    assert!(t.contains("footprint was not measured"));
    let h = render(&empty, Format::Html, View::Vmm);
    assert!(h.contains("No chart: trapline&#39;s footprint was not measured"));
    for f in Format::ALL {
        no_nan(&render(&empty, f, View::Vmm), f.name());
    }
}

#[test]
fn finish_keeps_the_footprint() {
    let mut r = vmm_report();
    let before = r.derived.len();
    r.finish();
    assert_eq!(r.derived.len(), before);
    assert_eq!(r.derived("vmm-rss-beyond-guest").unwrap().value, 4.5);
}

#[test]
fn self_timed_scenarios_have_no_net() {
    let mut r = common::sample_report();
    r.push(ok("eoi", "irq", 700.0));
    r.push(ok("eoi-x2apic", "irq", 300.0));
    r.push(ok("irqfd", "irq", 9000.0));
    r.push(ok("ipi", "irq", 14000.0));
    r.push(ok("eoi", "irq", 800.0).with_vmm("qemu"));
    r.finish();
    for (vmm, name) in [
        ("trapline", "eoi"),
        ("trapline", "eoi-x2apic"),
        ("trapline", "irqfd"),
        ("qemu", "eoi"),
    ] {
        let s = r.scenario(vmm, name).unwrap();
        assert!(s.is_self_timed());
        assert!(s.stats.is_some(), "{vmm}:{name} keeps its stats");
        assert!(s.net.is_none(), "{vmm}:{name} has no net");
    }
    assert_eq!(
        r.scenario("trapline", "ipi")
            .unwrap()
            .net
            .as_ref()
            .unwrap()
            .median,
        13900.0
    );
    // The All view shows a dash for their net, the median as usual.
    let t = render(&r, Format::Table, View::All);
    let header = t.lines().find(|l| l.starts_with("scenario")).unwrap();
    let net_end = header.find("net cyc").unwrap() + "net cyc".len();
    for name in ["eoi ", "eoi-x2apic ", "irqfd ", "qemu:eoi "] {
        let l = line(&t, name);
        // Cells are padded in characters; the header is ASCII.
        let prefix: String = l.chars().take(net_end).collect();
        let cell = prefix.rsplit(' ').next().unwrap();
        assert_eq!(cell, "–", "net of {name}in {l:?}");
    }
    assert!(line(&t, "eoi ").contains("700"));
    assert!(line(&t, "ipi ").contains("13,900"));
    // CSV: net_median empty; the net chart has no bar for them.
    let c = render(&r, Format::Csv, View::All);
    let eoi = c.lines().find(|l| l.starts_with("eoi,")).unwrap();
    assert_eq!(eoi.split(',').nth(7), Some(""), "{eoi}");
}

/// With rungs of the floor ladder in the report, the view adds a table of
/// what each piece costs per in-kernel path, the gap and trapline against
/// `trapline-pc`; its JSON and CSV carry the same numbers.
#[test]
fn the_ladder_table_shows_each_piece_with_its_spread() {
    let mut r = vmm_report();
    r.push(ok("ram-read", "memslot", 1200.0));
    for (vmm, wildcard, ram) in [
        ("raw-kvm", 3000.0, 1000.0),
        ("raw-kvm+idmap", 3000.0, 1000.0),
        ("raw-kvm+cpuid", 3000.0, 1000.0),
        ("raw-kvm+irqchip", 3400.0, 1000.0),
        ("trapline-pc", 3500.0, 1100.0),
    ] {
        if vmm != "raw-kvm" {
            r.push(ok("noop", "baseline", 90.0).with_vmm(vmm));
            r.push(ok("pio-kernel-wildcard", "floor", wildcard).with_vmm(vmm));
        }
        r.push(ok("ram-read", "floor", ram).with_vmm(vmm));
    }
    r.finish();
    let irq = r.derived("piece:irqchip:pio-kernel-wildcard").unwrap();
    assert_eq!(irq.value, 400.0);
    let v = json(&r);
    let ladder = v["ladder"].as_array().expect("ladder rows");
    let row = ladder
        .iter()
        .find(|x| x["name"] == "piece:irqchip")
        .unwrap();
    assert_eq!(row["values"][0]["cycles"], 400.0);
    assert!(row["values"][1].is_null(), "mmio not measured: {row}");
    let t = render(&r, Format::Table, View::Vmm);
    assert!(t.contains("The floor ladder"), "{t}");
    assert!(line(&t, "piece:irqchip").contains("400"), "{t}");
    no_nan(&t, "table");
    let c = render(&r, Format::Csv, View::Vmm);
    assert!(
        c.contains("ladder,piece:irqchip:pio-kernel-wildcard,derived,400,cycles"),
        "{c}"
    );
    // trapline-pc has no memslots rung below it here: no irqfd piece.
    assert!(r.derived("piece:irqfd:pio-kernel-wildcard").is_none());
}

/// A phase's two derived values as the lab writes them.
fn phase(slug: &str, cpu_us: f64, faults: f64) -> [Derived; 2] {
    let d = |name: String, value, unit: &str| Derived {
        name,
        value,
        unit: unit.into(),
        formula: format!("median over 5 `trapline run` processes: {slug}"),
        note: None,
        range: None,
        goal: None,
    };
    [
        d(format!("vmm-startup:{slug}"), cpu_us, "us"),
        d(format!("vmm-startup-faults:{slug}"), faults, "count"),
    ]
}

#[test]
fn startup_phases_split_the_cpu_figure_by_group() {
    let mut r = vmm_report();
    // Out of order, with a mark the table does not know.
    for (slug, cpu, faults) in [
        ("vm", 420.0, 1.0),
        ("exec-to-main", 450.0, 37.0),
        ("arguments", 160.0, 27.0),
        ("new-mark", 5.0, 0.0),
        ("vcpus", 150.0, 0.0),
    ] {
        r.derived.extend(phase(slug, cpu, faults));
    }
    // Measured outside the scenarios: `finish` keeps them.
    r.finish();
    let j = json(&r);
    let phases = j["startup"].as_array().unwrap();
    let names: Vec<&str> = phases
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["exec-to-main", "arguments", "vm", "vcpus", "new-mark"]
    );
    assert_eq!(phases[0]["group"], "exec-to-main");
    assert_eq!(phases[0]["cpu_us"], 450.0);
    assert_eq!(phases[0]["faults"], 37.0);
    assert_eq!(phases[2]["group"], "kvm-creation");
    assert_eq!(phases[4]["group"], "trapline");
    let groups = j["startup_groups"].as_array().unwrap();
    let sums: Vec<(&str, f64)> = groups
        .iter()
        .map(|g| (g["group"].as_str().unwrap(), g["cpu_us"].as_f64().unwrap()))
        .collect();
    assert_eq!(
        sums,
        [
            ("exec-to-main", 450.0),
            ("kvm-creation", 570.0),
            ("trapline", 165.0)
        ]
    );

    let t = render(&r, Format::Table, View::Vmm);
    assert!(t.contains("Start-up, phase by phase"), "{t}");
    let row = |first: &str, group: &str| {
        t.lines()
            .find(|l| l.split_whitespace().take(2).eq([first, group]))
            .unwrap_or_else(|| panic!("no {first} {group} row in\n{t}"))
    };
    let l = row("sum", "kvm-creation");
    assert!(l.contains("570") && l.contains("KVM"), "{l}");
    let l = row("arguments", "trapline");
    assert!(
        l.contains("160") && l.contains("27") && l.contains("clap"),
        "{l}"
    );

    let c = render(&r, Format::Csv, View::Vmm);
    assert!(
        c.contains("\r\nstartup-group,trapline,derived,165,us,"),
        "{c}"
    );
    assert!(
        c.contains("\r\nstartup,exec-to-main,derived,450,us,"),
        "{c}"
    );
    for f in Format::ALL {
        no_nan(&render(&r, f, View::Vmm), f.name());
    }
}

#[test]
fn no_startup_table_without_phases() {
    let r = vmm_report();
    let j = json(&r);
    assert!(j["startup"].as_array().unwrap().is_empty());
    assert!(j["startup_groups"].as_array().unwrap().is_empty());
    assert!(!render(&r, Format::Table, View::Vmm).contains("Start-up, phase by phase"));
}

/// The start-up floor's values as the lab writes them: per span, the
/// floor's CPU µs and faults and trapline's multiple; then the totals.
fn floor_values(multiple: f64, spread: f64) -> Vec<Derived> {
    let d = |name: &str, value, unit: &str| Derived {
        name: name.into(),
        value,
        unit: unit.into(),
        formula: format!("median over 5 `trapline-start-floor` processes: {name}"),
        note: None,
        range: None,
        goal: None,
    };
    let mut v = Vec::new();
    for (span, us, faults, x) in [
        ("exec-to-main", 300.0, 25.0, 1.1),
        ("vm", 450.0, 5.0, 1.4),
        ("vcpus", 120.0, 2.0, 2.0),
        ("vcpu-thread", 4.0, 0.0, 40.0),
    ] {
        v.push(d(&format!("vmm-startfloor:{span}"), us, "us"));
        v.push(d(&format!("vmm-startfloor-faults:{span}"), faults, "count"));
        v.push(d(&format!("vmm-startup-multiple:{span}"), x, "x"));
    }
    v.push(d("vmm-startfloor-cpu-to-first-kvm-run", 0.87, "ms"));
    v.push(d("vmm-startfloor-rss-beyond-guest", 1.4, "MiB"));
    let mut m = d("vmm-startup-multiple", multiple, "x");
    m.range = trapline_report::model::ValueRange::around(multiple, spread);
    v.push(m);
    v
}

#[test]
fn startup_against_the_floor_span_by_span_with_a_verdict() {
    let mut r = vmm_report();
    r.derived.extend(phase("exec-to-main", 330.0, 31.0));
    r.derived.extend(floor_values(1.9, 0.2));
    // Measured outside the scenarios: `finish` keeps them and judges the
    // multiple.
    r.finish();
    let m = r.derived("vmm-startup-multiple").unwrap();
    assert_eq!(m.goal.as_ref().unwrap().at_most, 1.3);
    assert_eq!(
        m.goal.as_ref().unwrap().verdict,
        trapline_report::Verdict::Missed
    );
    let j = json(&r);
    let spans = j["startfloor"]["spans"].as_array().unwrap();
    assert_eq!(spans.len(), 4);
    assert_eq!(spans[1]["span"], "vm");
    assert_eq!(spans[1]["multiple"], 1.4);
    assert_eq!(j["startfloor"]["multiple"]["verdict"], "missed");

    let t = render(&r, Format::Table, View::Vmm);
    assert!(t.contains("Start-up against the start-up floor"), "{t}");
    let l = line(&t, "total: CPU to the first KVM_RUN");
    assert!(
        l.contains("0.87 CPU-ms")
            && l.contains("1.90x")
            && l.contains("1.30x")
            && l.contains("missed"),
        "{l}"
    );
    let l = line(&t, "vm ");
    assert!(l.contains("450 µs") && l.contains("1.40x"), "{l}");
    assert!(line(&t, "memory beyond guest RAM").contains("1.40 MiB"));
    for f in Format::ALL {
        no_nan(&render(&r, f, View::Vmm), f.name());
    }

    // A spread that straddles the goal cannot tell.
    let mut r = vmm_report();
    r.derived.extend(floor_values(1.35, 0.2));
    r.finish();
    assert_eq!(
        r.derived("vmm-startup-multiple")
            .unwrap()
            .goal
            .as_ref()
            .unwrap()
            .verdict,
        trapline_report::Verdict::WithinSpread
    );
}

#[test]
fn startup_without_the_floor_says_it_was_not_measured() {
    let mut r = vmm_report();
    r.derived.extend(phase("exec-to-main", 330.0, 31.0));
    r.finish();
    assert!(json(&r).get("startfloor").is_none());
    let t = render(&r, Format::Table, View::Vmm);
    let l = line(&t, "start-up floor");
    assert!(
        l.contains("not measured") && l.contains("trapline-start-floor"),
        "{l}"
    );
}
