//! The HTML report as a real browser sees it: each page is rendered to a
//! file, loaded in headless Chromium with `--dump-dom` (the DOM after
//! parsing, as the browser serializes it), and checked for what a reader
//! sees: title, host and method sections, the results tables' rows, one
//! `<svg>` with bars per chart, and the embedded JSON parsing back.
//!
//! And how it is laid out: a copy of each page with a measuring script
//! (the report itself runs none) is loaded at 1400×900, 1280×800 and
//! 800×900; the script writes what it measured into the DOM, which
//! `--dump-dom` returns. No word in a table cell is broken across lines or
//! wider than its cell, nothing is wider than the window (a wide table
//! scrolls in its own box), the first chart starts within the first two
//! screens, and no backtick is left as text.
//!
//! Without a Chromium binary (`chromium`, `chromium-browser`,
//! `google-chrome` on PATH) each test says SKIPPED and returns;
//! `scripts/test.sh` installs Debian's `chromium` where it can. Set
//! `TRAPLINE_BROWSER_OUT=DIR` to keep the pages, dumped DOMs and a
//! screenshot of each in DIR, to look at them.

mod common;

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use trapline_report::{render, Format, Report, View, HTML_DATA_ID};

/// Browser binaries looked for on PATH, in order.
const BROWSERS: [&str; 3] = ["chromium", "chromium-browser", "google-chrome"];
/// Longest one browser run may take.
const TIMEOUT: Duration = Duration::from_secs(60);

fn find_browser() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    BROWSERS.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| {
                p.metadata()
                    .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            })
    })
}

