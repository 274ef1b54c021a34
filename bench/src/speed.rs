//! Inference time per call next to onnxruntime's on the same inputs, at
//! one thread and at each side's default thread count: the per-model
//! ratios and their geometric means, for the Markdown and JSON reports.

use super::{ModelResult, Status, INFER, INFER_1T, ORT_INFER, ORT_INFER_1T};
use std::fmt::Write as _;

/// (label, onnxc's row, onnxruntime's row) of each comparison.
pub const PAIRS: [(&str, &str, &str); 2] = [
    ("1 thread", INFER_1T, ORT_INFER_1T),
    ("default threads", INFER, ORT_INFER),
];

/// Median time per call of `tool` on `r`, if it ran.
pub fn per_call(r: &ModelResult, tool: &str) -> Option<f64> {
    let row = r.row(tool).filter(|row| row.status == Status::Ok)?;
    row.inner_s.map(|s| s.median).filter(|&t| t > 0.0)
}

/// onnxc / onnxruntime per call for one pair.
pub fn ratio(r: &ModelResult, ours: &str, theirs: &str) -> Option<f64> {
    Some(per_call(r, ours)? / per_call(r, theirs)?)
}

/// Geometric mean of the ratios the models have, and how many there are.
pub fn geomean(results: &[ModelResult], ours: &str, theirs: &str) -> Option<(f64, usize)> {
    let logs: Vec<f64> = results
        .iter()
        .filter_map(|r| ratio(r, ours, theirs))
        .map(f64::ln)
        .collect();
    (!logs.is_empty()).then(|| {
        let n = logs.len();
        ((logs.iter().sum::<f64>() / n as f64).exp(), n)
    })
}

fn ms(t: Option<f64>) -> String {
    t.map_or("–".to_string(), |t| format!("{:.3} ms", t * 1e3))
}

fn times(t: Option<f64>) -> String {
    t.map_or("–".to_string(), |x| format!("{x:.2}×"))
}

/// The Markdown table: one row per model that ran, then the geomeans.
pub fn markdown(results: &[ModelResult]) -> String {
    let ran: Vec<&ModelResult> = results
        .iter()
        .filter(|r| per_call(r, INFER).is_some())
        .collect();
    if ran.is_empty() {
        return String::new();
    }
    let mut s = String::from("### Inference vs onnxruntime (median time per call)\n\n");
    s += "| model | onnxc, 1 thread | onnxruntime, 1 thread | ratio | onnxc | onnxruntime | ratio |\n";
    s += "|---|---|---|---|---|---|---|\n";
    for r in ran {
        let _ = write!(s, "| {} |", r.name);
        for (_, ours, theirs) in PAIRS {
            let _ = write!(
                s,
                " {} | {} | {} |",
                ms(per_call(r, ours)),
                ms(per_call(r, theirs)),
                times(ratio(r, ours, theirs))
            );
        }
        s.push('\n');
    }
    s += "| **geomean** |";
    for (_, ours, theirs) in PAIRS {
        let g = geomean(results, ours, theirs);
        let _ = write!(s, " | | {} |", times(g.map(|g| g.0)));
    }
    s += "\n\nRatio: onnxc / onnxruntime (below 1: onnxc is faster). Default threads: \
          onnxc's compiled count (`--threads`, all cores by default), onnxruntime's \
          intra-op default; onnxruntime runs with every graph optimization.\n\n";
    s
}

/// The geomeans as a JSON object, keyed by the pair's label.
pub fn json(results: &[ModelResult]) -> serde_json::Value {
    let pairs = PAIRS.iter().map(|(label, ours, theirs)| {
        let (g, n) = geomean(results, ours, theirs).map_or((None, 0), |(g, n)| (Some(g), n));
        let g = g.map(|g| (g * 1e4).round() / 1e4);
        (
            label.to_string(),
            serde_json::json!({"geomean_ratio": g, "models": n}),
        )
    });
    serde_json::Value::Object(pairs.collect())
}
