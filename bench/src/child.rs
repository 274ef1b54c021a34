//! The measured compile, run in a child process of `onnxc bench` so that its
//! peak RSS is its own: import, each pipeline stage with pass timing and
//! live-constant accounting, LLVM IR emission as `onnxc compile --emit llvm`
//! does it (weights in a `.incbin` sidecar). Writes `report.tsv` (one
//! `key<TAB>values...` line per figure), `model.ll`, `model.weights.bin`,
//! `driver.c` and sample inputs `in_N.bin` into the work directory.

use ir::elements::{DType, Elements, NumClass};
use ir::pass::PassManager;
use ir::Module;
use pipeline::{io_err, Failure, PassFlags};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

/// Runs the measured compile of `model` into `dir`. With `ir_sizes`, also
/// prints the IR after each stage to measure its size (slower, so the
/// parent does it in a separate, untimed run).
pub fn run(
    model: &Path,
    dir: &Path,
    ir_sizes: bool,
    inputs: &Inputs,
    cg: &pipeline::target::Codegen,
) -> Result<(), Failure> {
    let mut rep = String::new();
    let result = compile(model, dir, ir_sizes, inputs, cg, &mut rep);
    if let Err(e) = &result {
        let msg = match e {
            Failure::Quiet => "failed".to_string(),
            e => e.message(),
        };
        let _ = writeln!(rep, "error\t{}", msg.replace(['\n', '\t'], " "));
    }
    let path = dir.join("report.tsv");
    std::fs::write(&path, rep).map_err(|e| io_err("write", &path, e))?;
    result
}

/// What the model runs on: `given`, a directory of `input_N.pb` (a zoo
/// model's samples), else samples of the declared types after `import`'s
/// `--input-shape`s, whose dims the compile also specializes to.
pub struct Inputs<'a> {
    pub given: Option<&'a Path>,
    pub import: frontend::import::ImportOptions,
}

fn compile(
    model: &Path,
    dir: &Path,
    ir_sizes: bool,
    inputs: &Inputs,
    cg: &pipeline::target::Codegen,
    rep: &mut String,
) -> Result<(), Failure> {
    let t = Instant::now();
    let mut m = pipeline::import(model, &inputs.import)?;
    let _ = writeln!(rep, "stage\timport\t{}", t.elapsed().as_secs_f64());
    let (ops, consts) = count_ops(&m);
    let _ = writeln!(rep, "nodes_before\t{ops}\t{consts}");
    let live = ir::elements::live_constant_bytes(&m);
    let _ = writeln!(rep, "live\timport\t{live}");
    if ir_sizes {
        ir_size(&m, "import", rep);
    }
    let samples = sample_inputs(&m, inputs.given)?;
    write_inputs(&samples, dir)?;

    let registry = pipeline::registry();
    let flags = PassFlags {
        timing: true,
        ..PassFlags::default()
    };
    for (stage, pipeline) in pipeline::STAGES {
        let mut pm = PassManager::new();
        // The same fold bound as `onnxc compile`.
        let pipeline = match *stage {
            "constprop" => pipeline::constprop_pipeline(
                pipeline,
                Some(pipeline::DEFAULT_FOLD_EXPANSION_BOUND),
                true,
            ),
            _ => cg.stage_pipeline(stage, pipeline),
        };
        pm.extend(registry.parse(&pipeline)?);
        let reports = flags.instrument(&mut pm);
        let t = Instant::now();
        let result = pm.run(&mut m);
        let _ = writeln!(rep, "stage\t{stage}\t{}", t.elapsed().as_secs_f64());
        if let Ok(timing) = reports.timing.lock() {
            for (pass, d) in &timing.rows {
                let _ = writeln!(rep, "pass\t{stage}\t{pass}\t{}", d.as_secs_f64());
            }
        }
        if let Ok(live) = reports.live_bytes.lock() {
            for (pass, bytes) in live.iter() {
                let _ = writeln!(rep, "live\t{pass}\t{bytes}");
            }
        }
        result?;
        if *stage == "constprop" {
            let (ops, consts) = count_ops(&m);
            let _ = writeln!(rep, "nodes_after\t{ops}\t{consts}");
        }
        if ir_sizes {
            ir_size(&m, stage, rep);
        }
    }

    let t = Instant::now();
    let ll_path = dir.join("model.ll");
    let sidecar = pipeline::native::sidecar_path(&ll_path);
    let _ = std::fs::remove_file(&sidecar);
    let ll = pipeline::native::emit_ll(&m, pipeline::ENTRY, Some(&sidecar))?;
    std::fs::write(&ll_path, ll.as_bytes()).map_err(|e| io_err("write", &ll_path, e))?;
    let _ = writeln!(rep, "stage\temit-llvm\t{}", t.elapsed().as_secs_f64());
    let _ = writeln!(rep, "llvm_ir_bytes\t{}", ll.len());
    if let Ok(md) = std::fs::metadata(&sidecar) {
        let _ = writeln!(rep, "sidecar_bytes\t{}", md.len());
    }
    drop(ll);

    // After lowering the signature is memrefs: the shapes are the samples'.
    let inputs: Vec<lower::cabi::DriverInput> = samples
        .iter()
        .map(|e| lower::cabi::DriverInput {
            elem_bytes: (e.dtype().bits() as usize).div_ceil(8),
            shape: e.shape().to_vec(),
        })
        .collect();
    let c = lower::cabi::c_driver(&m, pipeline::MAIN_GRAPH, pipeline::ENTRY, &inputs)?;
    let c_path = dir.join("driver.c");
    std::fs::write(&c_path, c).map_err(|e| io_err("write", &c_path, e))?;
    let outputs = m
        .lookup_symbol(pipeline::MAIN_GRAPH)
        .map_or(0, |f| ir::dialects::func::declared_results(&m, f));
    let _ = writeln!(rep, "io\t{}\t{outputs}", inputs.len());
    Ok(())
}

