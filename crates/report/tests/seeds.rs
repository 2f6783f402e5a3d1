mod common;

use serde_json::Value;
use trapline_report::views::seed::{SeedId, SeedTable};
use trapline_report::views::seeds;
use trapline_report::{render, Format, Report, ScenarioResult, View, HTML_DATA_ID};

fn ok(name: &str, group: &str, per_iter: f64) -> ScenarioResult {
    ScenarioResult::new(name, group, format!("{name} path"))
        .with_samples(common::samples(per_iter, &[]))
}

/// The shared sample report plus every seed view's scenarios, on hand
/// values (TSC 3 GHz: 3 cycles per ns).
fn seed_report() -> Report {
    let mut r = common::sample_report();
    for (name, cyc) in [
        ("mmio-no-eventfd:pci-mem", 9000.0),
        ("mmio-wildcard-eventfd:pci-mem", 3000.0),
        ("mmio-datamatch-eventfd:pci-mem", 3000.0),
        ("mmio-pv-eventfd:pci-mem", 1500.0),
        ("portio-no-eventfd:pci-io", 6000.0),
        ("portio-wildcard-eventfd:pci-io", 1500.0),
        ("portio-pv-eventfd:pci-io", 1500.0),
    ] {
        r.push(ok(name, "pci", cyc));
    }
    r.push(ok("mmio-no-eventfd:pci-mem", "pci", 12000.0).with_vmm("qemu"));
    r.push(ok("mmio-wildcard-eventfd:pci-mem", "pci", 4000.0).with_vmm("qemu"));
    for (name, cyc) in [
        ("pci-config-read-cf8", 60000.0),
        ("pci-config-read-ecam", 30000.0),
        ("pci-config-read-ecam-ro", 30.0),
        ("pci-scan-cf8", 256.0 * 60000.0),
        ("pci-scan-ecam", 256.0 * 30000.0),
        ("ram-read", 15.0),
    ] {
        r.push(ok(name, "pci-config", cyc));
    }
    for (name, cyc) in [
        ("doorbell-user-mmio", 9000.0),
        ("doorbell-ioeventfd-mmio", 6000.0),
        ("doorbell-ioeventfd-pio", 3000.0),
    ] {
        r.push(ok(name, "doorbell", cyc));
    }
    r.push(ScenarioResult::new("doorbell-pv", "doorbell", "pv").unsupported("no PV port"));
    r.push(ok("mmio-user-read", "mmio", 10000.0));
    r.push(ok("ipi", "irq", 14000.0));
    r.push(ok("eoi", "irq", 700.0));
    r.push(ok("ipi-x2apic", "irq", 8000.0));
    r.finish();
    r
}

/// Every seed table's view, and `seeds`.
fn seed_views() -> Vec<View> {
    View::all()
        .filter(|v| matches!(v, View::Seed(_) | View::Seeds))
        .collect()
}

/// The seed table shown by view `name`.
fn table(name: &str) -> &'static SeedTable {
    SeedId::named(name).expect("a seed view").table()
}

fn json(r: &Report, v: View) -> Value {
    serde_json::from_str(&render(r, Format::Json, v)).expect("view JSON parses")
}

fn rows(v: &Value) -> &[Value] {
    v["rows"].as_array().unwrap()
}

fn close(a: &Value, b: f64) -> bool {
    a.as_f64()
        .is_some_and(|a| (a - b).abs() < 1e-9 * b.abs().max(1.0))
}

/// The line of a terminal table whose first cell is `first`.
fn line<'a>(table: &'a str, first: &str) -> &'a str {
    table
        .lines()
        .find(|l| l.split("  ").next() == Some(first))
        .unwrap_or_else(|| panic!("no line for {first} in\n{table}"))
}

/// Minimal RFC 4180 reader (quotes, doubled quotes, CRLF).
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut field, mut quoted) = (Vec::new(), Vec::new(), String::new(), false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\r') => {}
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(!quoted && field.is_empty() && row.is_empty());
    rows
}

