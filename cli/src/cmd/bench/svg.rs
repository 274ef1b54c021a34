//! A self-contained SVG bar chart: per model, one bar per tool for wall
//! time and for peak RSS (median, with a min–max whisker), written as text.

use super::report::Machine;
use super::{ModelResult, Status, ToolRow, COMPILE, FOLD, PEERS};
use std::fmt::Write as _;

const TOOLS: [(&str, &str); 4] = [
    (FOLD, "#1f77b4"),
    (COMPILE, "#6baed6"),
    (PEERS[0], "#ff7f0e"),
    (PEERS[1], "#2ca02c"),
];
const WIDTH: f64 = 960.0;
const LABEL_W: f64 = 130.0;
const PANEL_GAP: f64 = 70.0;
const PANEL_W: f64 = (WIDTH - LABEL_W - PANEL_GAP - 60.0) / 2.0;
const BAR_H: f64 = 14.0;
const BAR_GAP: f64 = 4.0;
const GROUP_GAP: f64 = 16.0;
const TOP: f64 = 100.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A "nice" tick step (1, 2, 2.5 or 5 × 10^k) for at most five steps up
/// to `x`; the axis ends at the first tick at or above `x`.
fn nice_step(x: f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return 0.2;
    }
    let p = 10f64.powf((x / 5.0).log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|&step| 5.0 * step >= x)
        .unwrap_or(10.0 * p)
}

fn axis_max(x: f64) -> f64 {
    let step = nice_step(x);
    (x / step).ceil().max(1.0) * step
}

/// A tick label with as many decimals as the step needs (0.25 → 2).
fn fmt_tick(v: f64, step: f64) -> String {
    let mut decimals = 0;
    while decimals < 6 && (step * 10f64.powi(decimals)).fract().abs() > 1e-9 {
        decimals += 1;
    }
    format!("{v:.*}", decimals as usize)
}

fn fmt_val(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else if v >= 1.0 || v == 0.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

struct Panel {
    x0: f64,
    title: &'static str,
    /// The x axis's label.
    axis: &'static str,
    unit: &'static str,
    max: f64,
    step: f64,
    pick: fn(&ToolRow) -> (f64, f64, f64),
}

pub fn chart(results: &[ModelResult], machine: &Machine) -> String {
    let time = |r: &ToolRow| (r.wall_s.median, r.wall_s.min, r.wall_s.max);
    let mem = |r: &ToolRow| {
        let k = 1024.0;
        (
            r.peak_rss_kib.median / k,
            r.peak_rss_kib.min / k,
            r.peak_rss_kib.max / k,
        )
    };
    let rows = |m: &ModelResult| -> Vec<(&'static str, &'static str, Option<ToolRow>)> {
        TOOLS
            .iter()
            .filter_map(|&(tool, color)| m.row(tool).map(|r| (tool, color, Some(r.clone()))))
            .collect()
    };
    let max_of = |f: fn(&ToolRow) -> (f64, f64, f64)| {
        results
            .iter()
            .flat_map(|m| rows(m).into_iter().filter_map(|r| r.2))
            .filter(|r| r.status == Status::Ok)
            .map(|r| f(&r).2)
            .fold(0.0, f64::max)
    };
    let panels = [
        Panel {
            x0: LABEL_W,
            title: "Wall time (whole process)",
            axis: "seconds (bar: median, whisker: min–max)",
            unit: "s",
            max: axis_max(max_of(time)),
            step: nice_step(max_of(time)),
            pick: time,
        },
        Panel {
            x0: LABEL_W + PANEL_W + PANEL_GAP,
            title: "Peak RSS (the process's own VmHWM)",
            axis: "MiB (bar: median, whisker: min–max)",
            unit: "MiB",
            max: axis_max(max_of(mem)),
            step: nice_step(max_of(mem)),
            pick: mem,
        },
    ];
    // Runs of the charted tools (inference has its own count).
    let runs = results
        .iter()
        .flat_map(|m| rows(m).into_iter().filter_map(|r| r.2))
        .map(|r| r.wall_s.n)
        .max()
        .unwrap_or(0);
    let group_h = |m: &ModelResult| rows(m).len() as f64 * (BAR_H + BAR_GAP) + GROUP_GAP;
    let body: f64 = results.iter().map(group_h).sum();
    let height = TOP + body + 56.0;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="10" y="20" font-size="15" font-weight="bold">onnxc bench: onnxc vs onnxruntime / onnx-simplifier (lower is better)</text>"#
    );
    let _ = writeln!(
        s,
        r##"<text x="10" y="36" fill="#555">{}. Median of {runs} runs per tool.</text><text x="10" y="50" fill="#555">onnxc fold = import + constant propagation + ONNX export (the peers' job); onnxc compile = ONNX to LLVM IR; peers: one Python process each.</text>"##,
        esc(&machine.describe()),
    );
    // Legend.
    for (i, (tool, color)) in TOOLS.iter().enumerate() {
        let x = 10.0 + i as f64 * 150.0;
        let _ = writeln!(
            s,
            r#"<rect x="{x}" y="60" width="12" height="12" fill="{color}"/><text x="{}" y="70">{}</text>"#,
            x + 16.0,
            esc(tool)
        );
    }
    for p in &panels {
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" font-weight="bold">{}</text>"#,
            p.x0,
            TOP - 12.0,
            esc(p.title)
        );
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" text-anchor="middle" fill="#333">{}</text>"##,
            p.x0 + PANEL_W / 2.0,
            TOP + body + 32.0,
            esc(p.axis)
        );
        let ticks = (p.max / p.step).round() as u32;
        for t in 0..=ticks {
            let v = p.step * f64::from(t);
            let x = p.x0 + PANEL_W * v / p.max;
            let _ = writeln!(
                s,
                r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#ddd"/><text x="{x}" y="{}" text-anchor="middle" fill="#555">{}</text>"##,
                TOP - 4.0,
                TOP + body,
                TOP + body + 14.0,
                fmt_tick(v, p.step)
            );
        }
    }
    let mut y = TOP;
    for m in results {
        let rs = rows(m);
        let h = group_h(m) - GROUP_GAP;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end" font-weight="bold">{}</text>"#,
            LABEL_W - 8.0,
            y + h / 2.0 + 4.0,
            esc(&m.name)
        );
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" text-anchor="end" fill="#555">{} file</text>"##,
            LABEL_W - 8.0,
            y + h / 2.0 + 18.0,
            super::report::bytes(m.file_bytes)
        );
        for (tool, color, row) in rs {
            let Some(row) = row else { continue };
            for p in &panels {
                bar(&mut s, p, y, tool, color, &row);
            }
            y += BAR_H + BAR_GAP;
        }
        y += GROUP_GAP;
    }
    s.push_str("</svg>\n");
    s
}

