//! `onnxc run MODEL.onnx --input a.pb ... [--output-dir DIR]`: compiles
//! through LLVM IR, builds with clang and a generated C driver, executes,
//! and writes `output_N.pb`.

use super::{io_err, CmdResult, Failure, PassFlags};
use ir::elements::{DType, Elements};
use ir::Diagnostic;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(clap::Args)]
pub struct RunArgs {
    /// The ONNX model (or use --zoo).
    #[arg(required_unless_present = "zoo")]
    pub model: Option<PathBuf>,
    /// Run a built-in model of the zoo on its deterministic sample input.
    #[arg(long, conflicts_with_all = ["model", "input"])]
    pub zoo: Option<String>,
    /// Input tensors (ONNX TensorProto files), in graph-input order.
    #[arg(long = "input", value_name = "FILE.pb")]
    pub input: Vec<PathBuf>,
    /// Where output_N.pb go (default: the current directory).
    #[arg(long, default_value = ".")]
    pub output_dir: PathBuf,
    /// Directory of the LLVM tools (clang); default: LLVM 19, then PATH.
    #[arg(long)]
    pub llvm_bin: Option<PathBuf>,
    /// Run the compiled model under valgrind (memcheck, full leak check);
    /// any error or leak fails the run.
    #[arg(long)]
    pub valgrind: bool,
    /// Timing mode: after the first run, run the model N more times and
    /// print the median and minimum wall time per run (compilation and
    /// I/O excluded).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub repeat: u32,
    /// Keep the build directory (LLVM IR, driver, executable) and print it.
    #[arg(long)]
    pub keep_temps: bool,
    #[command(flatten)]
    pub shapes: super::ShapeFlags,
    #[command(flatten)]
    pub flags: PassFlags,
    #[command(flatten)]
    pub codegen: pipeline::target::CodegenFlags,
}

/// The executable runs here: native by default, except under valgrind,
/// which does not emulate AVX-512 (x86-64-v3 then, AVX2 at most).
fn codegen(args: &RunArgs) -> Result<pipeline::target::Codegen, Failure> {
    let mut flags = args.codegen.clone();
    if args.valgrind && flags.target_cpu.is_none() && cfg!(target_arch = "x86_64") {
        let native = flags.resolve(true, args.llvm_bin.as_deref())?;
        if native.vector_bits > 256 {
            flags.target_cpu = Some("x86-64-v3".into());
        }
    }
    flags.resolve(true, args.llvm_bin.as_deref())
}

/// Memcheck suppression of libgomp's worker threads' TLS, alive at exit.
const GOMP_POOL_SUPPRESSION: &str = include_str!("../../../scripts/valgrind-gomp.supp");

fn diag(msg: impl Into<String>) -> Failure {
    Failure::Diagnostic(Diagnostic::error(msg))
}

