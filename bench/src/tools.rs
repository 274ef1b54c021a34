//! The measured tools other than onnxc's own compile: the peers (one Python
//! process each, scripts/peers.py), the clang build of the compiled model
//! and its runs, onnxruntime's inference on the same inputs
//! (scripts/ort_time.py); and the rows their runs become.

use super::measure::{Run, Stat};
use super::report::ChildReport;
use super::{Ctx, Failure, Status, ToolRow, BUILD, INFER, INFER_1T, ORT_INFER, ORT_INFER_1T};
use std::path::Path;
use std::process::Command;

const PEERS_PY: &str = include_str!("../../scripts/peers.py");
const ORT_TIME_PY: &str = include_str!("../../scripts/ort_time.py");

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

/// The value of a `key<TAB>value` line of a script's output.
fn field(stdout: &str, key: &str) -> Option<String> {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('\t'))
        .map(str::to_string)
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
        let field = |k: &str| field(&r.stdout, k);
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
    // The code the child compiled for (native by default).
    let cg = cx.args.codegen.resolve(true, cx.args.llvm_bin.as_deref())?;
    let build = cx.repeated(cx.repeat, false, || {
        let mut cmd = Command::new(&clang);
        cmd.args(["-O2", "-ffp-contract=fast", "-w", "-o"])
            .arg(&bin)
            .arg(dir.join("model.ll"))
            .arg(dir.join("driver.c"))
            .args(cg.clang_args())
            .arg("-lm")
            .args(cg.link_args());
        cmd
    })?;
    let build_row = row_of(BUILD, &build, first_error(&build));
    if build_row.status != Status::Ok {
        return Ok(vec![build_row, skipped(INFER, "the build failed")]);
    }
    let io = reports.first().map_or((0, 0), |r| (r.inputs, r.outputs));
    Ok(vec![
        build_row,
        time_calls(cx, &bin, dir, io, None)?,
        time_calls(cx, &bin, dir, io, Some(1))?,
    ])
}

/// `cx.repeat` runs of the compiled model, each calling it `--runs` more
/// times after the written call (the driver's ONNXC_REPEAT), on its
/// default threads or `threads`; `inner_s` is the time per call. The
/// default-threads runs carry the heap probe.
fn time_calls(
    cx: &Ctx,
    bin: &Path,
    dir: &Path,
    (ins, outs): (usize, usize),
    threads: Option<usize>,
) -> Result<ToolRow, Failure> {
    let busy = super::measure::BusyCore::start(cx.args.busy_core).map_err(Failure::Io)?;
    let runs = cx.repeated(cx.repeat, threads.is_none(), || {
        let mut cmd = Command::new(bin);
        cmd.args((0..ins).map(|i| dir.join(format!("in_{i}.bin"))));
        cmd.args((0..outs).map(|i| dir.join(format!("out_{i}.bin"))));
        cmd.env("ONNXC_REPEAT", cx.args.runs.max(1).to_string());
        if let Some(n) = threads {
            cmd.env("ONNXC_NUM_THREADS", n.to_string());
        }
        cmd
    })?;
    drop(busy);
    let calls: Vec<f64> = runs
        .iter()
        .flat_map(|r| r.stderr.lines())
        .filter_map(|l| {
            l.strip_prefix("onnxc-run-ns ")?
                .split(' ')
                .next()?
                .parse()
                .ok()
        })
        .map(|ns: f64| ns * 1e-9)
        .collect();
    let tool = if threads.is_some() { INFER_1T } else { INFER };
    let mut row = row_of(tool, &runs, first_error(&runs));
    row.inner_s = (!calls.is_empty()).then(|| Stat::of(&calls));
    Ok(row)
}

/// onnxruntime's time per call on the child's `input_N.pb`, with all graph
/// optimizations, on `threads` (0: its default, one per core).
pub fn ort_inference(cx: &Ctx, model: &Path, dir: &Path, inputs: usize, threads: usize) -> ToolRow {
    let tool = if threads == 0 {
        ORT_INFER
    } else {
        ORT_INFER_1T
    };
    let python = &cx.args.python;
    let mut cmd = Command::new(python);
    cmd.arg("-c")
        .arg(ORT_TIME_PY)
        .arg(model)
        .arg(threads.to_string())
        .arg((cx.args.runs.max(1) * cx.repeat).to_string());
    cmd.args((0..inputs).map(|i| dir.join(format!("input_{i}.pb"))));
    let busy = match super::measure::BusyCore::start(cx.args.busy_core) {
        Ok(b) => b,
        Err(e) => return missing(tool, &e),
    };
    let r = match super::measure::run(cmd, cx.probe.as_ref(), false) {
        Ok(r) => r,
        Err(e) => return missing(tool, &format!("cannot run {python}: {e}")),
    };
    drop(busy);
    let field = |k: &str| field(&r.stdout, k);
    if let Some(why) = field("missing") {
        return missing(tool, &why);
    }
    let calls: Vec<f64> = field("calls_s")
        .map(|c| c.split(' ').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_default();
    if !r.ok || calls.is_empty() {
        let why = field("error").or_else(|| first_error(std::slice::from_ref(&r)));
        return row_of(
            tool,
            std::slice::from_ref(&r),
            why.or(Some("no timings".into())),
        );
    }
    let mut row = row_of(tool, std::slice::from_ref(&r), None);
    row.inner_s = Some(Stat::of(&calls));
    row
}