/// The browser, or `None` after saying loudly that `test` did not run.
fn browser(test: &str) -> Option<PathBuf> {
    let b = find_browser();
    if b.is_none() {
        eprintln!(
            "SKIPPED browser render: chromium not installed — this test did NOT run ({test})"
        );
    }
    b
}

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        // Tests run on several threads of one process: a counter, not the
        // clock, keeps their directories apart (two browsers sharing a
        // profile directory refuse to start: "SingletonLock: File exists").
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p =
            std::env::temp_dir().join(format!("trapline-browser-{tag}-{}-{n}", std::process::id()));
        // A directory left by an earlier process with the same pid.
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create temp dir");
        Self(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs headless Chromium on `page` with `extra` arguments (in its own
/// process group, killed whole after [`TIMEOUT`]); returns its stdout.
fn run_browser(browser: &Path, page: &Path, extra: &[String]) -> String {
    let tmp = TempDir::new("profile");
    let profile = tmp.0.join("profile");
    let stderr_path = tmp.0.join("stderr.txt");
    let mut cmd = Command::new(browser);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(format!("file://{}", page.display()))
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(File::create(&stderr_path).expect("stderr file"))
    .process_group(0);
    let started = Instant::now();
    let mut child = cmd.spawn().expect("spawn the browser");
    let mut stdout = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the browser") {
            break status;
        }
        if started.elapsed() > TIMEOUT {
            // The whole group: the browser's helper processes too.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.kill();
            let _ = child.wait();
            let err = std::fs::read_to_string(&stderr_path).unwrap_or_default();
            panic!(
                "{} did not finish within {TIMEOUT:?}; killed. stderr:\n{err}",
                browser.display()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = reader.join().expect("stdout reader");
    let err = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    assert!(
        status.success(),
        "{} exited with {status}; stderr:\n{err}",
        browser.display()
    );
    out
}

/// Renders `view` of `report` to HTML, loads it in the browser and returns
/// the HTML as written and the DOM as the browser serializes it.
fn load(browser: &Path, report: &Report, view: View) -> (String, String) {
    let tmp = TempDir::new(view.name());
    let html = render(report, Format::Html, view);
    let page = tmp.0.join(format!("{}.html", view.name()));
    std::fs::write(&page, &html).expect("write the page");
    let dom = run_browser(browser, &page, &["--dump-dom".to_string()]);
    assert!(
        dom.contains("</html>"),
        "no DOM from the browser for {view}:\n{dom}"
    );
    if let Some(dir) = std::env::var_os("TRAPLINE_BROWSER_OUT") {
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir).expect("create TRAPLINE_BROWSER_OUT");
        let name = view.name();
        std::fs::write(dir.join(format!("{name}.html")), &html).expect("keep the page");
        std::fs::write(dir.join(format!("{name}.dom.html")), &dom).expect("keep the DOM");
        let shot = dir.join(format!("{name}.png"));
        run_browser(
            browser,
            &page,
            &[
                format!("--screenshot={}", shot.display()),
                "--window-size=1400,2400".to_string(),
            ],
        );
        assert!(shot.exists(), "no screenshot at {}", shot.display());
    }
    check_layout(browser, &html, view.name());
    (html, dom)
}

/// Window sizes a reader uses: a desktop window, a laptop, a narrow
/// window.
const WINDOWS: [(u32, u32); 3] = [(1400, 900), (1280, 800), (800, 900)];

/// Measures the page as laid out and writes the result, as JSON, into a
/// `<pre id="layout">` the dumped DOM carries back. Page width and the
/// first chart's place are measured as the page opens (long tables
/// folded), the cells with every fold opened.
const MEASURE: &str = r#"(function () {
  var root = document.documentElement;
  var r = { width: innerWidth, height: innerHeight };
  var svg = document.querySelector('figure svg');
  r.firstChart = svg ? Math.round(svg.getBoundingClientRect().top + scrollY) : null;
  r.pageWidth = root.scrollWidth;
  r.pageHeight = root.scrollHeight;
  document.querySelectorAll('details').forEach(function (d) { d.open = true; });
  r.pageWidthOpen = root.scrollWidth;
  r.broken = []; r.overflowing = []; r.cells = 0; r.words = 0;
  document.querySelectorAll('table td, table th').forEach(function (cell) {
    r.cells++;
    var cs = getComputedStyle(cell);
    var inner = cell.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    var walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (var n = walk.nextNode(); n; n = walk.nextNode()) {
      var re = /\S+/g, m;
      while ((m = re.exec(n.data))) {
        r.words++;
        var range = document.createRange();
        range.setStart(n, m.index);
        range.setEnd(n, m.index + m[0].length);
        var rects = range.getClientRects(), lines = {};
        for (var i = 0; i < rects.length; i++) lines[Math.round(rects[i].top)] = 1;
        var w = range.getBoundingClientRect().width;
        if (Object.keys(lines).length > 1 || w > inner + 1) {
          r.broken.push(m[0] + ' (' + Object.keys(lines).length + ' lines, ' +
            Math.round(w) + ' px in a cell ' + Math.round(inner) + ' px wide)');
        }
      }
    }
    if (cell.scrollWidth > cell.clientWidth + 1) r.overflowing.push(cell.textContent.slice(0, 60));
  });
  r.scrollingTables = 0;
  document.querySelectorAll('div.grid').forEach(function (box) {
    if (box.scrollWidth > box.clientWidth + 1) r.scrollingTables++;
  });
  r.backticks = (document.body.innerText.match(/`/g) || []).length;
  var pre = document.createElement('pre');
  pre.id = 'layout';
  pre.textContent = JSON.stringify(r);
  document.body.appendChild(pre);
})();"#;

/// What [`MEASURE`] found at one window size.
struct Layout {
    json: serde_json::Value,
}

impl Layout {
    fn num(&self, key: &str) -> f64 {
        self.json[key]
            .as_f64()
            .unwrap_or_else(|| panic!("{key} not measured: {}", self.json))
    }

    fn list(&self, key: &str) -> Vec<String> {
        self.json[key]
            .as_array()
            .unwrap_or_else(|| panic!("{key} not measured: {}", self.json))
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_string())
            .collect()
    }
}

/// Loads `html` with [`MEASURE`] added in a `width`×`height` window.
fn measure(browser: &Path, html: &str, name: &str, (width, height): (u32, u32)) -> Layout {
    let tmp = TempDir::new(&format!("layout-{name}-{width}"));
    let page = tmp.0.join(format!("{name}.html"));
    let measured = html.replacen("</body>", &format!("<script>{MEASURE}</script></body>"), 1);
    std::fs::write(&page, measured).expect("write the page");
    let dom = run_browser(
        browser,
        &page,
        &[
            "--dump-dom".to_string(),
            format!("--window-size={width},{height}"),
        ],
    );
    let json = between(&dom, "<pre id=\"layout\">", "</pre>")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    Layout {
        json: serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}")),
    }
}

/// The page `html` (called `name`) reads well at every size in
/// [`WINDOWS`]; returns what was measured, widest window first.
fn check_layout(browser: &Path, html: &str, name: &str) -> Vec<Layout> {
    let mut all = Vec::new();
    for window in WINDOWS {
        let l = measure(browser, html, name, window);
        let at = format!("{name} at {}x{}", window.0, window.1);
        let (width, height) = (l.num("width"), l.num("height"));
        assert!(
            l.num("cells") > 0.0 && l.num("words") > 0.0,
            "{at}: no cells measured"
        );
        // (a) No cell narrower than its longest word.
        let broken = l.list("broken");
        assert!(
            broken.is_empty(),
            "{at}: {} words broken or wider than their cell, e.g. {:?}",
            broken.len(),
            &broken[..broken.len().min(8)]
        );
        let over = l.list("overflowing");
        assert!(over.is_empty(), "{at}: cells overflowing: {over:?}");
        // (b) Nothing wider than the window, folded or open.
        for key in ["pageWidth", "pageWidthOpen"] {
            assert!(
                l.num(key) <= width,
                "{at}: the page is {} px wide ({key}) in a {width} px window",
                l.num(key)
            );
        }
        // (c) The first chart within the first two screens.
        if let Some(top) = l.json["firstChart"].as_f64() {
            assert!(
                top <= 2.0 * height,
                "{at}: the first chart starts at {top} px, below two screens of {height} px \
                 (the page is {} px tall)",
                l.num("pageHeight")
            );
        }
        // At 1400 px and on a laptop every table fits the page (none cut
        // at the right edge); narrower, a wide one scrolls in its own box.
        if width >= 1280.0 {
            assert_eq!(
                l.num("scrollingTables"),
                0.0,
                "{at}: a table wider than the page"
            );
        }
        assert_eq!(l.num("backticks"), 0.0, "{at}: backticks shown as text");
        all.push(l);
    }
    all
}

/// The text between the first `open` and the next `close` after it.
fn between<'a>(hay: &'a str, open: &str, close: &str) -> &'a str {
    let start = hay
        .find(open)
        .unwrap_or_else(|| panic!("{open:?} not on the page"))
        + open.len();
    let len = hay[start..]
        .find(close)
        .unwrap_or_else(|| panic!("{close:?} not after {open:?}"));
    &hay[start..start + len]
}

/// Every `<figure>` element's content.
fn figures(dom: &str) -> Vec<&str> {
    dom.split("<figure>")
        .skip(1)
        .map(|f| &f[..f.find("</figure>").expect("figure closed")])
        .collect()
}

/// Bars in one SVG: filled rectangles drawn translucent (plotters writes a
/// bar as `<rect … opacity="0.85" …>`; the background and legend keys are
/// opaque).
fn bars(svg: &str) -> usize {
    svg.split("<rect")
        .skip(1)
        .filter(|r| {
            let tag = &r[..r.find('>').unwrap_or(r.len())];
            tag.contains("opacity=\"0.85\"")
        })
        .count()
}

/// Each chart: a heading, one `<svg>` with at least `min_bars` bars, or a
/// line saying why there is no chart. Returns the number of SVG charts.
fn check_charts(dom: &str, html: &str, min_bars: usize) -> usize {
    let mut svgs = 0;
    for f in figures(dom) {
        let h3 = between(f, "<h3", "</h3>");
        let title = &h3[h3.find('>').expect("h3 tag closed") + 1..];
        assert!(f.contains("<figcaption>"), "{title}: no caption");
        match f.matches("<svg").count() {
            0 => assert!(
                f.contains("<p class=\"missing\">No chart: "),
                "{title}: neither a chart nor why not:\n{f}"
            ),
            1 => {
                let svg = between(f, "<svg", "</svg>");
                assert!(svg.contains("role=\"img\""), "{title}: svg role");
                let n = bars(svg);
                assert!(n >= min_bars, "{title}: {n} bars, want ≥ {min_bars}");
                assert!(svg.contains("<text"), "{title}: no labels");
                svgs += 1;
            }
            n => panic!("{title}: {n} svgs in one figure"),
        }
    }
    // The browser kept every chart the renderer wrote.
    assert_eq!(svgs, html.matches("<svg").count(), "svgs lost in parsing");
    svgs
}

/// The embedded report parses back to `report`.
fn check_data(dom: &str, report: &Report) {
    let json = between(
        dom,
        &format!("<script type=\"application/json\" id=\"{HTML_DATA_ID}\">"),
        "</script>",
    );
    let back = Report::from_json(json).expect("embedded JSON parses");
    assert_eq!(&back, report, "embedded JSON is the report");
}

/// The host and method sections every page has.
fn check_host_and_method(dom: &str) {
    let host = between(dom, "<dl class=\"host\">", "</dl>");
    for want in [
        "<dt>CPU</dt><dd>Intel(R) Xeon(R) Test CPU @ 3.00GHz (GenuineIntel)</dd>",
        "<dt>Kernel</dt><dd>6.8.0-test</dd>",
        "<dt>TSC</dt><dd>3,000,000 kHz (measured 2,999,870 kHz)</dd>",
        "<dt>Peer VMM</dt><dd>qemu, -cpu host</dd>",
    ] {
        assert!(
            host.contains(want),
            "{want} missing in the host list:\n{host}"
        );
    }
    assert!(dom.contains("<summary>KVM capabilities (2)</summary>"));
    let method = between(dom, "<h2 id=\"method\">Method</h2>", "</p>");
    assert!(
        method.contains("RDTSC") && method.contains("5 times"),
        "{method}"
    );
    // The nested caveat, its note's markup shown as text.
    assert!(dom.contains("<strong>Nested virtualization.</strong>"));
    assert!(dom.contains("running under &lt;L0&gt; \"KVM\""));
}

/// `html` without its tags (a cell's `<span>`s, `<wbr>`s and `<code>`);
/// entities stay as they are.
fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        rest = &rest[open..];
        rest = &rest[rest.find('>').map_or(rest.len(), |c| c + 1)..];
    }
    out.push_str(rest);
    out
}

/// The body rows of the first `<table class="grid">` after `anchor`, each
/// as its cells' text.
fn table_rows(dom: &str, anchor: &str) -> Vec<Vec<String>> {
    let from = dom
        .find(anchor)
        .unwrap_or_else(|| panic!("{anchor:?} missing"));
    let body = between(&dom[from..], "<tbody>", "</tbody>");
    body.split("<tr>")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|cell| {
                    let text = &cell[cell.find('>').unwrap() + 1..];
                    strip_tags(&text[..text.find("</td>").unwrap()])
                })
                .collect()
        })
        .collect()
}

#[test]
fn all_page_in_browser() {
    let Some(b) = browser("all") else { return };
    let r = common::full_report();
    let (html, dom) = load(&b, &r, View::All);
    assert!(dom.contains("<title>trapline notification-path costs</title>"));
    assert!(dom.contains("<h1>trapline notification-path costs</h1>"));
    check_host_and_method(&dom);
    // One results row per scenario, in run order.
    let rows = table_rows(&dom, "<h2 id=\"results\">Results</h2>");
    let keys: Vec<String> = r.scenarios.iter().map(|s| s.key()).collect();
    let firsts: Vec<String> = rows.iter().map(|c| c[0].clone()).collect();
    assert_eq!(firsts, keys);
    let row = |k: &str| rows.iter().find(|c| c[0] == k).unwrap();
    assert_eq!(row("pio-user-out")[1..5], ["ok", "9,000", "8,900", "90.0"]);
    // trapline's own handling per exit and KVM's exits per iteration.
    assert_eq!(row("pio-user-out")[8..10], ["450", "1.00"]);
    // In-guest-timed scenarios have a median but no net.
    assert_eq!(row("eoi")[2..4], ["700", "–"]);
    assert_eq!(row("irqfd")[3], "–");
    // A reason spans the rest of its row, markup shown as text.
    let un = row("mmio-kernel-datamatch");
    assert_eq!(un.len(), 3);
    assert!(
        un[2].contains("\"datamatch\" &lt;needs&gt; it&lt;/script&gt;"),
        "{un:?}"
    );
    assert!(dom.contains("<td class=\"span\" colspan=\"10\">"));
    // The derived values as a table, each with its range and verdict.
    // Under its heading, or its fold's summary line when long.
    let derived = table_rows(&dom, "Derived values</");
    let d = |name: &str| derived.iter().find(|c| c[0] == name).unwrap().clone();
    assert_eq!(
        d("user-exit-premium")[1..3],
        ["6,000 cyc", "5,880..6,120 cyc"]
    );
    assert_eq!(
        d("vmm-rss-beyond-guest")[1..5],
        ["4.60 MiB", "", "≤ 2.00 MiB", "missed"]
    );
    // The charts come before the long tables, which are folded with a
    // summary line saying what they hold.
    let results = dom.find("<h2 id=\"results\">").expect("results heading");
    assert!(dom.find("<figure>").expect("a chart") < results);
    let summary = between(
        &dom[results..],
        "<details class=\"table\"><summary>",
        "</summary>",
    );
    assert_eq!(
        summary,
        format!(
            "<strong>The results table</strong>: {} rows (scenario, status, median cyc, net cyc, \
             ±MAD, min, max, ns, own cyc/exit, KVM exits/iter, exits/iter, noise)",
            r.scenarios.len()
        )
    );
    // Backtick spans are code.
    assert!(
        dom.contains("median over 5 <code>trapline run</code> processes"),
        "no <code> in the derived values' formulas"
    );
    // Passing checks are folded away.
    assert!(dom.contains("<details class=\"fold\"><summary>Checks ("));
    // The contents link to every heading.
    for id in ["host", "method", "results", "charts"] {
        assert!(
            dom.contains(&format!("<a href=\"#{id}\">")),
            "no link to {id}"
        );
        assert!(
            dom.contains(&format!("<h2 id=\"{id}\">")),
            "no heading {id}"
        );
    }
    // The headline first, then trapline's rows, their net cost and the
    // floor ladder, each in its own chart.
    assert_eq!(check_charts(&dom, &html, 1), 4);
    let figs = figures(&dom);
    assert!(figs[0].contains("dispatch-overhead"));
    let ours = r
        .scenarios
        .iter()
        .filter(|s| s.is_measured() && s.vmm == "trapline")
        .count();
    assert!(bars(figs[1]) >= ours, "a bar per scenario of trapline's");
    assert!(
        !figs[1].contains("raw-kvm+"),
        "the floor ladder is not among trapline's rows"
    );
    // Each repeat is a dot.
    assert!(figs[1].matches("<circle").count() >= ours * 5);
    assert!(figs[3].contains("The floor ladder"));
    check_data(&dom, &r);
}

#[test]
fn seeds_page_in_browser() {
    let Some(b) = browser("seeds") else { return };
    let r = common::full_report();
    let (html, dom) = load(&b, &r, View::Seeds);
    assert!(dom.contains("<title>This host beside the published seeds</title>"));
    check_host_and_method(&dom);
    // The overview lists the five seed views, then each has its section.
    let overview = table_rows(&dom, "<h2 id=\"overview\">Overview</h2>");
    let views: Vec<&str> = overview.iter().map(|c| c[1].as_str()).collect();
    assert_eq!(
        views,
        [
            "vmexit-arm",
            "paper",
            "doorbell",
            "pci-testdev",
            "pci-config"
        ]
    );
    for v in views {
        let anchor = format!("<section class=\"view\" id=\"view-{v}\">");
        assert!(dom.contains(&anchor), "no section for {v}");
        let rows = table_rows(&dom, &anchor);
        assert!(!rows.is_empty(), "{v}: empty table");
    }
    let testdev = table_rows(&dom, "id=\"view-pci-testdev\"");
    assert_eq!(testdev.len(), 8);
    assert_eq!(testdev[0][0], "mmio-no-eventfd:pci-mem");
    assert_eq!(testdev[0][1], "9,075");
    let svgs = check_charts(&dom, &html, 1);
    assert!(svgs >= 5, "only {svgs} charts on the seeds page");
    check_data(&dom, &r);
}

#[test]
fn vmm_page_in_browser() {
    let Some(b) = browser("vmm") else { return };
    let r = common::full_report();
    let (html, dom) = load(&b, &r, View::Vmm);
    assert!(dom.contains("<title>trapline's own footprint and cost per exit</title>"));
    check_host_and_method(&dom);
    let fp = table_rows(&dom, "<h2 id=\"results\">Results</h2>");
    assert_eq!(fp.len(), 2);
    assert_eq!(
        fp[0][1..],
        ["2.40 CPU-ms", "≤ 1 CPU-ms", "≤ 8 CPU-ms", "missed"]
    );
    assert_eq!(fp[1][1..], ["4.60 MiB", "≤ 2 MiB", "≤ 5 MiB", "missed"]);
    let cost = table_rows(&dom, "<h3>Cost per exit</h3>");
    assert_eq!(cost.len(), 10);
    assert_eq!(cost[0][..2], ["pio-user-out", "9,000 cyc"]);
    assert_eq!(cost[6][..2], ["premium-ratio-vs-raw-kvm", "3.00x"]);
    // trapline's own handling per exit, measured directly; no unprofiled
    // row in this report, so no overhead.
    assert_eq!(cost[7][..2], ["handling-per-user-exit", "450 cyc"]);
    assert_eq!(cost[8][..2], ["stat-overhead", "–"]);
    assert_eq!(check_charts(&dom, &html, 2), 2);
    check_data(&dom, &r);
}

/// Widths of the bars in one SVG, in pixels.
fn bar_widths(svg: &str) -> Vec<f64> {
    svg.split("<rect")
        .skip(1)
        .map(|r| &r[..r.find('>').unwrap_or(r.len())])
        .filter(|tag| tag.contains("opacity=\"0.85\""))
        .map(|tag| {
            let w = between(tag, "width=\"", "\"");
            w.parse::<f64>().expect("a bar's width")
        })
        .collect()
}

/// A noisy run: one repeat of `pio-user-out` took 80 times the others.
/// Its charts stay readable: the axis follows the medians, not that
/// repeat, so the longest bar still spans a good part of the plot; the
/// clipped repeat is marked, and the page says the run was noisy.
#[test]
fn a_noisy_run_still_has_readable_charts() {
    let Some(b) = browser("noisy") else { return };
    let mut r = common::full_report();
    let pio = r
        .scenarios
        .iter_mut()
        .find(|s| s.vmm == "trapline" && s.name == "pio-user-out")
        .unwrap();
    pio.samples[4].cycles = pio.samples[4].iterations * 720_000;
    r.finish();
    r.judge_goals();
    let (html, dom) = load(&b, &r, View::All);
    check_charts(&dom, &html, 1);
    let noise = between(&dom, "<div class=\"noise\">", "</div>");
    assert!(
        noise.contains("<code>pio-user-out</code>: outliers: 1 of 5 repeats"),
        "{noise}"
    );
    assert!(noise.contains("What to do: "), "{noise}");
    let figs = figures(&dom);
    let cost = figs
        .iter()
        .find(|f| f.contains("Cost per operation"))
        .expect("the cost chart");
    let svg = between(cost, "<svg", "</svg>");
    let width: f64 = between(svg, "width=\"", "\"").parse().unwrap();
    let widths = bar_widths(svg);
    let longest = widths.iter().copied().fold(0.0, f64::max);
    // One slow repeat at 720,000 cycles against medians of at most 9,000:
    // an axis set by it would leave the longest bar 1 % of the plot.
    assert!(
        longest > 0.4 * width,
        "the longest bar is {longest} px of {width}: squeezed by the outlier"
    );
    let median_bars: Vec<f64> = widths.iter().copied().filter(|w| *w > 1.0).collect();
    let middle = median_bars[median_bars.len() / 2];
    assert!(middle > 0.01 * width, "a typical bar is {middle} px");
    // The clipped repeat is marked with its value (720,000 cycles at 3 GHz).
    assert!(svg.contains("▸ 240 µs"), "no clip marker with the value");
    // The table's noise column says which kind.
    let rows = table_rows(&dom, "<h2 id=\"results\">Results</h2>");
    let pio = rows.iter().find(|c| c[0] == "pio-user-out").unwrap();
    assert_eq!(pio.last().map(String::as_str), Some("outliers"));
}