/// A scratch directory removed on drop unless kept.
struct Scratch {
    dir: PathBuf,
    keep: bool,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn scratch(keep: bool) -> Result<Scratch, Failure> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!("onnxc-run-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| io_err("create", &dir, e))?;
    Ok(Scratch { dir, keep })
}

pub fn run(args: RunArgs) -> CmdResult {
    let work = scratch(args.keep_temps)?;
    let (model_path, inputs) = match &args.zoo {
        Some(name) => zoo_model(name, &work.dir)?,
        None => {
            let path = args.model.clone().ok_or_else(|| diag("no model given"))?;
            let mut inputs = Vec::new();
            for p in &args.input {
                inputs.push(frontend::tensor_io::read_tensor_pb(p)?.1);
            }
            (path, inputs)
        }
    };
    let mut m = pipeline::import(&model_path, &args.shapes.options())?;
    let output_names: Vec<String> = m
        .lookup_symbol(pipeline::MAIN_GRAPH)
        .and_then(|f| m.attr(f, "output_names"))
        .and_then(ir::Attribute::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    check_dim_params(&m, &inputs)?;
    let cg = codegen(&args)?;
    pipeline::run_stages_with(
        &mut m,
        None,
        &args.flags,
        Some(pipeline::DEFAULT_FOLD_EXPANSION_BOUND),
        &cg,
    )?;
    check_inputs(&m, &inputs)?;

    let ll = pipeline::native::emit_ll(
        &m,
        pipeline::ENTRY,
        Some(&work.dir.join("model.weights.bin")),
    )?;
    let driver_inputs: Vec<lower::cabi::DriverInput> = inputs
        .iter()
        .map(|e| lower::cabi::DriverInput {
            elem_bytes: byte_width(e.dtype()),
            shape: e.shape().to_vec(),
        })
        .collect();
    let c = lower::cabi::c_driver(&m, pipeline::MAIN_GRAPH, pipeline::ENTRY, &driver_inputs)?;
    let dir = &work.dir;
    let write = |name: &str, bytes: &[u8]| -> Result<PathBuf, Failure> {
        let p = dir.join(name);
        std::fs::write(&p, bytes).map_err(|e| io_err("write", &p, e))?;
        Ok(p)
    };
    let ll_path = write("model.ll", ll.as_bytes())?;
    let c_path = write("driver.c", c.as_bytes())?;
    let exe = dir.join("model");
    let clang = pipeline::tools::find_tool("clang", args.llvm_bin.as_deref()).ok_or_else(|| {
        diag("clang not found (install LLVM 19: scripts/setup-test-deps.sh, or pass --llvm-bin)")
    })?;
    let mut build = Command::new(&clang);
    build.args(["-O2", "-ffp-contract=fast", "-w"]);
    build.args(cg.clang_args());
    let out = build
        .arg("-o")
        .arg(&exe)
        .arg(&ll_path)
        .arg(&c_path)
        .arg("-lm")
        .args(cg.link_args())
        .output()
        .map_err(|e| io_err("run", &clang, e))?;
    if !out.status.success() {
        return Err(diag(format!(
            "clang failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let mut cmd = if args.valgrind {
        let supp = write("gomp.supp", GOMP_POOL_SUPPRESSION.as_bytes())?;
        let mut c = Command::new("valgrind");
        c.args([
            "--quiet",
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect,possible",
        ])
        .arg(format!("--suppressions={}", supp.display()))
        .arg(&exe);
        c
    } else {
        Command::new(&exe)
    };
    for (i, e) in inputs.iter().enumerate() {
        cmd.arg(write(&format!("in_{i}.bin"), &e.to_unpacked_bytes())?);
    }
    let results = result_types(&m)?;
    let out_paths: Vec<PathBuf> = (0..results.len())
        .map(|i| dir.join(format!("out_{i}.bin")))
        .collect();
    cmd.args(&out_paths);
    if args.repeat > 0 {
        cmd.env("ONNXC_REPEAT", args.repeat.to_string())
            .stderr(std::process::Stdio::piped());
    }
    let child = cmd.spawn().map_err(|e| io_err("run", &exe, e))?;
    let done = child
        .wait_with_output()
        .map_err(|e| io_err("run", &exe, e))?;
    let status = done.status;
    let times = run_times(&done.stderr);
    if !status.success() {
        let why = if args.valgrind && status.code() == Some(99) {
            "valgrind found memory errors or leaks".to_string()
        } else {
            format!("the compiled model failed ({status})")
        };
        return Err(diag(why));
    }
    std::fs::create_dir_all(&args.output_dir).map_err(|e| io_err("create", &args.output_dir, e))?;
    for (i, (path, dtype)) in out_paths.iter().zip(&results).enumerate() {
        let e = read_output(path, *dtype)?;
        let name = output_names
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("output_{i}"));
        let pb = args.output_dir.join(format!("output_{i}.pb"));
        frontend::tensor_io::write_tensor_pb(&pb, &name, &e)?;
        println!("{}", summary(i, &name, &e));
    }
    if let Some(line) = timing_summary(times) {
        println!("{line}");
    }
    if args.keep_temps {
        eprintln!("build directory kept at {}", dir.display());
    }
    Ok(())
}

/// Writes a zoo model and its sample input into `dir`.
fn zoo_model(name: &str, dir: &Path) -> Result<(PathBuf, Vec<Elements>), Failure> {
    let opts = models::GenOptions::default();
    let model = models::generate(name, &opts).map_err(diag)?;
    let path = dir.join(format!("{name}.onnx"));
    std::fs::write(&path, models::encode(&model)).map_err(|e| io_err("write", &path, e))?;
    let inputs = super::zoo::sample_inputs(name, opts.seed)?
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    eprintln!("running zoo model '{name}' ({})", path.display());
    Ok((path, inputs))
}

fn byte_width(d: DType) -> usize {
    (d.bits() as usize).div_ceil(8)
}

fn main_signature(m: &ir::Module) -> Result<&ir::types::FunctionType, Failure> {
    m.lookup_symbol(pipeline::MAIN_GRAPH)
        .and_then(|f| ir::dialects::func::function_type(m, f))
        .ok_or_else(|| diag("the model has no main graph function"))
}

fn check_inputs(m: &ir::Module, inputs: &[Elements]) -> Result<(), Failure> {
    let sig = main_signature(m)?;
    if sig.inputs.len() != inputs.len() {
        return Err(diag(format!(
            "the model takes {} inputs, {} given",
            sig.inputs.len(),
            inputs.len()
        )));
    }
    for (i, (t, e)) in sig.inputs.iter().zip(inputs).enumerate() {
        let want = DType::from_type(t.element_type());
        if want != Some(e.dtype()) {
            return Err(diag(format!(
                "input {i}: expected element type {}, got {:?}",
                t.element_type(),
                e.dtype()
            )));
        }
        let shape = t.shape().unwrap_or(&[]);
        let ok = shape.len() == e.shape().len()
            && shape
                .iter()
                .zip(e.shape())
                .all(|(&a, &b)| a == ir::DYN || a == b);
        if !ok {
            return Err(diag(format!(
                "input {i}: shape {:?} does not fit {t}",
                e.shape()
            )));
        }
    }
    Ok(())
}

/// Dims that share a `dim_param` name are one size (the ONNX spec): the
/// inputs must agree on it.
fn check_dim_params(m: &ir::Module, inputs: &[Elements]) -> Result<(), Failure> {
    let Some(f) = m.lookup_symbol(pipeline::MAIN_GRAPH) else {
        return Ok(());
    };
    let strings = |a: &ir::Attribute| -> Vec<String> {
        a.as_array()
            .map(|l| {
                l.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let Some(per_input) = m
        .attr(f, frontend::dialect::DIM_PARAMS_IN)
        .and_then(ir::Attribute::as_array)
    else {
        return Ok(());
    };
    let input_names = m.attr(f, "input_names").map(strings).unwrap_or_default();
    let label = |i: usize| input_names.get(i).cloned().unwrap_or_else(|| i.to_string());
    let mut seen: std::collections::HashMap<String, (usize, usize, i64)> = Default::default();
    for (i, (params, e)) in per_input.iter().zip(inputs).enumerate() {
        for (d, (name, &size)) in strings(params).iter().zip(e.shape()).enumerate() {
            if name.is_empty() {
                continue;
            }
            match seen.get(name) {
                Some(&(j, k, first)) if first != size => {
                    return Err(diag(format!(
                        "input '{}' dim {d} is {size}, but dim_param '{name}' is {first} \
                         (input '{}' dim {k})",
                        label(i),
                        label(j)
                    )));
                }
                Some(_) => {}
                None => {
                    seen.insert(name.clone(), (i, d, size));
                }
            }
        }
    }
    Ok(())
}

fn result_types(m: &ir::Module) -> Result<Vec<DType>, Failure> {
    let declared = m
        .lookup_symbol(pipeline::MAIN_GRAPH)
        .map_or(0, |f| ir::dialects::func::declared_results(m, f));
    main_signature(m)?
        .results
        .iter()
        .take(declared)
        .map(|t| {
            DType::from_type(t.element_type())
                .ok_or_else(|| diag(format!("cannot write an output of type {t}")))
        })
        .collect()
}

/// Reads the driver's output format: i64 rank, i64 dims, packed elements.
fn read_output(path: &Path, dtype: DType) -> Result<Elements, Failure> {
    let bytes = std::fs::read(path).map_err(|e| io_err("read", path, e))?;
    let word = |i: usize| -> Option<i64> {
        let b = bytes.get(i * 8..i * 8 + 8)?;
        Some(i64::from_le_bytes(b.try_into().ok()?))
    };
    let bad = || diag(format!("malformed output file {}", path.display()));
    let rank = usize::try_from(word(0).ok_or_else(bad)?).map_err(|_| bad())?;
    if rank > 64 {
        return Err(bad());
    }
    let shape: Vec<i64> = (0..rank)
        .map(|i| word(1 + i).ok_or_else(bad))
        .collect::<Result<_, _>>()?;
    let data = bytes::Bytes::from(bytes).slice((1 + rank) * 8..);
    Elements::from_unpacked_bytes(dtype, shape, data).map_err(|e| diag(e.to_string()))
}

fn summary(i: usize, name: &str, e: &Elements) -> String {
    let class = e.dtype().class();
    let shown: Vec<String> = e
        .iter()
        .take(8)
        .map(|v| match class {
            ir::elements::NumClass::Float => format!("{:.6}", v.f64()),
            ir::elements::NumClass::Signed => v.i64().to_string(),
            ir::elements::NumClass::Unsigned => v.u64().to_string(),
        })
        .collect();
    let more = if e.len() > 8 { ", ..." } else { "" };
    format!(
        "output {i} '{name}': {:?} {:?} = [{}{more}]",
        e.dtype(),
        e.shape(),
        shown.join(", ")
    )
}

/// The per-run (wall, thread CPU) times the driver prints in timing mode;
/// other stderr lines are passed through.
fn run_times(stderr: &[u8]) -> Vec<(u64, u64)> {
    let mut times = Vec::new();
    for line in String::from_utf8_lossy(stderr).lines() {
        let nums: Option<Vec<u64>> = line
            .strip_prefix("onnxc-run-ns ")
            .map(|r| r.split(' ').filter_map(|t| t.parse().ok()).collect());
        match nums.as_deref() {
            Some(&[wall, cpu]) => times.push((wall, cpu)),
            _ => eprintln!("{line}"),
        }
    }
    times
}

/// Median and minimum of the wall times, and the median CPU time.
fn timing_summary(times: Vec<(u64, u64)>) -> Option<String> {
    let ms = |ns: u64| ns as f64 / 1e6;
    let (mut wall, mut cpu): (Vec<u64>, Vec<u64>) = times.into_iter().unzip();
    wall.sort_unstable();
    cpu.sort_unstable();
    Some(format!(
        "timing: {} runs, median {:.3} ms, min {:.3} ms, median cpu {:.3} ms",
        wall.len(),
        ms(*wall.get(wall.len() / 2)?),
        ms(*wall.first()?),
        ms(*cpu.get(cpu.len() / 2)?)
    ))
}