/// No `NaN`, `inf` or `Infinity` token (as Rust and JSON would print them).
fn no_bad_numbers(out: &str, what: &str) {
    for token in out.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.')) {
        let t = token.trim_matches('.');
        assert!(
            !matches!(t, "NaN" | "nan" | "inf" | "Infinity"),
            "{t} in {what}:\n{out}"
        );
    }
}

/// Every seed scenario at zero cycles: every ratio's denominator is zero.
fn zero_report() -> Report {
    let mut r = seed_report();
    for s in &mut r.scenarios {
        for sample in &mut s.samples {
            sample.cycles = 0;
        }
    }
    r.finish();
    r
}

#[test]
fn every_format_renders_every_seed_view() {
    let empty = Report::new(Default::default(), Default::default(), Default::default());
    for r in [seed_report(), common::sample_report(), zero_report(), empty] {
        for v in seed_views() {
            for f in Format::ALL {
                let out = render(&r, f, v);
                assert!(!out.is_empty(), "{f} {v}");
                no_bad_numbers(&out, &format!("{f} {v}"));
            }
            let _ = json(&r, v);
            let csv = parse_csv(&render(&r, Format::Csv, v));
            assert!(
                csv.iter().all(|row| row.len() == csv[0].len()),
                "{v} CSV is rectangular"
            );
            let html = render(&r, Format::Html, v);
            assert!(!html.contains("http"), "{v}: HTML names no URL");
            assert!(!html.contains("<link") && !html.contains("<script src"));
            assert_eq!(html.matches("</script>").count(), 1);
            for l in render(&r, Format::Kut, v).lines() {
                let (name, value) = l.split_once(' ').unwrap();
                assert!(name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == ':'));
                assert!(
                    value == "(skipped)" || value.chars().all(|c| c.is_ascii_digit()),
                    "{l}"
                );
            }
        }
    }
}

#[test]
fn zero_denominators_give_no_ratio() {
    let r = zero_report();
    let v = json(&r, common::view("pci-testdev"));
    assert!(rows(&v).iter().all(|r| r["ratio"].is_null()));
    let v = json(&r, common::view("doorbell"));
    assert!(rows(&v)
        .iter()
        .all(|r| r["iops"].is_null() && r["ratio"].is_null()));
    let v = json(&r, common::view("pci-config"));
    assert!(v["ecam_ro_vs_ram"].is_null());
    assert!(close(&v["rows"][0]["seconds_per_100k"], 0.0));
    let t = render(&r, Format::Table, common::view("doorbell"));
    assert!(
        t.contains("this host: not measured") || t.contains("saves nothing"),
        "{t}"
    );
}

#[test]
fn view_names_parse() {
    let names: Vec<&str> = View::all().map(View::name).collect();
    assert_eq!(
        names,
        [
            "all",
            "vmexit-arm",
            "paper",
            "doorbell",
            "pci-testdev",
            "pci-config",
            "seeds",
            "vmm",
            "tails",
            "anatomy"
        ],
        "all, the seed tables in seed order, seeds, vmm, tails, anatomy"
    );
    for v in View::all() {
        assert_eq!(v.name().parse::<View>(), Ok(v));
    }
    assert_eq!("all".parse::<View>(), Ok(View::All));
    assert_eq!("Seeds".parse::<View>(), Ok(View::Seeds));
    assert_eq!("vmm".parse::<View>(), Ok(View::Vmm));
    assert!(matches!("paper".parse::<View>(), Ok(View::Seed(_))));
    assert!("pci".parse::<View>().unwrap_err().contains("vmexit-arm"));
}

