//! `onnxc bench [MODELS... | --zoo NAME,...] [--json F] [--md F] [--svg F]
//! [--peers] [--repeat N]`: compile-time, memory and inference figures per
//! model, optionally next to onnxruntime's offline optimizer and
//! onnx-simplifier run on the same files. Every measured compile runs in a
//! child process (`onnxc bench --child-dir`), so peak RSS is its own.

mod check;
mod child;
mod measure;
mod report;
mod svg;

use super::{io_err, write_output, CmdResult, Failure};
use measure::{Run, Stat};
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(clap::Args)]
pub struct BenchArgs {
    /// ONNX model files to benchmark.
    pub models: Vec<PathBuf>,
    /// Zoo models to generate and benchmark (comma-separated names).
    #[arg(long, value_delimiter = ',', conflicts_with = "models")]
    pub zoo: Vec<String>,
    /// Generate the zoo models' light variants (ConstantOfShape weights).
    #[arg(long)]
    pub light: bool,
    /// Write all figures as JSON.
    #[arg(long, value_name = "OUT.json")]
    pub json: Option<PathBuf>,
    /// Write the tables as Markdown.
    #[arg(long, value_name = "OUT.md")]
    pub md: Option<PathBuf>,
    /// Write a bar chart (time and peak memory per model and tool).
    #[arg(long, value_name = "OUT.svg")]
    pub svg: Option<PathBuf>,
    /// Also run onnxruntime's offline optimizer and onnx-simplifier.
    #[arg(long)]
    pub peers: bool,
    /// Repetitions of every measured process (figures: median, min, max).
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// Runs of the compiled model for the inference time.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Do not build or run the compiled model.
    #[arg(long)]
    pub no_build: bool,
    /// Do not compare the compiled model's outputs with onnxruntime's.
    #[arg(long)]
    pub no_check: bool,
    /// Skip the extra, untimed compile that measures IR text sizes.
    #[arg(long)]
    pub no_ir_sizes: bool,
    /// Keep generated models and build products here (default: a temporary
    /// directory, removed afterwards).
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    /// Directory of the LLVM tools (clang); default: LLVM 19, then PATH.
    #[arg(long)]
    pub llvm_bin: Option<PathBuf>,
    /// Python interpreter for the peers.
    #[arg(long, default_value = "python3")]
    pub python: String,
    /// Internal: run the measured compile of MODELS[0] into this directory.
    #[arg(long, hide = true)]
    pub child_dir: Option<PathBuf>,
    /// Internal: with --child-dir, also measure IR text sizes.
    #[arg(long, hide = true)]
    pub child_ir_sizes: bool,
}

/// How one tool fared on one model.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    Ok,
    /// A peer that is not installed.
    Missing(String),
    Failed(String),
    Skipped(String),
}

/// Whole-process figures of one tool (or build, or inference) on a model.
#[derive(Clone, Debug)]
pub struct ToolRow {
    pub tool: String,
    pub status: Status,
    pub wall_s: Stat,
    pub peak_rss_kib: Stat,
    /// Time of the work itself inside the process, when the tool reports it.
    pub inner_s: Option<Stat>,
    /// Nodes of the ONNX model the tool wrote.
    pub onnx_nodes_after: Option<u64>,
}

/// In-process figures of onnxc's compile (from the child's report).
#[derive(Clone, Debug, Default)]
pub struct CompileDetail {
    /// (stage, wall) in pipeline order, `import` and `emit-llvm` included.
    pub stages: Vec<(String, Stat)>,
    /// (stage, pass, wall) in run order.
    pub passes: Vec<(String, String, Stat)>,
    /// Live constant bytes after import and after each pass.
    pub live_bytes: Vec<(String, u64)>,
    /// (ops, of which constants) in the main graph after import / folding.
    pub nodes_before: (u64, u64),
    pub nodes_after: Option<(u64, u64)>,
    /// Printed IR size after import and each stage.
    pub ir_bytes: Vec<(String, u64)>,
    pub llvm_ir_bytes: Option<u64>,
}

impl CompileDetail {
    pub fn stage(&self, name: &str) -> Option<Stat> {
        self.stages.iter().find(|s| s.0 == name).map(|s| s.1)
    }
}

#[derive(Clone, Debug)]
pub struct ModelResult {
    pub name: String,
    pub file: PathBuf,
    pub file_bytes: u64,
    pub onnx_nodes: u64,
    /// onnxc compile, onnxc fold, peers, clang build, inference.
    pub rows: Vec<ToolRow>,
    pub detail: Option<CompileDetail>,
    /// The compiled model's outputs against onnxruntime's.
    pub accuracy: Option<check::Accuracy>,
}

