//! The measured tools other than onnxc's own compile: the peers (one Python
//! process each, scripts/peers.py), the clang build of the compiled model
//! and its runs; and the rows their runs become.

use super::measure::{Run, Stat};
use super::report::ChildReport;
use super::{Ctx, Failure, Status, ToolRow, BUILD, INFER};
use std::path::Path;
use std::process::Command;

const PEERS_PY: &str = include_str!("../../../../scripts/peers.py");

/// The first non-empty line of the first failed run's output.
pub fn first_error(runs: &[Run]) -> Option<String> {
    runs.iter().find(|r| !r.ok).map(|r| {
        let text = if r.stderr.trim().is_empty() {
            &r.stdout
        } else {
            &r.stderr
        };
        text.lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("failed")
            .to_string()
    })
}

/// Median/min/max over `runs` (failed with `error` if given).
pub fn row_of(tool: &str, runs: &[Run], error: Option<String>) -> ToolRow {
    let stat =
        |f: &dyn Fn(&Run) -> Option<f64>| Stat::of(&runs.iter().filter_map(f).collect::<Vec<_>>());
    let all_heap = !runs.is_empty() && runs.iter().all(|r| r.heap.is_some());
    ToolRow {
        tool: tool.to_string(),
        status: error.map_or(Status::Ok, Status::Failed),
        wall_s: stat(&|r| Some(r.wall_s)),
        peak_rss_kib: stat(&|r| Some(r.peak_rss_kib as f64)),
        rss_own: runs.iter().all(|r| r.rss_own),
        peak_heap_bytes: all_heap.then(|| stat(&|r| r.heap.map(|h| h.0 as f64))),
        allocations: all_heap.then(|| stat(&|r| r.heap.map(|h| h.1 as f64))),
        inner_s: None,
        onnx_nodes_after: None,
    }
}

pub fn skipped(tool: &str, why: &str) -> ToolRow {
    ToolRow {
        status: Status::Skipped(why.to_string()),
        ..row_of(tool, &[], None)
    }
}

fn missing(peer: &str, why: &str) -> ToolRow {
    ToolRow {
        status: Status::Missing(why.to_string()),
        ..row_of(peer, &[], None)
    }
}

/// Node count of an ONNX file's main graph, if it parses.
pub fn onnx_nodes(path: &Path) -> Option<u64> {
    let m = frontend::load_model(path).ok()?;
    Some(m.proto.graph?.node.len() as u64)
}

/// One peer on `model`, `cx.repeat` times; missing peers are reported so.
pub fn run_peer(cx: &Ctx, peer: &str, model: &Path, dir: &Path) -> Result<ToolRow, Failure> {
    let python = &cx.args.python;
    let out = dir.join(format!("{peer}.onnx"));
    let mut runs = Vec::new();
    let mut inner = Vec::new();
    for _ in 0..cx.repeat {
        let mut cmd = Command::new(python);
        cmd.arg("-c").arg(PEERS_PY).arg(peer).arg(model).arg(&out);
        let r = match super::measure::run(cmd, cx.probe.as_ref(), false) {
            Ok(r) => r,
            Err(e) => return Ok(missing(peer, &format!("cannot run {python}: {e}"))),
        };
        let field = |k: &str| {
            r.stdout
                .lines()
                .find_map(|l| l.strip_prefix(k)?.strip_prefix('\t'))
                .map(str::to_string)
        };
        if let Some(why) = field("missing") {
            return Ok(missing(peer, &why));
        }
        if !r.ok {
            let why = field("error").or_else(|| first_error(std::slice::from_ref(&r)));
            return Ok(row_of(peer, std::slice::from_ref(&r), why));
        }
        if let Some(s) = field("inner_s").and_then(|s| s.parse().ok()) {
            inner.push(s);
        }
        runs.push(r);
    }
    let mut row = row_of(peer, &runs, None);
    row.inner_s = Some(Stat::of(&inner));
    row.onnx_nodes_after = onnx_nodes(&out);
    Ok(row)
}

/// Builds the compiled model with clang and times `args.runs` executions
/// (with the heap probe: peak heap is the model's own allocations).
pub fn build_and_run(
    cx: &Ctx,
    dir: &Path,
    reports: &[ChildReport],
) -> Result<Vec<ToolRow>, Failure> {
    let Some(clang) = pipeline::tools::find_tool("clang", cx.args.llvm_bin.as_deref()) else {
        return Ok(vec![skipped(BUILD, "clang not found")]);
    };
    let bin = dir.join("model");
    let build = cx.repeated(cx.repeat, false, || {
        let mut cmd = Command::new(&clang);
        // Portable code (no -march=native), so valgrind can run it too.
        cmd.args(["-O2", "-ffp-contract=fast", "-w", "-o"])
            .arg(&bin)
            .arg(dir.join("model.ll"))
            .arg(dir.join("driver.c"))
            .arg("-lm");
        cmd
    })?;
    let build_row = row_of(BUILD, &build, first_error(&build));
    if build_row.status != Status::Ok {
        return Ok(vec![build_row, skipped(INFER, "the build failed")]);
    }
    let (ins, outs) = reports.first().map_or((0, 0), |r| (r.inputs, r.outputs));
    let infer = cx.repeated(cx.args.runs.max(1), true, || {
        let mut cmd = Command::new(&bin);
        cmd.args((0..ins).map(|i| dir.join(format!("in_{i}.bin"))));
        cmd.args((0..outs).map(|i| dir.join(format!("out_{i}.bin"))));
        cmd
    })?;
    Ok(vec![build_row, row_of(INFER, &infer, first_error(&infer))])
}