#[test]
fn pci_testdev_rows_ratios_and_qemu() {
    let r = seed_report();
    let v = json(&r, common::view("pci-testdev"));
    let rows = rows(&v);
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "mmio-no-eventfd:pci-mem",
            "mmio-wildcard-eventfd:pci-mem",
            "mmio-datamatch-eventfd:pci-mem",
            "mmio-pv-eventfd:pci-mem",
            "portio-no-eventfd:pci-io",
            "portio-wildcard-eventfd:pci-io",
            "portio-datamatch-eventfd:pci-io",
            "portio-pv-eventfd:pci-io",
        ]
    );
    let published: Vec<u64> = rows
        .iter()
        .map(|r| r["published_cycles"].as_u64().unwrap())
        .collect();
    assert_eq!(published, [9075, 3529, 3509, 1878, 5535, 1846, 1848, 1842]);
    // Hand values: mmio 9000/3000/3000/1500, portio 6000/1500/–/1500, noop 100.
    assert_eq!(rows[1]["this_host"]["median"], 3000.0);
    assert_eq!(rows[1]["this_host"]["net"], 2900.0);
    assert!(close(&rows[1]["ratio"], 3000.0 / 9000.0));
    assert!(close(&rows[5]["ratio"], 1500.0 / 6000.0));
    assert_eq!(rows[0]["ratio"], 1.0);
    assert!(close(&rows[1]["published_ratio"], 3529.0 / 9075.0));
    assert!(close(&rows[5]["published_ratio"], 1846.0 / 5535.0));
    assert_eq!(rows[6]["this_host"]["status"], "not measured");
    assert!(rows[6]["ratio"].is_null());
    assert!(close(&rows[1]["qemu_ratio"], 4000.0 / 12000.0));
    assert_eq!(
        rows[1]["qemu"]["scenario"],
        "qemu:mmio-wildcard-eventfd:pci-mem"
    );
    let finding = |name: &str| {
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name)
            .unwrap()
            .clone()
    };
    // (9000 − 6000) ÷ (3000 − 1500) = 2; the seed's (9075 − 5535) ÷ (3529 − 1846).
    let premium = finding("mmio-exit-premium");
    assert_eq!(premium["this_host"], 2.0);
    assert!(close(&premium["published"], 3540.0 / 1683.0));
    assert_eq!(finding("pv-vs-portio")["this_host"], 1.0);
    assert!(close(
        &finding("hypercall-vs-portio")["this_host"],
        1400.0 / 3500.0
    ));
    assert!(close(
        &finding("hypercall-vs-portio")["published"],
        1519.0 / 1745.0
    ));

    let t = render(&r, Format::Table, common::view("pci-testdev"));
    assert!(t.contains("qemu median") && t.contains("qemu ÷no-evfd"));
    let wild = line(&t, "mmio-wildcard-eventfd:pci-mem");
    for want in ["3,529", "0.39x", "3,000", "2,900", "0.33x", "4,000", "ok"] {
        assert!(wild.contains(want), "{want} not in {wild:?}");
    }
    let missing = line(&t, "portio-datamatch-eventfd:pci-io");
    assert!(missing.contains("1,848") && missing.contains("–") && missing.contains("not measured"));
    assert!(t.contains("seed 2.10x · this host 2.00x"));
    assert_eq!(
        render(&r, Format::Kut, common::view("pci-testdev"))
            .lines()
            .next(),
        Some("mmio-no-eventfd:pci-mem 9000")
    );
}

#[test]
fn pci_testdev_without_peer_or_data() {
    let r = common::sample_report();
    let t = render(&r, Format::Table, common::view("pci-testdev"));
    assert!(
        !t.contains("qemu median"),
        "no qemu column without qemu pci rows"
    );
    for row in &table("pci-testdev").rows {
        let l = line(&t, &row.label);
        assert!(l.contains("not measured"), "{l}");
    }
    let csv = parse_csv(&render(&r, Format::Csv, common::view("pci-testdev")));
    assert_eq!(csv.len(), 9);
    assert_eq!(csv[0][0], "row");
    assert_eq!(csv[1][1], "9075");
    assert_eq!(csv[1][3], "", "absent numbers are empty in CSV");
}