/// (ops, of which `onnx.Constant`) in the main graph, excluding the
/// function op itself.
fn count_ops(m: &Module) -> (usize, usize) {
    let Some(f) = m.lookup_symbol(pipeline::MAIN_GRAPH) else {
        return (0, 0);
    };
    let ops = m.collect_ops(f);
    let consts = ops.iter().filter(|&&op| m.is(op, "onnx.Constant")).count();
    (ops.len().saturating_sub(1), consts)
}

fn ir_size(m: &Module, stage: &str, rep: &mut String) {
    let text = ir::text::print_module(m, &ir::text::PrintOptions::default());
    let _ = writeln!(rep, "ir_bytes\t{stage}\t{}", text.len());
}

/// (dtype, shape) of the main graph's inputs; dynamic dims become 1.
fn input_types(m: &Module) -> Result<Vec<(DType, Vec<i64>)>, Failure> {
    let f = m
        .lookup_symbol(pipeline::MAIN_GRAPH)
        .ok_or_else(|| ir::Diagnostic::error("the model has no main graph function"))?;
    let ft = ir::dialects::func::function_type(m, f)
        .ok_or_else(|| ir::Diagnostic::error("the main graph has no function type"))?;
    ft.inputs
        .iter()
        .map(|t| {
            let dtype = DType::from_type(t.element_type()).ok_or_else(|| {
                ir::Diagnostic::error(format!("cannot make sample inputs of type {t}"))
            })?;
            let shape = t
                .shape()
                .unwrap_or(&[])
                .iter()
                .map(|&d| if d == ir::DYN { 1 } else { d })
                .collect();
            Ok((dtype, shape))
        })
        .collect()
}

/// The sample inputs: `given`'s `input_N.pb` (a zoo model's own samples,
/// which fix its dynamic dims), else deterministic ones for the declared
/// types: floats uniform in [-1, 1), integers 0 (a valid index for
/// embedding lookups).
fn sample_inputs(m: &Module, given: Option<&Path>) -> Result<Vec<Elements>, Failure> {
    if let Some(d) = given {
        return (0..)
            .map(|i| d.join(format!("input_{i}.pb")))
            .take_while(|p| p.exists())
            .map(|p| Ok(frontend::tensor_io::read_tensor_pb(&p)?.1))
            .collect();
    }
    input_types(m)?
        .into_iter()
        .enumerate()
        .map(|(i, (dtype, shape))| {
            let n: i64 = shape.iter().product();
            let width = (dtype.bits() as usize).div_ceil(8);
            let mut bytes = Vec::with_capacity(n.max(0) as usize * width);
            let mut state: u64 = 0x9E37_79B9_7F4A_7C15 ^ i as u64;
            for _ in 0..n {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let u = (state >> 40) as f64 / (1u64 << 24) as f64 * 2.0 - 1.0;
                match (dtype.class(), width) {
                    (NumClass::Float, 4) => bytes.extend_from_slice(&(u as f32).to_le_bytes()),
                    (NumClass::Float, 8) => bytes.extend_from_slice(&u.to_le_bytes()),
                    _ => bytes.extend(std::iter::repeat_n(0u8, width)),
                }
            }
            Elements::from_bytes(dtype, shape, bytes.into())
                .map_err(|e| Failure::from(ir::Diagnostic::error(e.to_string())))
        })
        .collect()
}

/// Writes each input raw as the C driver reads it (`in_N.bin`) and as a
/// TensorProto for the onnxruntime cross-check (`input_N.pb`).
fn write_inputs(inputs: &[Elements], dir: &Path) -> Result<(), Failure> {
    for (i, e) in inputs.iter().enumerate() {
        let p = dir.join(format!("in_{i}.bin"));
        // The driver takes sub-byte elements a byte each.
        std::fs::write(&p, e.to_unpacked_bytes()).map_err(|err| io_err("write", &p, err))?;
        frontend::tensor_io::write_tensor_pb(&dir.join(format!("input_{i}.pb")), "", e)?;
    }
    Ok(())
}