fn bar(s: &mut String, p: &Panel, y: f64, tool: &str, color: &str, row: &ToolRow) {
    if row.status != Status::Ok {
        let why = match &row.status {
            Status::Missing(_) => "missing",
            Status::Failed(_) => "failed",
            _ => "skipped",
        };
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" fill="#999" font-style="italic">{} {why}</text>"##,
            p.x0 + 4.0,
            y + BAR_H - 3.0,
            esc(tool)
        );
        return;
    }
    let (med, lo, hi) = (p.pick)(row);
    let scale = |v: f64| p.x0 + PANEL_W * (v / p.max).clamp(0.0, 1.0);
    let w = scale(med) - p.x0;
    let _ = writeln!(
        s,
        r#"<rect x="{}" y="{y}" width="{w:.1}" height="{BAR_H}" fill="{color}"><title>{}: {} {}</title></rect>"#,
        p.x0,
        esc(tool),
        fmt_val(med),
        p.unit
    );
    let cy = y + BAR_H / 2.0;
    let _ = writeln!(
        s,
        r##"<line x1="{:.1}" y1="{cy}" x2="{:.1}" y2="{cy}" stroke="#333"/>"##,
        scale(lo),
        scale(hi)
    );
    let _ = writeln!(
        s,
        r##"<text x="{:.1}" y="{}" fill="#222">{} {}</text>"##,
        scale(hi.max(med)) + 4.0,
        y + BAR_H - 3.0,
        fmt_val(med),
        p.unit
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_axis() {
        assert_eq!((axis_max(0.0), nice_step(0.0)), (0.2, 0.2));
        assert_eq!((axis_max(3.2), nice_step(3.2)), (4.0, 1.0));
        assert_eq!((axis_max(21.8), nice_step(21.8)), (25.0, 5.0));
        assert_eq!((axis_max(141.0), nice_step(141.0)), (150.0, 50.0));
        assert_eq!((axis_max(1621.0), nice_step(1621.0)), (2000.0, 500.0));
        assert_eq!((axis_max(1.0), nice_step(1.0)), (1.0, 0.2));
        assert_eq!(fmt_tick(0.5, 0.5), "0.5");
        assert_eq!(fmt_tick(0.75, 0.25), "0.75");
        assert_eq!(fmt_tick(150.0, 50.0), "150");
    }
}
