//! The bench's outputs: the child's TSV report parsed back, the machine
//! description, and the Markdown and JSON renderings.

use super::{measure::Stat, ModelResult, Status, ToolRow, COMPILE, FOLD};
use serde_json::{json, Value};
use std::fmt::Write as _;

/// What one child compile reported (see `child.rs`).
#[derive(Clone, Debug, Default)]
pub struct ChildReport {
    pub stages: Vec<(String, f64)>,
    pub passes: Vec<(String, String, f64)>,
    pub live: Vec<(String, u64)>,
    pub nodes_before: (u64, u64),
    pub nodes_after: Option<(u64, u64)>,
    pub ir_bytes: Vec<(String, u64)>,
    pub llvm_ir_bytes: Option<u64>,
    pub sidecar_bytes: Option<u64>,
    pub inputs: usize,
    pub outputs: usize,
    pub error: Option<String>,
    /// No report at all: the child died (panic, signal, OOM kill).
    pub crashed: bool,
}

impl ChildReport {
    pub fn parse(text: &str) -> ChildReport {
        let mut r = ChildReport::default();
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            let num = |i: usize| f.get(i).and_then(|s| s.parse::<f64>().ok());
            let int = |i: usize| f.get(i).and_then(|s| s.parse::<u64>().ok());
            let s = |i: usize| f.get(i).map_or(String::new(), |s| s.to_string());
            match f.first().copied() {
                Some("stage") => r.stages.push((s(1), num(2).unwrap_or(f64::NAN))),
                Some("pass") => r.passes.push((s(1), s(2), num(3).unwrap_or(f64::NAN))),
                Some("live") => r.live.push((s(1), int(2).unwrap_or(0))),
                Some("nodes_before") => {
                    r.nodes_before = (int(1).unwrap_or(0), int(2).unwrap_or(0));
                }
                Some("nodes_after") => {
                    r.nodes_after = Some((int(1).unwrap_or(0), int(2).unwrap_or(0)))
                }
                Some("ir_bytes") => r.ir_bytes.push((s(1), int(2).unwrap_or(0))),
                Some("llvm_ir_bytes") => r.llvm_ir_bytes = int(1),
                Some("sidecar_bytes") => r.sidecar_bytes = int(1),
                Some("io") => {
                    r.inputs = int(1).unwrap_or(0) as usize;
                    r.outputs = int(2).unwrap_or(0) as usize;
                }
                Some("error") => r.error = Some(s(1)),
                _ => {}
            }
        }
        r
    }
}

/// Where the figures were measured.
pub struct Machine {
    pub cpus: usize,
    pub mem_gib: f64,
    pub os: String,
    /// UTC date, YYYY-MM-DD.
    pub date: String,
    /// 1-minute load average when the bench started (other work skews
    /// the figures; this says how much there was).
    pub load: f64,
    /// Peak RSS of the bench process itself (KiB). Linux starts a spawned
    /// child's ru_maxrss at its parent's peak, so without the probe no
    /// child figure below this is measurable.
    pub floor_kib: u64,
    /// The inference runs had one core kept busy (`--busy-core`).
    pub busy_core: bool,
}

impl Machine {
    pub fn detect() -> Machine {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mem_kib = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|s| {
                let line = s.lines().find(|l| l.starts_with("MemTotal:"))?.to_string();
                line.split_whitespace().nth(1)?.parse::<f64>().ok()
            })
            .unwrap_or(0.0);
        let os = std::fs::read_to_string("/etc/os-release")
            .ok()
            .and_then(|s| {
                let l = s
                    .lines()
                    .find(|l| l.starts_with("PRETTY_NAME="))?
                    .to_string();
                Some(
                    l.trim_start_matches("PRETTY_NAME=")
                        .trim_matches('"')
                        .to_string(),
                )
            })
            .unwrap_or_else(|| std::env::consts::OS.to_string());
        let days = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() / 86_400) as i64;
        let load = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse().ok())
            .unwrap_or(f64::NAN);
        Machine {
            load,
            floor_kib: 0,
            busy_core: false,
            cpus,
            mem_gib: mem_kib / (1024.0 * 1024.0),
            os,
            date: civil_date(days),
        }
    }

    pub fn describe(&self) -> String {
        let busy = if self.busy_core {
            "; inference timed with one core kept busy by another process"
        } else {
            ""
        };
        format!(
            "{} cores, {:.0} GiB, {}, {}, load average {:.1} at start{busy}",
            self.cpus, self.mem_gib, self.os, self.date, self.load
        )
    }
}