impl ModelResult {
    pub fn row(&self, tool: &str) -> Option<&ToolRow> {
        self.rows.iter().find(|r| r.tool == tool)
    }
}

pub const COMPILE: &str = "onnxc compile";
pub const FOLD: &str = "onnxc fold";
pub const BUILD: &str = "clang build";
pub const INFER: &str = "inference";
pub const PEERS: [&str; 2] = ["onnxruntime", "onnxsim"];

const PEERS_PY: &str = include_str!("../../../scripts/peers.py");

fn diag(msg: impl Into<String>) -> Failure {
    Failure::Diagnostic(ir::Diagnostic::error(msg))
}

pub fn run(args: BenchArgs) -> CmdResult {
    if let Some(dir) = &args.child_dir {
        let model = args
            .models
            .first()
            .ok_or_else(|| diag("--child-dir needs a model"))?;
        return child::run(model, dir, args.child_ir_sizes);
    }
    if args.models.is_empty() && args.zoo.is_empty() {
        return Err(diag(
            "nothing to benchmark: give model files or --zoo NAME,...",
        ));
    }
    let repeat = args.repeat.max(1);
    let temp = args.work_dir.is_none();
    let work = match &args.work_dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("onnxc-bench-{}", std::process::id())),
    };
    std::fs::create_dir_all(&work).map_err(|e| io_err("create", &work, e))?;
    let machine = report::Machine::detect();
    let result = bench_all(&args, &work, repeat);
    if temp {
        let _ = std::fs::remove_dir_all(&work);
    }
    let results = result?;
    let machine = report::Machine {
        floor_kib: report::own_peak_rss_kib(),
        ..machine
    };
    let md = report::markdown(&results, &machine, repeat, args.runs);
    print!("{md}");
    if let Some(p) = &args.md {
        write_output(Some(p), md.as_bytes())?;
    }
    if let Some(p) = &args.json {
        let json = report::json(&results, &machine, repeat, args.runs);
        write_output(Some(p), json.as_bytes())?;
    }
    if let Some(p) = &args.svg {
        write_output(Some(p), svg::chart(&results, &machine).as_bytes())?;
    }
    Ok(())
}

fn bench_all(args: &BenchArgs, work: &Path, repeat: usize) -> Result<Vec<ModelResult>, Failure> {
    let mut inputs: Vec<(String, PathBuf)> = Vec::new();
    let exe = std::env::current_exe().map_err(|e| Failure::Io(format!("current exe: {e}")))?;
    for name in &args.zoo {
        // Generated in a child: on Linux a spawned child's ru_maxrss starts
        // at the spawning process's peak RSS, so this process stays small.
        models::entry(name).map_err(diag)?;
        let tag = if args.light {
            format!("{name}_light")
        } else {
            name.clone()
        };
        let path = work.join(format!("{tag}.onnx"));
        let mut cmd = Command::new(&exe);
        cmd.args(["zoo", "gen", name, "-o"]).arg(&path);
        if args.light {
            cmd.arg("--light");
        }
        let r = spawn(cmd)?;
        if !r.ok {
            return Err(diag(format!("cannot generate {name}: {}", r.stderr.trim())));
        }
        inputs.push((tag, path));
    }
    for p in &args.models {
        let stem = p
            .file_stem()
            .map_or_else(|| "model".to_string(), |s| s.to_string_lossy().into_owned());
        inputs.push((stem, p.clone()));
    }
    let mut results = Vec::new();
    for (k, (name, path)) in inputs.into_iter().enumerate() {
        let dir = work.join(format!("{k}-{name}"));
        std::fs::create_dir_all(&dir).map_err(|e| io_err("create", &dir, e))?;
        eprintln!("bench: {name} ({})", path.display());
        results.push(bench_model(args, &exe, &name, &path, &dir, repeat)?);
    }
    Ok(results)
}