#[test]
fn pci_config_times_ratios_and_ram_note() {
    let r = seed_report();
    let v = json(&r, common::view("pci-config"));
    let row = |s: &str| {
        rows(&v)
            .iter()
            .find(|r| r["scenario"] == s)
            .unwrap()
            .clone()
    };
    // 60,000 cycles at 3 GHz = 20 µs per read → 100k reads = 2 s.
    let cf8 = row("pci-config-read-cf8");
    assert!(close(&cf8["seconds_per_100k"], 2.0));
    assert_eq!(cf8["published_seconds_per_100k"], 12.809);
    // 30 cycles = 10 ns → 100k reads = 0.001 s.
    let ro = row("pci-config-read-ecam-ro");
    assert!(close(&ro["ns_per_read"], 10.0));
    assert!(close(&ro["seconds_per_100k"], 0.001));
    assert_eq!(ro["published_seconds_per_100k"], 0.010);
    assert!(close(&cf8["ratio_to_ro"], 2000.0));
    assert!(close(&row("pci-config-read-ecam")["ratio_to_ro"], 1000.0));
    assert!(close(&cf8["published_ratio_to_ro"], 12.809 / 0.010));
    // A scan is 256 reads: per read = per scan ÷ 256.
    let scan = row("pci-scan-cf8");
    assert_eq!(scan["reads_per_iter"], 256);
    assert!(close(&scan["cycles_per_read"], 60000.0));
    assert!(close(&scan["seconds_per_100k"], 2.0));
    assert!(scan["ratio_to_ro"].is_null(), "pci-scan-ecam-ro is missing");
    assert_eq!(
        row("pci-scan-ecam-ro")["this_host"]["status"],
        "not measured"
    );
    let f = |name: &str| {
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name)
            .unwrap()
            .clone()
    };
    assert!(close(&f("pio-vs-mmio-reads")["published"], 12.809 / 8.517));
    assert!(close(&f("mmio-vs-ro-reads")["published"], 851.7));
    assert!(close(&f("pio-vs-ro-reads")["published"], 1280.9));
    assert!(close(&f("pio-vs-mmio-scans")["this_host"], 2.0));
    assert!(f("pio-vs-ro-scans")["this_host"].is_null());
    assert!(close(&v["ecam_ro_vs_ram"]["value"], 2.0));

    let t = render(&r, Format::Table, common::view("pci-config"));
    let l = line(&t, "pci-config-read-ecam-ro");
    for want in ["30.0", "10.0", "0.00100", "1.00x", "0.0100", "ok"] {
        assert!(l.contains(want), "{want} not in {l:?}");
    }
    let l = line(&t, "pci-config-read-cf8");
    for want in ["60,000", "20,000", "2.000", "2,000x", "12.809", "1,281x"] {
        assert!(l.contains(want), "{want} not in {l:?}");
    }
    assert!(t.contains("ECAM-RO read vs RAM read: ecam-ro-vs-ram-read = 2.00x"));
    assert!(t.contains("seed 852x · this host 1,000x"));
    assert!(line(&t, "pci-scan-ecam-ro").contains("not measured"));

    // Without ram-read there is no such line; without a TSC frequency no times.
    let mut r2 = seed_report();
    r2.scenarios.retain(|s| s.name != "ram-read");
    r2.host.tsc_khz = 0;
    r2.finish();
    let t = render(&r2, Format::Table, common::view("pci-config"));
    assert!(!t.contains("ECAM-RO read vs RAM read"));
    let l = line(&t, "pci-config-read-cf8");
    assert!(l.contains("60,000") && l.contains("12.809"), "{l}");
    assert!(json(&r2, common::view("pci-config"))["rows"][0]["seconds_per_100k"].is_null());
}