/// This process's peak RSS in KiB (VmHWM), 0 if unknown.
pub fn own_peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let l = s.lines().find(|l| l.starts_with("VmHWM:"))?.to_string();
            l.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

/// Days since 1970-01-01 to "YYYY-MM-DD" (Hinnant's civil_from_days).
fn civil_date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn secs(s: f64) -> String {
    if s >= 10.0 {
        format!("{s:.1} s")
    } else if s >= 0.1 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{:.0} µs", s * 1e6)
    }
}

fn mib(kib: f64) -> String {
    format!("{:.0} MiB", kib / 1024.0)
}

pub fn bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{b} B")
    }
}

fn range(s: &Stat, f: fn(f64) -> String) -> String {
    if s.n > 1 {
        format!("{} ({}–{})", f(s.median), f(s.min), f(s.max))
    } else {
        f(s.median)
    }
}

fn status_text(row: &ToolRow) -> Option<String> {
    match &row.status {
        Status::Ok => None,
        Status::Missing(w) => Some(format!("missing: {w}")),
        Status::Failed(w) => Some(format!("failed: {w}")),
        Status::Skipped(w) => Some(format!("skipped: {w}")),
    }
}

/// Markdown: one table of whole-process figures per model, then onnxc's
/// compile in detail.
pub fn markdown(results: &[ModelResult], machine: &Machine, repeat: usize, runs: usize) -> String {
    let mut s = String::new();
    let own = results.iter().flat_map(|r| &r.rows).all(|r| r.rss_own);
    let rss_note = if own {
        "Peak RSS: each process's own VmHWM at exit (LD_PRELOAD probe); peak heap: bytes in \
         use through malloc (the compiled model's own allocations)."
            .to_string()
    } else {
        format!(
            "Peak RSS from ru_maxrss (no probe: clang missing): below {} it is not measurable \
             (the bench process's own peak).",
            mib(machine.floor_kib as f64)
        )
    };
    let _ = writeln!(
        s,
        "Machine: {}. Each figure: median (min–max) of {repeat} runs; inference: {runs} runs. \
         {rss_note}\n",
        machine.describe(),
    );
    s += &super::speed::markdown(results);
    for r in results {
        let _ = writeln!(
            s,
            "### {}\n\n{} ({}, {} ONNX nodes)\n",
            r.name,
            r.file.display(),
            bytes(r.file_bytes),
            r.onnx_nodes
        );
        let base = r.row(FOLD).filter(|f| f.status == Status::Ok);
        s += "| tool | wall time | peak RSS | peak heap | work in process | ONNX nodes after | time vs onnxc fold | memory vs onnxc fold |\n";
        s += "|---|---|---|---|---|---|---|---|\n";
        for row in &r.rows {
            if let Some(text) = status_text(row) {
                let _ = writeln!(s, "| {} | {text} | | | | | | |", row.tool);
                continue;
            }
            let heap = match (&row.peak_heap_bytes, &row.allocations) {
                (Some(h), Some(a)) => {
                    format!("{}; {:.0} allocs", range(h, |b| bytes(b as u64)), a.median)
                }
                _ => String::new(),
            };
            let inner = row.inner_s.map_or(String::new(), |i| range(&i, secs));
            let nodes = row
                .onnx_nodes_after
                .map_or(String::new(), |n| n.to_string());
            let ratio = |a: f64, b: f64| {
                if b > 0.0 {
                    format!("{:.2}×", a / b)
                } else {
                    String::new()
                }
            };
            let (rt, rm) = match base {
                Some(b)
                    if row.tool != FOLD
                        && !row.tool.starts_with("clang")
                        && !row.tool.contains("inference") =>
                {
                    (
                        ratio(row.wall_s.median, b.wall_s.median),
                        ratio(row.peak_rss_kib.median, b.peak_rss_kib.median),
                    )
                }
                _ => (String::new(), String::new()),
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {heap} | {inner} | {nodes} | {rt} | {rm} |",
                row.tool,
                range(&row.wall_s, secs),
                range(&row.peak_rss_kib, mib)
            );
        }
        s.push('\n');
        if let Some(a) = &r.accuracy {
            let verdict = match &a.status {
                Status::Ok => "matches".to_string(),
                Status::Missing(w) => format!("not checked ({w})"),
                Status::Failed(w) | Status::Skipped(w) => format!("MISMATCH: {w}"),
            };
            let _ = writeln!(
                s,
                "Compiled model vs onnxruntime: {verdict} (max |Δ| {:.2e}, {:.2e} of the output scale; tolerance {:.0e}).\n",
                a.max_abs,
                a.rel_to_scale,
                super::check::TOLERANCE
            );
        }
        if let Some(d) = &r.detail {
            detail_md(&mut s, r, d);
        }
    }
    s
}