fn bench_model(
    args: &BenchArgs,
    exe: &Path,
    name: &str,
    path: &Path,
    dir: &Path,
    repeat: usize,
) -> Result<ModelResult, Failure> {
    let file_bytes = std::fs::metadata(path)
        .map_err(|e| io_err("read", path, e))?
        .len();
    let mut rows = Vec::new();

    // onnxc compile to LLVM IR, in-process figures from the child.
    let mut runs = Vec::new();
    let mut reports = Vec::new();
    for _ in 0..repeat {
        let mut cmd = Command::new(exe);
        cmd.arg("bench").arg("--child-dir").arg(dir).arg(path);
        let r = spawn(cmd)?;
        let mut rep = child_report(dir)?;
        if rep.crashed {
            // The child died without a report: its stderr says why.
            rep.error = first_error(std::slice::from_ref(&r)).or(rep.error);
        }
        let failed = !r.ok || rep.error.is_some();
        runs.push(r);
        reports.push(rep);
        if failed {
            break;
        }
    }
    let compile_ok = reports.iter().all(|r| r.error.is_none()) && runs.iter().all(|r| r.ok);
    rows.push(row_of(COMPILE, &runs, compile_failure(&runs, &reports)));
    let mut detail = aggregate(&reports);
    if compile_ok && !args.no_ir_sizes {
        let mut cmd = Command::new(exe);
        cmd.arg("bench")
            .arg("--child-dir")
            .arg(dir)
            .arg("--child-ir-sizes")
            .arg(path);
        let r = spawn(cmd)?;
        if r.ok {
            detail.ir_bytes = child_report(dir)?.ir_bytes;
        }
    }

    // onnxc fold: import + constprop + ONNX export, the peers' job.
    let folded = dir.join("onnxc.onnx");
    let fold = repeated(repeat, || {
        let mut cmd = Command::new(exe);
        cmd.args(["compile", "--emit", "onnx", "-o"])
            .arg(&folded)
            .arg(path);
        spawn(cmd)
    })?;
    let mut fold_row = row_of(FOLD, &fold, first_error(&fold));
    fold_row.onnx_nodes_after = onnx_nodes(&folded);
    rows.push(fold_row);

    if args.peers {
        for peer in PEERS {
            rows.push(run_peer(args, peer, path, dir, repeat)?);
        }
    }

    if args.no_build {
        rows.push(skipped(BUILD, "--no-build"));
    } else if !compile_ok {
        rows.push(skipped(BUILD, "the compile failed"));
    } else {
        rows.extend(build_and_run(args, dir, &reports, repeat)?);
    }
    let ran = rows
        .iter()
        .any(|r| r.tool == INFER && r.status == Status::Ok);
    let accuracy = match reports.first() {
        Some(rep) if ran && !args.no_check => Some(check::against_onnxruntime(
            &args.python,
            path,
            dir,
            rep.inputs,
            rep.outputs,
        )),
        _ => None,
    };
    let onnx_nodes = onnx_nodes(path).unwrap_or(0);
    Ok(ModelResult {
        accuracy,
        name: name.to_string(),
        file: path.to_path_buf(),
        file_bytes,
        onnx_nodes,
        rows,
        detail: (!reports.is_empty()).then_some(detail),
    })
}

fn spawn(cmd: Command) -> Result<Run, Failure> {
    let what = format!("{:?}", cmd.get_program());
    measure::run(cmd).map_err(|e| Failure::Io(format!("cannot run {what}: {e}")))
}

/// Runs `f` up to `n` times, stopping at the first failure.
fn repeated(n: usize, mut f: impl FnMut() -> Result<Run, Failure>) -> Result<Vec<Run>, Failure> {
    let mut runs = Vec::new();
    for _ in 0..n {
        let r = f()?;
        let ok = r.ok;
        runs.push(r);
        if !ok {
            break;
        }
    }
    Ok(runs)
}