#[test]
fn doorbell_iops_rtt_and_conclusion() {
    let r = seed_report();
    let v = json(&r, common::view("doorbell"));
    let row = |seed: &str| {
        rows(&v)
            .iter()
            .find(|r| r["seed_row"] == seed)
            .unwrap()
            .clone()
    };
    // 9,000 cycles at 3 GHz = 3 µs per ring = 333,333 rings/s.
    let user = row("qemu-mmio");
    assert_eq!(user["scenario"], "doorbell-user-mmio");
    assert!(close(&user["rtt_us"], 3.0));
    assert!(close(&user["iops"], 1e9 / 3000.0));
    assert_eq!(user["published_iops"], 110000);
    assert_eq!(user["published_rtt_us"], 9.09);
    let pio = row("iosignalfd-pio");
    assert!(close(&pio["iops"], 1e6));
    assert!(close(&pio["ratio"], 1.0 / 3.0));
    assert!(close(&pio["published_ratio"], 2.72 / 9.09));
    assert_eq!(row("qemu-pio")["extrapolated"], true);
    assert!(row("qemu-pio")["scenario"].is_null());
    assert_eq!(row("iosignalfd-hc")["this_host"]["status"], "unsupported");

    let t = render(&r, Format::Table, common::view("doorbell"));
    for (first, want) in [
        ("user-space MMIO", "110000 iops, 9.09us rtt"),
        ("user-space MMIO", "333333 iops, 3.00us rtt"),
        ("ioeventfd MMIO", "200100 iops, 5.00us rtt"),
        ("ioeventfd MMIO", "500000 iops, 2.00us rtt"),
        ("ioeventfd PIO", "367300 iops, 2.72us rtt"),
        ("ioeventfd PIO", "1000000 iops, 1.00us rtt"),
        ("user-space PIO", "153139 iops, 6.53us rtt (extrapolated)"),
        ("user-space PIO", "not measured"),
        ("paravirtual", "412585 iops, 2.37us rtt (extrapolated)"),
        ("paravirtual", "unsupported: no PV port"),
    ] {
        assert!(
            line(&t, first).contains(want),
            "{want} not in {:?}",
            line(&t, first)
        );
    }
    assert!(t.contains("\"we save about 4us by skipping the userspace hop\""));
    assert!(t.contains("(qemu-mmio 9.09us − iosignalfd-mmio 5.00us = 4.09us)"));
    assert!(t.contains(
        "this host: we save about 1.00us by skipping the userspace hop (doorbell-user-mmio 3.00us − doorbell-ioeventfd-mmio 2.00us, 33% of the round trip)"
    ));
    assert!(t.contains("seed 1.84x · this host 2.00x"));

    let csv = parse_csv(&render(&r, Format::Csv, common::view("doorbell")));
    let col = |name: &str| csv[0].iter().position(|h| h == name).unwrap();
    assert_eq!(csv[1][col("seed_iops")], "110000");
    assert_eq!(csv[1][col("rtt_us")], "3");
    assert_eq!(csv[5][col("iops")], "");

    // No TSC frequency: no microseconds, and the conclusion says why.
    let mut r2 = seed_report();
    r2.host.tsc_khz = 0;
    r2.finish();
    let t = render(&r2, Format::Table, common::view("doorbell"));
    assert!(t.contains("this host: not measured"));
    assert!(line(&t, "user-space MMIO").contains("110000 iops, 9.09us rtt"));
}

#[test]
fn vmexit_arm_mapping_and_ratios() {
    let r = seed_report();
    let v = json(&r, common::view("vmexit-arm"));
    let row = |t: &str| rows(&v).iter().find(|r| r["test"] == t).unwrap().clone();
    let tests: Vec<&str> = rows(&v)
        .iter()
        .map(|r| r["test"].as_str().unwrap())
        .collect();
    assert_eq!(
        tests,
        [
            "hvc",
            "noop_guest",
            "mmio_read_user",
            "mmio_read_vgic",
            "ipi",
            "eoi",
            "mmio_kernel"
        ]
    );
    let hvc = row("hvc");
    assert_eq!(hvc["scenario"], "hypercall");
    assert_eq!(hvc["with_vgic"], 5602);
    assert_eq!(hvc["without_vgic"], 2138);
    assert_eq!(row("mmio_read_vgic")["scenario"], "pio-kernel-pic");
    assert_eq!(row("ipi")["without_vgic"], 258255);
    assert!(close(&row("ipi")["ratio"], 10.0)); // 14,000 ÷ 1,400
    assert!(close(&row("ipi")["published_ratio"], 14198.0 / 5602.0));
    let eoi = row("eoi");
    assert_eq!(eoi["with_vgic"], 164);
    assert_eq!(eoi["this_host"]["median"], 700.0);
    assert!(
        eoi["this_host"]["net"].is_null(),
        "EOI is timed in the handler"
    );
    assert_eq!(row("mmio_kernel")["this_host"]["status"], "not measured");
    assert!(row("mmio_kernel")["with_vgic"].is_null());

    let t = render(&r, Format::Table, common::view("vmexit-arm"));
    let l = line(&t, "mmio_read_user");
    for want in [
        "10,816",
        "6,144",
        "1.93x",
        "mmio-user-read",
        "10,000",
        "9,900",
        "7.14x",
    ] {
        assert!(l.contains(want), "{want} not in {l:?}");
    }
    assert!(line(&t, "noop_guest").contains("0.0014x"));
    assert!(line(&t, "mmio_kernel").contains("not measured"));
    let k = render(&r, Format::Kut, common::view("vmexit-arm"));
    assert!(k.starts_with("hvc 1400\nnoop-guest 100\n"), "{k}");
    assert!(k.contains("mmio-kernel (skipped)"));
}