fn detail_md(s: &mut String, r: &ModelResult, d: &super::CompileDetail) {
    let after = d
        .nodes_after
        .map_or("n/a".to_string(), |(n, c)| format!("{n} ({c} constants)"));
    let _ = writeln!(
        s,
        "{COMPILE}: main-graph ops {} ({} constants) after import, {after} after constant propagation.",
        d.nodes_before.0, d.nodes_before.1
    );
    if let Some(cp) = d.stage("constprop") {
        let _ = writeln!(s, "Constant propagation: {}.", range(&cp, secs));
    }
    if !d.ir_bytes.is_empty() || d.llvm_ir_bytes.is_some() {
        let sizes: Vec<String> = d
            .ir_bytes
            .iter()
            .map(|(st, b)| format!("{st} {}", bytes(*b)))
            .chain(d.llvm_ir_bytes.map(|b| format!("LLVM IR {}", bytes(b))))
            .chain(
                d.sidecar_bytes
                    .map(|b| format!("weights sidecar (.incbin) {}", bytes(b))),
            )
            .collect();
        let _ = writeln!(s, "IR text sizes: {}.", sizes.join(", "));
    }
    let _ = writeln!(
        s,
        "\n<details><summary>{}: per-pass wall time and live constant bytes</summary>\n",
        r.name
    );
    s.push_str("| stage | pass | wall time | live constant bytes after |\n|---|---|---|---|\n");
    if let Some(imp) = d.stage("import") {
        let live = d.live_bytes.first().map_or(String::new(), |l| bytes(l.1));
        let _ = writeln!(s, "| import | (import) | {} | {live} |", range(&imp, secs));
    }
    // Live bytes are reported per pass in run order, after the import entry.
    for (i, (stage, pass, t)) in d.passes.iter().enumerate() {
        let live = d
            .live_bytes
            .get(i + 1)
            .map_or(String::new(), |l| bytes(l.1));
        let _ = writeln!(s, "| {stage} | {pass} | {} | {live} |", range(t, secs));
    }
    if let Some(e) = d.stage("emit-llvm") {
        let _ = writeln!(s, "| emit | (LLVM IR) | {} | |", range(&e, secs));
    }
    s.push_str("\n</details>\n\n");
}

fn status_pair(st: &Status) -> (&'static str, &str) {
    match st {
        Status::Ok => ("ok", ""),
        Status::Missing(m) => ("missing", m.as_str()),
        Status::Failed(m) => ("failed", m.as_str()),
        Status::Skipped(m) => ("skipped", m.as_str()),
    }
}

fn stat_json(s: &Stat) -> Value {
    // Non-finite figures (a failed run) become null.
    json!({"median": s.median, "min": s.min, "max": s.max, "n": s.n})
}

