//! A self-contained SVG bar chart, written as text: per model, one bar per
//! tool for wall time and for peak RSS, then (when the model ran) one per
//! inference configuration for the time per call (median, with a min–max
//! whisker).

use super::report::Machine;
use super::{
    ModelResult, Status, ToolRow, COMPILE, FOLD, INFER, INFER_1T, ORT_INFER, ORT_INFER_1T, PEERS,
};
use std::fmt::Write as _;

const TOOLS: [(&str, &str); 4] = [
    (FOLD, "#1f77b4"),
    (COMPILE, "#6baed6"),
    (PEERS[0], "#ff7f0e"),
    (PEERS[1], "#2ca02c"),
];
const INFERENCE: [(&str, &str); 4] = [
    (INFER, "#6a3d9a"),
    (INFER_1T, "#cab2d6"),
    (ORT_INFER, "#d95f02"),
    (ORT_INFER_1T, "#fdbf6f"),
];
const WIDTH: f64 = 960.0;
const LABEL_W: f64 = 130.0;
const PANEL_GAP: f64 = 70.0;
const BAR_H: f64 = 14.0;
const BAR_GAP: f64 = 4.0;
const GROUP_GAP: f64 = 16.0;
const TOP: f64 = 100.0;
const SECTION_GAP: f64 = 56.0;

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
    width: f64,
    title: &'static str,
    /// The x axis's label.
    axis: &'static str,
    unit: &'static str,
    max: f64,
    step: f64,
    pick: Pick,
}

/// Bars of `tools` on `panels`, one group of rows per model.
struct Section {
    tools: &'static [(&'static str, &'static str)],
    panels: Vec<Panel>,
}

type Pick = fn(&ToolRow) -> (f64, f64, f64);

fn rows_of<'a>(
    m: &'a ModelResult,
    tools: &[(&'static str, &'static str)],
) -> Vec<(&'static str, &'static str, &'a ToolRow)> {
    tools
        .iter()
        .filter_map(|&(tool, color)| m.row(tool).map(|r| (tool, color, r)))
        .collect()
}

fn group_h(m: &ModelResult, tools: &[(&'static str, &'static str)]) -> f64 {
    rows_of(m, tools).len() as f64 * (BAR_H + BAR_GAP) + GROUP_GAP
}

impl Section {
    fn new(
        results: &[ModelResult],
        tools: &'static [(&'static str, &'static str)],
        specs: &[(&'static str, &'static str, &'static str, Pick)],
    ) -> Section {
        let width =
            (WIDTH - LABEL_W - 60.0 - PANEL_GAP * (specs.len() - 1) as f64) / specs.len() as f64;
        let panels = specs
            .iter()
            .enumerate()
            .map(|(i, &(title, axis, unit, pick))| {
                let top = results
                    .iter()
                    .flat_map(|m| rows_of(m, tools))
                    .filter(|r| r.2.status == Status::Ok)
                    .map(|r| pick(r.2).2)
                    .fold(0.0, f64::max);
                Panel {
                    x0: LABEL_W + i as f64 * (width + PANEL_GAP),
                    width,
                    title,
                    axis,
                    unit,
                    max: axis_max(top),
                    step: nice_step(top),
                    pick,
                }
            })
            .collect();
        Section { tools, panels }
    }

    fn body(&self, results: &[ModelResult]) -> f64 {
        results.iter().map(|m| group_h(m, self.tools)).sum()
    }

    /// Draws the section from `top`; returns where the next one starts.
    fn draw(&self, s: &mut String, results: &[ModelResult], top: f64) -> f64 {
        let body = self.body(results);
        for p in &self.panels {
            p.axes(s, top, body);
        }
        let mut y = top;
        for m in results {
            let rs = rows_of(m, self.tools);
            let h = group_h(m, self.tools) - GROUP_GAP;
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
                for p in &self.panels {
                    bar(s, p, y, tool, color, row);
                }
                y += BAR_H + BAR_GAP;
            }
            y += GROUP_GAP;
        }
        top + body + SECTION_GAP
    }
}

impl Panel {
    /// Title, axis label and ticks around a body of height `body`.
    fn axes(&self, s: &mut String, top: f64, body: f64) {
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" font-weight="bold">{}</text>"#,
            self.x0,
            top - 12.0,
            esc(self.title)
        );
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" text-anchor="middle" fill="#333">{}</text>"##,
            self.x0 + self.width / 2.0,
            top + body + 32.0,
            esc(self.axis)
        );
        let ticks = (self.max / self.step).round() as u32;
        for t in 0..=ticks {
            let v = self.step * f64::from(t);
            let x = self.x0 + self.width * v / self.max;
            let _ = writeln!(
                s,
                r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#ddd"/><text x="{x}" y="{}" text-anchor="middle" fill="#555">{}</text>"##,
                top - 4.0,
                top + body,
                top + body + 14.0,
                fmt_tick(v, self.step)
            );
        }
    }
}

fn legend(s: &mut String, tools: &[(&str, &str)], y: f64) {
    for (i, (tool, color)) in tools.iter().enumerate() {
        let x = 10.0 + i as f64 * 200.0;
        let _ = writeln!(
            s,
            r#"<rect x="{x}" y="{y}" width="12" height="12" fill="{color}"/><text x="{}" y="{}">{}</text>"#,
            x + 16.0,
            y + 10.0,
            esc(tool)
        );
    }
}

pub fn chart(results: &[ModelResult], machine: &Machine) -> String {
    let time: Pick = |r| (r.wall_s.median, r.wall_s.min, r.wall_s.max);
    let mem: Pick = |r| {
        let k = 1024.0;
        let m = &r.peak_rss_kib;
        (m.median / k, m.min / k, m.max / k)
    };
    let per_call: Pick = |r| {
        r.inner_s.map_or((0.0, 0.0, 0.0), |t| {
            (t.median * 1e3, t.min * 1e3, t.max * 1e3)
        })
    };
    let tools = Section::new(
        results,
        &TOOLS,
        &[
            (
                "Wall time (whole process)",
                "seconds (bar: median, whisker: min–max)",
                "s",
                time,
            ),
            (
                "Peak RSS (the process's own VmHWM)",
                "MiB (bar: median, whisker: min–max)",
                "MiB",
                mem,
            ),
        ],
    );
    let inference = Section::new(
        results,
        &INFERENCE,
        &[(
            "Inference, time per call",
            "milliseconds (bar: median, whisker: min–max)",
            "ms",
            per_call,
        )],
    );
    let ran = results.iter().any(|m| !rows_of(m, &INFERENCE).is_empty());
    let first_top = TOP;
    let second_top = first_top + tools.body(results) + SECTION_GAP + 40.0;
    let height = if ran {
        second_top + inference.body(results) + 56.0
    } else {
        first_top + tools.body(results) + 56.0
    };
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
        r##"<text x="10" y="36" fill="#555">{}. Bars: median over the runs.</text><text x="10" y="50" fill="#555">onnxc fold = import + constant propagation + ONNX export (the peers' job); onnxc compile = ONNX to LLVM IR; peers: one Python process each.</text>"##,
        esc(&machine.describe()),
    );
    legend(&mut s, &TOOLS, 60.0);
    tools.draw(&mut s, results, first_top);
    if ran {
        legend(&mut s, &INFERENCE, second_top - 40.0);
        inference.draw(&mut s, results, second_top);
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
    let scale = |v: f64| p.x0 + p.width * (v / p.max).clamp(0.0, 1.0);
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