fn first_error(runs: &[Run]) -> Option<String> {
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

fn compile_failure(runs: &[Run], reports: &[report::ChildReport]) -> Option<String> {
    reports
        .iter()
        .find_map(|r| r.error.clone())
        .or_else(|| first_error(runs))
}

fn row_of(tool: &str, runs: &[Run], error: Option<String>) -> ToolRow {
    let wall: Vec<f64> = runs.iter().map(|r| r.wall_s).collect();
    let rss: Vec<f64> = runs.iter().map(|r| r.peak_rss_kib as f64).collect();
    ToolRow {
        tool: tool.to_string(),
        status: error.map_or(Status::Ok, Status::Failed),
        wall_s: Stat::of(&wall),
        peak_rss_kib: Stat::of(&rss),
        inner_s: None,
        onnx_nodes_after: None,
    }
}

fn skipped(tool: &str, why: &str) -> ToolRow {
    ToolRow {
        tool: tool.to_string(),
        status: Status::Skipped(why.to_string()),
        wall_s: Stat::default(),
        peak_rss_kib: Stat::default(),
        inner_s: None,
        onnx_nodes_after: None,
    }
}

fn child_report(dir: &Path) -> Result<report::ChildReport, Failure> {
    let p = dir.join("report.tsv");
    let text = std::fs::read_to_string(&p).unwrap_or_default();
    // A missing report means the child died before writing it.
    let _ = std::fs::remove_file(&p);
    let mut rep = report::ChildReport::parse(&text);
    if text.is_empty() {
        rep.crashed = true;
        rep.error = Some("the compile crashed before reporting".to_string());
    }
    Ok(rep)
}

/// Medians over the repeated child reports (same passes in each).
fn aggregate(reports: &[report::ChildReport]) -> CompileDetail {
    let Some(first) = reports.first() else {
        return CompileDetail::default();
    };
    let stat = |pick: &dyn Fn(&report::ChildReport) -> Option<f64>| {
        Stat::of(&reports.iter().filter_map(pick).collect::<Vec<_>>())
    };
    CompileDetail {
        stages: first
            .stages
            .iter()
            .enumerate()
            .map(|(i, (s, _))| (s.clone(), stat(&|r| r.stages.get(i).map(|x| x.1))))
            .collect(),
        passes: first
            .passes
            .iter()
            .enumerate()
            .map(|(i, (s, p, _))| {
                (
                    s.clone(),
                    p.clone(),
                    stat(&|r| r.passes.get(i).map(|x| x.2)),
                )
            })
            .collect(),
        live_bytes: first.live.clone(),
        nodes_before: first.nodes_before,
        nodes_after: first.nodes_after,
        ir_bytes: Vec::new(),
        llvm_ir_bytes: first.llvm_ir_bytes,
    }
}

fn run_peer(
    args: &BenchArgs,
    peer: &str,
    model: &Path,
    dir: &Path,
    repeat: usize,
) -> Result<ToolRow, Failure> {
    let out = dir.join(format!("{peer}.onnx"));
    let mut runs = Vec::new();
    let mut inner = Vec::new();
    for _ in 0..repeat {
        let mut cmd = Command::new(&args.python);
        cmd.arg("-c").arg(PEERS_PY).arg(peer).arg(model).arg(&out);
        let r = match measure::run(cmd) {
            Ok(r) => r,
            Err(e) => {
                return Ok(missing(peer, &format!("cannot run {}: {e}", args.python)));
            }
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
            let mut row = row_of(peer, &[], why);
            row.wall_s = Stat::of(&[r.wall_s]);
            return Ok(row);
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

fn missing(peer: &str, why: &str) -> ToolRow {
    ToolRow {
        status: Status::Missing(why.to_string()),
        ..skipped(peer, "")
    }
}

/// Node count of an ONNX file's main graph, if it parses.
fn onnx_nodes(path: &Path) -> Option<u64> {
    let m = frontend::load_model(path).ok()?;
    Some(m.proto.graph?.node.len() as u64)
}

/// Builds the compiled model with clang and times `args.runs` executions.
fn build_and_run(
    args: &BenchArgs,
    dir: &Path,
    reports: &[report::ChildReport],
    repeat: usize,
) -> Result<Vec<ToolRow>, Failure> {
    let Some(clang) = crate::tools::find_tool("clang", args.llvm_bin.as_deref()) else {
        return Ok(vec![skipped(BUILD, "clang not found")]);
    };
    let bin = dir.join("model");
    let build = repeated(repeat, || {
        let mut cmd = Command::new(&clang);
        cmd.args(["-O2", "-w", "-o"])
            .arg(&bin)
            .arg(dir.join("model.ll"))
            .arg(dir.join("driver.c"))
            .arg("-lm");
        spawn(cmd)
    })?;
    let build_row = row_of(BUILD, &build, first_error(&build));
    if build_row.status != Status::Ok {
        return Ok(vec![build_row, skipped(INFER, "the build failed")]);
    }
    let (ins, outs) = reports.first().map_or((0, 0), |r| (r.inputs, r.outputs));
    let infer = repeated(args.runs.max(1), || {
        let mut cmd = Command::new(&bin);
        cmd.args((0..ins).map(|i| dir.join(format!("in_{i}.bin"))));
        cmd.args((0..outs).map(|i| dir.join(format!("out_{i}.bin"))));
        spawn(cmd)
    })?;
    Ok(vec![build_row, row_of(INFER, &infer, first_error(&infer))])
}