#[test]
fn paper_fills_ipi_and_eoi() {
    let r = seed_report();
    let v = json(&r, common::view("paper"));
    let row = |slug: &str| rows(&v).iter().find(|r| r["slug"] == slug).unwrap().clone();
    let ipi = row("ipi");
    assert_eq!(ipi["cycles"], 13900.0); // 14,000 − noop 100
    assert_eq!(ipi["this_host"]["net"], 13900.0);
    assert_eq!(ipi["this_host"]["status"], "ok");
    let eoi = row("eoi");
    assert_eq!(
        eoi["cycles"], 700.0,
        "EOI is the median: timed inside the handler"
    );
    assert!(eoi["this_host"]["net"].is_null());
    let t = render(&r, Format::Table, common::view("paper"));
    let l = line(&t, "IPI");
    assert!(
        l.contains("13,670") && l.contains("13,900") && l.contains("net of noop"),
        "{l}"
    );
    let l = line(&t, "EOI");
    assert!(
        l.contains("1,713") && l.contains("700") && l.contains("timed per EOI"),
        "{l}"
    );
    assert!(t.contains("x2APIC variants"));
    assert!(t.contains("ipi-x2apic 7,900 (net)"));
    assert!(!t.contains("eoi-x2apic"), "absent variants are not listed");
    assert_eq!(
        render(&r, Format::Kut, common::view("paper")),
        "hypercall 1300\ntrap 1000\nio-kernel 3400\nio-user 9000\nipi 13900\neoi 700\n"
    );
    // Unsupported IPI shows its reason.
    let mut r2 = seed_report();
    for s in &mut r2.scenarios {
        if s.name == "ipi" {
            *s = ScenarioResult::new("ipi", "irq", "x").unsupported("one vCPU only");
        }
    }
    r2.finish();
    let t = render(&r2, Format::Table, common::view("paper"));
    assert!(line(&t, "IPI").contains("unsupported: one vCPU only"));
}

