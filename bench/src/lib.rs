//! `onnxc bench [MODELS... | --zoo NAME,...] [--json F] [--md F] [--svg F]
//! [--peers] [--repeat N]`: compile-time, memory and inference figures per
//! model, optionally next to onnxruntime's offline optimizer and
//! onnx-simplifier run on the same files. Every measured compile runs in a
//! child process (`onnxc bench --child-dir`); every measured process gets
//! the LD_PRELOAD probe (bench/probe.c), so its peak RSS is its own and the
//! compiled model's peak heap is counted.

mod check;
mod child;
mod measure;
mod probe;
mod report;
mod scaling;
mod speed;
mod svg;
mod tools;

use measure::{Run, Stat};
use pipeline::{io_err, write_output, CmdResult, Failure};
use std::path::{Path, PathBuf};
use std::process::Command;
use tools::{first_error, onnx_nodes, row_of, skipped};

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
    /// Time the inference runs (onnxc's and onnxruntime's) with one core
    /// kept busy by another process, as on a shared machine.
    #[arg(long)]
    pub busy_core: bool,
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
    /// Compile time against model size instead: generated chains and
    /// transformer-like graphs of --scaling-sizes nodes.
    #[arg(long, conflicts_with_all = ["models", "zoo"])]
    pub scaling: bool,
    /// Node counts for --scaling.
    #[arg(long, value_delimiter = ',', default_values_t = scaling::SIZES.to_vec())]
    pub scaling_sizes: Vec<usize>,
    /// Internal: run the measured compile of MODELS[0] into this directory.
    #[arg(long, hide = true)]
    pub child_dir: Option<PathBuf>,
    /// Internal: with --child-dir, also measure IR text sizes.
    #[arg(long, hide = true)]
    pub child_ir_sizes: bool,
    /// Internal: with --child-dir, run the model on these `input_N.pb`.
    #[arg(long, hide = true)]
    pub child_inputs: Option<PathBuf>,
    #[command(flatten)]
    pub codegen: pipeline::target::CodegenFlags,
    #[command(flatten)]
    pub shapes: pipeline::ShapeFlags,
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
    /// Every run's peak RSS is its own VmHWM (from the probe), not
    /// `ru_maxrss` floored at the bench's own peak.
    pub rss_own: bool,
    /// Peak bytes in use through the C allocator, and allocation count
    /// (the compiled model, with the heap probe).
    pub peak_heap_bytes: Option<Stat>,
    pub allocations: Option<Stat>,
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
    /// The weights sidecar the LLVM IR pulls in with `.incbin`.
    pub sidecar_bytes: Option<u64>,
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
pub const INFER_1T: &str = "inference, 1 thread";
pub const ORT_INFER: &str = "onnxruntime inference";
pub const ORT_INFER_1T: &str = "onnxruntime inference, 1 thread";
pub const PEERS: [&str; 2] = ["onnxruntime", "onnxsim"];

fn diag(msg: impl Into<String>) -> Failure {
    Failure::Diagnostic(ir::Diagnostic::error(msg))
}

pub fn run(args: BenchArgs) -> CmdResult {
    if let Some(dir) = &args.child_dir {
        let model = args
            .models
            .first()
            .ok_or_else(|| diag("--child-dir needs a model"))?;
        let cg = args.codegen.resolve(true, args.llvm_bin.as_deref())?;
        let inputs = child::Inputs {
            given: args.child_inputs.as_deref(),
            import: args.shapes.options(),
        };
        return child::run(model, dir, args.child_ir_sizes, &inputs, &cg);
    }
    if args.models.is_empty() && args.zoo.is_empty() && !args.scaling {
        return Err(diag(
            "nothing to benchmark: give model files, --zoo NAME,... or --scaling",
        ));
    }
    let temp = args.work_dir.is_none();
    let work = match &args.work_dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("onnxc-bench-{}", std::process::id())),
    };
    std::fs::create_dir_all(&work).map_err(|e| io_err("create", &work, e))?;
    if args.scaling {
        let r = scaling::command(&args.scaling_sizes, args.repeat, args.md.as_deref(), &work);
        if temp {
            let _ = std::fs::remove_dir_all(&work);
        }
        return r;
    }
    let machine = report::Machine::detect();
    let result = Ctx::new(&args, &work).and_then(|cx| bench_all(&cx, &work));
    if temp {
        let _ = std::fs::remove_dir_all(&work);
    }
    let results = result?;
    let machine = report::Machine {
        floor_kib: report::own_peak_rss_kib(),
        busy_core: args.busy_core,
        ..machine
    };
    let repeat = args.repeat.max(1);
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