/// All figures as JSON: the machine, the geomeans against onnxruntime, and
/// per model its tools' rows, accuracy and compile detail.
pub fn json(results: &[ModelResult], machine: &Machine, repeat: usize, runs: usize) -> String {
    let models: Vec<Value> = results.iter().map(model_json).collect();
    let report = json!({
        "tool": "onnxc bench",
        "version": env!("CARGO_PKG_VERSION"),
        "machine": {
            "cpus": machine.cpus,
            "mem_gib": (machine.mem_gib * 10.0).round() / 10.0,
            "os": machine.os,
            "date": machine.date,
            "load_avg": machine.load,
            "rss_floor_kib": machine.floor_kib,
            "busy_core": machine.busy_core,
        },
        "repeat": repeat,
        "inference_runs": runs,
        "inference_vs_onnxruntime": super::speed::json(results),
        "models": models,
    });
    let mut text = serde_json::to_string_pretty(&report).unwrap_or_default();
    text.push('\n');
    text
}

fn model_json(r: &ModelResult) -> Value {
    let tools: Vec<Value> = r
        .rows
        .iter()
        .map(|row| {
            let (status, msg) = status_pair(&row.status);
            json!({
                "tool": row.tool,
                "status": status,
                "message": msg,
                "wall_s": stat_json(&row.wall_s),
                "peak_rss_kib": stat_json(&row.peak_rss_kib),
                "rss_own": row.rss_own,
                "peak_heap_bytes": row.peak_heap_bytes.as_ref().map(stat_json),
                "allocations": row.allocations.as_ref().map(stat_json),
                "inner_s": row.inner_s.as_ref().map(stat_json),
                "onnx_nodes_after": row.onnx_nodes_after,
            })
        })
        .collect();
    let accuracy = r.accuracy.as_ref().map(|a| {
        let (status, msg) = status_pair(&a.status);
        json!({"status": status, "message": msg, "max_abs": a.max_abs, "rel_to_scale": a.rel_to_scale})
    });
    json!({
        "name": r.name,
        "file": r.file.to_string_lossy(),
        "file_bytes": r.file_bytes,
        "onnx_nodes": r.onnx_nodes,
        "tools": tools,
        "accuracy": accuracy,
        "compile": r.detail.as_ref().map(detail_json),
    })
}

fn detail_json(d: &super::CompileDetail) -> Value {
    let stages: Vec<Value> = d
        .stages
        .iter()
        .map(|(n, t)| json!({"stage": n, "wall_s": stat_json(t)}))
        .collect();
    let passes: Vec<Value> = d
        .passes
        .iter()
        .map(|(st, p, t)| json!({"stage": st, "pass": p, "wall_s": stat_json(t)}))
        .collect();
    let after = |list: &[(String, u64)]| -> Vec<Value> {
        list.iter()
            .map(|(p, b)| json!({"after": p, "bytes": b}))
            .collect()
    };
    let nodes = |n: (u64, u64)| json!({"ops": n.0, "constants": n.1});
    json!({
        "constprop_s": d.stage("constprop").as_ref().map(stat_json),
        "nodes_before_fold": nodes(d.nodes_before),
        "nodes_after_fold": d.nodes_after.map(nodes),
        "llvm_ir_bytes": d.llvm_ir_bytes,
        "sidecar_bytes": d.sidecar_bytes,
        "ir_bytes": after(&d.ir_bytes),
        "stages": stages,
        "passes": passes,
        "live_constant_bytes": after(&d.live_bytes),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_child_report() {
        let r = ChildReport::parse(
            "stage\timport\t0.5\nnodes_before\t10\t4\npass\tconstprop\tfold\t0.25\nlive\tfold\t64\nio\t1\t2\nerror\tboom\n",
        );
        assert_eq!(r.stages, vec![("import".to_string(), 0.5)]);
        assert_eq!(r.nodes_before, (10, 4));
        assert_eq!(r.passes[0].2, 0.25);
        assert_eq!(r.live, vec![("fold".to_string(), 64)]);
        assert_eq!((r.inputs, r.outputs), (1, 2));
        assert_eq!(r.error.as_deref(), Some("boom"));
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(19_723), "2024-01-01");
    }

    #[test]
    fn failed_figures_are_null() {
        let s = Stat {
            median: f64::NAN,
            min: 1.0,
            max: f64::INFINITY,
            n: 2,
        };
        assert_eq!(
            stat_json(&s),
            json!({"median": null, "min": 1.0, "max": null, "n": 2})
        );
    }
}