#[test]
fn seeds_has_every_view_and_caption() {
    for nested in [true, false] {
        let mut r = seed_report();
        if !nested {
            r.host.nested_note = None;
        }
        let captions: Vec<&str> = SeedId::all()
            .map(|s| s.table().caption.as_str())
            .chain([seeds::CAPTION])
            .collect();
        assert_eq!(captions.len(), 6);
        let t = render(&r, Format::Table, View::Seeds);
        let m = render(&r, Format::Markdown, View::Seeds);
        let h = render(&r, Format::Html, View::Seeds);
        for c in captions {
            assert!(t.contains(c), "caption missing from table: {c}");
            assert!(m.contains(c), "caption missing from markdown: {c}");
            // HTML escapes quotes and apostrophes.
            let esc = c.replace('\'', "&#39;").replace('"', "&quot;");
            assert!(h.contains(&esc), "caption missing from HTML: {c}");
        }
        assert_eq!(t.contains("this host is a nested VM"), nested);
        for c in [&t, &m] {
            for want in ["ARM Cortex-A15", "2013", "VMware", "2009", "compare"] {
                assert!(c.contains(want), "{want}");
            }
        }
        // Every view's table and published numbers, in seed order.
        let order: Vec<usize> = [
            "[vmexit-arm]",
            "[paper]",
            "[doorbell]",
            "[pci-testdev]",
            "[pci-config]",
        ]
        .iter()
        .map(|n| t.find(n).unwrap_or_else(|| panic!("{n} missing")))
        .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
        for published in [
            "5,602",
            "16,649",
            "110000 iops, 9.09us rtt",
            "9,075",
            "12.809",
            "8.517",
        ] {
            assert!(t.contains(published), "{published}");
        }
        // HTML: one section, table and chart per view; still self-contained.
        for id in [
            "vmexit-arm",
            "paper",
            "doorbell",
            "pci-testdev",
            "pci-config",
        ] {
            assert!(
                h.contains(&format!("<section class=\"view\" id=\"view-{id}\">")),
                "{id}"
            );
        }
        assert_eq!(h.matches("<section class=\"view\"").count(), 5);
        assert!(
            h.matches("<table class=\"grid\">").count() >= 6,
            "overview + five"
        );
        assert!(h.matches("<svg").count() >= 5);
        assert!(!h.contains("http"));
        let open = format!("<script type=\"application/json\" id=\"{HTML_DATA_ID}\">");
        let start = h.find(&open).unwrap() + open.len();
        let end = start + h[start..].find("</script>").unwrap();
        assert_eq!(Report::from_json(&h[start..end]).unwrap(), r);
    }
}

#[test]
fn seeds_json_csv_and_kut() {
    let r = seed_report();
    let v = json(&r, View::Seeds);
    assert_eq!(v["view"], "seeds");
    let parts = v["parts"].as_array().unwrap();
    let names: Vec<&str> = parts.iter().map(|p| p["view"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "vmexit-arm",
            "paper",
            "doorbell",
            "pci-testdev",
            "pci-config"
        ]
    );
    assert_eq!(parts[2]["seed"], "002");
    assert_eq!(
        parts[3]["data"],
        json(&r, common::view("pci-testdev")),
        "a part is its view's JSON"
    );
    assert!(parts.iter().all(|p| p["caption"].is_string()));

    let csv = parse_csv(&render(&r, Format::Csv, View::Seeds));
    assert_eq!(csv[0], ["view", "row", "column", "value"]);
    assert!(csv.iter().all(|row| row.len() == 4));
    assert!(csv.contains(&vec![
        "pci-config".to_string(),
        "1".to_string(),
        "seed_seconds_per_100k_reads".to_string(),
        "12.809".to_string()
    ]));

    let k = render(&r, Format::Kut, View::Seeds);
    assert!(k.contains("vmexit-arm:hvc 1400\n"));
    assert!(k.contains("pci-testdev:mmio-no-eventfd:pci-mem 9000\n"));
    assert!(k.contains("pci-config:pci-scan-ecam-ro (skipped)\n"));
}

/// Where the hypercall never returned (nested AMD), vmexit-arm's ratios
/// divide by cpuid instead, and the view says so in its notes and under
/// its chart instead of drawing no bars.
#[test]
fn vmexit_arm_falls_back_to_cpuid_without_a_hypercall() {
    let mut r = common::full_report();
    let hc = r
        .scenarios
        .iter_mut()
        .find(|s| s.vmm == "trapline" && s.name == "hypercall")
        .unwrap();
    *hc = ScenarioResult::new("hypercall", "trap", "vmmcall")
        .unsupported("vmmcall never returned under nested KVM");
    r.finish();
    let v = common::view("vmexit-arm");
    let j = json(&r, v);
    let mmio = rows(&j)
        .iter()
        .find(|row| row["scenario"] == "mmio-user-read")
        .expect("mmio row");
    assert!(mmio["ratio"].is_number(), "{mmio}");
    let md = render(&r, Format::Markdown, v);
    assert!(
        md.contains("hvc is not measured on this host (unsupported: vmmcall never returned"),
        "{md}"
    );
    assert!(md.contains("divide by cpuid instead"), "{md}");
    let html = render(&r, Format::Html, v);
    let fig = &html[html.find("<figure>").unwrap()..];
    assert!(fig.contains("<svg") && fig.contains("divide by cpuid instead"));
}