/// What every measurement needs.
pub struct Ctx<'a> {
    pub args: &'a BenchArgs,
    pub exe: PathBuf,
    /// None without clang: peak RSS is then `ru_maxrss` (see `rss_own`).
    pub probe: Option<probe::Probe>,
    pub repeat: usize,
}

impl<'a> Ctx<'a> {
    fn new(args: &'a BenchArgs, work: &Path) -> Result<Ctx<'a>, Failure> {
        let exe = std::env::current_exe().map_err(|e| Failure::Io(format!("current exe: {e}")))?;
        let probe = match pipeline::tools::find_tool("clang", args.llvm_bin.as_deref()) {
            Some(clang) => probe::Probe::build(&clang, work)
                .map_err(|e| eprintln!("bench: {e}; peak RSS falls back to ru_maxrss"))
                .ok(),
            None => None,
        };
        Ok(Ctx {
            args,
            exe,
            probe,
            repeat: args.repeat.max(1),
        })
    }

    /// Runs and measures `cmd`, with the heap probe when `heap`.
    fn spawn(&self, cmd: Command, heap: bool) -> Result<Run, Failure> {
        let what = format!("{:?}", cmd.get_program());
        measure::run(cmd, self.probe.as_ref(), heap)
            .map_err(|e| Failure::Io(format!("cannot run {what}: {e}")))
    }

    /// Runs `make()`'s command up to `n` times, stopping at the first
    /// failure.
    fn repeated(
        &self,
        n: usize,
        heap: bool,
        make: impl Fn() -> Command,
    ) -> Result<Vec<Run>, Failure> {
        let mut runs = Vec::new();
        for _ in 0..n {
            let r = self.spawn(make(), heap)?;
            let ok = r.ok;
            runs.push(r);
            if !ok {
                break;
            }
        }
        Ok(runs)
    }
}

fn bench_all(cx: &Ctx, work: &Path) -> Result<Vec<ModelResult>, Failure> {
    let args = cx.args;
    // (name, model, its sample inputs if it brings them)
    let mut inputs: Vec<(String, PathBuf, Option<PathBuf>)> = Vec::new();
    for name in &args.zoo {
        // Generated in a child, so this process stays small for the
        // ru_maxrss fallback.
        models::entry(name).map_err(diag)?;
        let tag = if args.light {
            format!("{name}_light")
        } else {
            name.clone()
        };
        let path = work.join(format!("{tag}.onnx"));
        // The zoo's own sample inputs fix the dynamic dims (sequence 8).
        let samples = work.join(format!("{tag}-inputs"));
        let mut cmd = Command::new(&cx.exe);
        cmd.args(["zoo", "gen", name, "-o"])
            .arg(&path)
            .arg("--inputs")
            .arg(&samples);
        if args.light {
            cmd.arg("--light");
        }
        let r = cx.spawn(cmd, false)?;
        if !r.ok {
            return Err(diag(format!("cannot generate {name}: {}", r.stderr.trim())));
        }
        inputs.push((tag, path, Some(samples)));
    }
    let shapes = args.shapes.options();
    if !shapes.input_shapes.is_empty() && !args.zoo.is_empty() {
        return Err(Failure::Usage(
            "--input-shape applies to model files: zoo models bring their sample inputs".into(),
        ));
    }
    for p in &args.models {
        if !shapes.input_shapes.is_empty() {
            // A name that is not an input is a usage error before any work.
            pipeline::load(p, &shapes)?;
        }
        let stem = p
            .file_stem()
            .map_or_else(|| "model".to_string(), |s| s.to_string_lossy().into_owned());
        inputs.push((stem, p.clone(), None));
    }
    let mut results = Vec::new();
    for (k, (name, path, samples)) in inputs.into_iter().enumerate() {
        let dir = work.join(format!("{k}-{name}"));
        std::fs::create_dir_all(&dir).map_err(|e| io_err("create", &dir, e))?;
        eprintln!("bench: {name} ({})", path.display());
        results.push(bench_model(cx, &name, &path, samples.as_deref(), &dir)?);
    }
    Ok(results)
}

fn bench_model(
    cx: &Ctx,
    name: &str,
    path: &Path,
    samples: Option<&Path>,
    dir: &Path,
) -> Result<ModelResult, Failure> {
    let args = cx.args;
    let file_bytes = std::fs::metadata(path)
        .map_err(|e| io_err("read", path, e))?
        .len();
    let mut rows = Vec::new();

    // onnxc compile to LLVM IR, in-process figures from the child.
    let mut runs = Vec::new();
    let mut reports = Vec::new();
    for _ in 0..cx.repeat {
        let r = cx.spawn(child_cmd(cx, dir, samples, path), false)?;
        let mut rep = child_report(dir);
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
        let mut cmd = child_cmd(cx, dir, samples, path);
        cmd.arg("--child-ir-sizes");
        if cx.spawn(cmd, false)?.ok {
            detail.ir_bytes = child_report(dir).ir_bytes;
        }
    }

    // onnxc fold: import + constprop + ONNX export, the peers' job.
    let folded = dir.join("onnxc.onnx");
    let fold = cx.repeated(cx.repeat, false, || {
        let mut cmd = Command::new(&cx.exe);
        cmd.arg("fold").arg(path).arg("-o").arg(&folded);
        cmd.args(shape_args(args));
        cmd
    })?;
    let mut fold_row = row_of(FOLD, &fold, first_error(&fold));
    fold_row.onnx_nodes_after = onnx_nodes(&folded);
    rows.push(fold_row);

    if args.peers {
        for peer in PEERS {
            rows.push(tools::run_peer(cx, peer, path, dir)?);
        }
    }

    if args.no_build {
        rows.push(skipped(BUILD, "--no-build"));
    } else if !compile_ok {
        rows.push(skipped(BUILD, "the compile failed"));
    } else {
        rows.extend(tools::build_and_run(cx, dir, &reports)?);
    }
    let ran = rows
        .iter()
        .any(|r| r.tool == INFER && r.status == Status::Ok);
    if let Some(rep) = reports.first().filter(|_| ran) {
        for threads in [0, 1] {
            rows.push(tools::ort_inference(cx, path, dir, rep.inputs, threads));
        }
    }
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

/// `onnxc bench --child-dir DIR [--child-inputs SAMPLES] MODEL`.
fn child_cmd(cx: &Ctx, dir: &Path, samples: Option<&Path>, model: &Path) -> Command {
    let mut cmd = Command::new(&cx.exe);
    cmd.arg("bench").arg("--child-dir").arg(dir).arg(model);
    if let Some(s) = samples {
        cmd.arg("--child-inputs").arg(s);
    }
    if let Some(c) = &cx.args.codegen.target_cpu {
        cmd.arg("--target-cpu").arg(c);
    }
    if let Some(n) = cx.args.codegen.threads {
        cmd.arg("--threads").arg(n.to_string());
    }
    cmd.args(shape_args(cx.args));
    cmd
}

/// `--input-shape NAME=DIMS` for each of the bench's own.
fn shape_args(args: &BenchArgs) -> Vec<String> {
    args.shapes
        .input_shapes
        .iter()
        .flat_map(|s| ["--input-shape".to_string(), s.to_string()])
        .collect()
}

fn compile_failure(runs: &[Run], reports: &[report::ChildReport]) -> Option<String> {
    reports
        .iter()
        .find_map(|r| r.error.clone())
        .or_else(|| first_error(runs))
}

/// The child's report, removed once read; an empty one means the child
/// died before writing it.
fn child_report(dir: &Path) -> report::ChildReport {
    let p = dir.join("report.tsv");
    let text = std::fs::read_to_string(&p).unwrap_or_default();
    let _ = std::fs::remove_file(&p);
    let mut rep = report::ChildReport::parse(&text);
    if text.is_empty() {
        rep.crashed = true;
        rep.error = Some("the compile crashed before reporting".to_string());
    }
    rep
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
        sidecar_bytes: first.sidecar_bytes,
    }
}
