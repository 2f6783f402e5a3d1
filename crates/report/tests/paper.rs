mod common;

use trapline_report::{render, Format};

fn paper_json() -> serde_json::Value {
    let r = common::sample_report();
    serde_json::from_str(&render(&r, Format::Json, common::view("paper"))).unwrap()
}

fn row<'a>(v: &'a serde_json::Value, slug: &str) -> &'a serde_json::Value {
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["slug"] == slug)
        .unwrap()
}

/// A row's published cycles, in the paper's column order.
fn published(row: &serde_json::Value) -> serde_json::Value {
    serde_json::json!([
        row["arm"],
        row["arm_no_vgic_vtimers"],
        row["x86_laptop"],
        row["x86_server"]
    ])
}

#[test]
fn rows_get_the_right_numbers() {
    let v = paper_json();
    assert_eq!(v["view"], "paper");
    assert_eq!(v["rows"].as_array().unwrap().len(), 6);
    let hyper = row(&v, "hypercall");
    assert_eq!(hyper["operation"], "Hypercall");
    assert_eq!(
        published(hyper),
        serde_json::json!([4917, 2112, 1263, 1642])
    );
    assert_eq!(hyper["cycles"], 1300.0); // 1400 − noop 100
    assert_eq!(hyper["this_host"]["net"], 1300.0);
    let trap = row(&v, "trap");
    assert_eq!(trap["scenario"], "cpuid");
    assert_eq!(published(trap), serde_json::json!([27, 27, 632, 821]));
    assert_eq!(trap["cycles"], 1000.0);
    assert_eq!(row(&v, "io-kernel")["scenario"], "pio-kernel-pic");
    assert_eq!(row(&v, "io-kernel")["cycles"], 3400.0);
    assert_eq!(
        published(row(&v, "io-kernel")),
        serde_json::json!([6248, 2945, 2575, 3049])
    );
    assert_eq!(row(&v, "io-user")["cycles"], 9000.0);
    assert_eq!(
        published(row(&v, "io-user")),
        serde_json::json!([6908, 3971, 8226, 10356])
    );
    let ipi = row(&v, "ipi");
    assert_eq!(
        published(ipi),
        serde_json::json!([10534, null, 13670, 16649])
    );
    assert!(ipi["cycles"].is_null());
    assert_eq!(ipi["this_host"]["status"], "not measured");
    assert_eq!(
        published(row(&v, "eoi")),
        serde_json::json!([9, null, 1713, 2195])
    );
}

#[test]
fn table_and_kut() {
    let r = common::sample_report();
    let t = render(&r, Format::Table, common::view("paper"));
    let hyper = t.lines().find(|l| l.starts_with("Hypercall")).unwrap();
    for want in [
        "4,917",
        "2,112",
        "1,263",
        "1,642",
        "1,300",
        "hypercall",
        "net of noop",
    ] {
        assert!(hyper.contains(want), "{want} not in {hyper:?}");
    }
    let trap = t.lines().find(|l| l.starts_with("Trap")).unwrap();
    assert!(
        trap.contains(" 27 ") && !trap.contains("27.0"),
        "published counts are integers: {trap}"
    );
    let eoi = t.lines().find(|l| l.starts_with("EOI")).unwrap();
    assert!(
        eoi.contains("–") && eoi.contains("not in this run"),
        "{eoi}"
    );
    assert!(t.contains("ASPLOS 2014"));
    let k = render(&r, Format::Kut, common::view("paper"));
    assert_eq!(
        k,
        "hypercall 1300\ntrap 1000\nio-kernel 3400\nio-user 9000\nipi (skipped)\neoi (skipped)\n"
    );
    let m = render(&r, Format::Markdown, common::view("paper"));
    assert!(m.contains(
        "| Operation | ARM | ARM no vgic/vtimers | x86 laptop | x86 server | scenario | this host |"
    ));
    let h = render(&r, Format::Html, common::view("paper"));
    assert!(h.contains("<svg") && h.contains("x86 server"));
}

#[test]
fn unsupported_row_shows_reason_and_no_baseline_uses_median() {
    let mut r = common::sample_report();
    r.scenarios
        .retain(|s| !(s.vmm == "trapline" && s.name == "noop"));
    for s in &mut r.scenarios {
        if s.name == "pio-kernel-pic" {
            s.status = trapline_report::Status::Unsupported;
            s.reason = Some("no in-kernel PIC".into());
        }
    }
    r.finish();
    let t = render(&r, Format::Table, common::view("paper"));
    let io = t.lines().find(|l| l.starts_with("I/O Kernel")).unwrap();
    assert!(io.contains("unsupported: no in-kernel PIC"), "{io}");
    let hyper = t.lines().find(|l| l.starts_with("Hypercall")).unwrap();
    assert!(
        hyper.contains("1,400") && hyper.contains("median (no noop baseline)"),
        "{hyper}"
    );
}
