//! The model pipeline: import, the pass stages in order, and emission.

use crate::target::Codegen;
use crate::{Failure, PassFlags};
use frontend::import::ImportOptions;
use ir::pass::PassManager;
use ir::Module;
use std::path::Path;

/// Pipeline stages, each a pass pipeline; `--stop-after` names a stage.
pub const STAGES: &[(&str, &str)] = &[
    ("constprop", "constprop"),
    // Large constants stay lazy: the LLVM emitter packs them one at a time.
    ("scrub", "scrub{max-bytes=65536}"),
    // canonicalize, cse: every op's dynamic sizes come from its operands'
    // `memref.dim`s; folded to the allocations' own sizes and merged, the
    // buffers of one symbolic shape share size values, so buffer reuse
    // can see they match. split-alloc: one allocation per value before
    // deallocation (issue #8).
    ("bufferize", "bufferize,canonicalize,cse,split-alloc"),
    // Small fixed-size buffers (Loop counter cells, small temporaries) go
    // to the stack once deallocation has placed and hoisted everything.
    ("dealloc", "dealloc-pipeline,promote-buffers-to-stack"),
    ("lower", "lower-to-llvm-ready"),
];

/// The function `onnxc run` and `--emit lib` export.
pub const MAIN_GRAPH: &str = "main_graph";
/// Its C entry symbol.
pub const ENTRY: &str = "onnxc_entry";

pub fn stage_names() -> Vec<&'static str> {
    std::iter::once("import")
        .chain(STAGES.iter().map(|s| s.0))
        .collect()
}

/// Loads and imports a model file.
pub fn import(path: &Path, opts: &ImportOptions) -> Result<Module, Failure> {
    let loaded = load(path, opts)?;
    Ok(frontend::import::import_model_with(&loaded, opts)?)
}

/// `import` of a model held in memory; `dir` resolves external data.
pub fn import_bytes(
    bytes: bytes::Bytes,
    dir: std::path::PathBuf,
    opts: &ImportOptions,
) -> Result<Module, Failure> {
    let loaded = frontend::load::load_model_bytes(bytes, dir)?;
    opts.check(&loaded).map_err(Failure::Usage)?;
    Ok(frontend::import::import_model_with(&loaded, opts)?)
}

/// Loads a model and checks the import options against it (a mismatch is
/// a usage error naming the input).
pub fn load(path: &Path, opts: &ImportOptions) -> Result<frontend::load::LoadedModel, Failure> {
    let loaded = frontend::load::load_model(path)?;
    opts.check(&loaded).map_err(Failure::Usage)?;
    Ok(loaded)
}

/// `compile`'s default `--fold-expansion-bound`: a fold may not make its
/// results take more than 16 times the bytes of its operands.
pub const DEFAULT_FOLD_EXPANSION_BOUND: f64 = 16.0;

/// Runs the stages up to and including `stop_after` (all when `None`).
pub fn run_stages(
    m: &mut Module,
    stop_after: Option<&str>,
    flags: &PassFlags,
) -> Result<(), Failure> {
    run_stages_bounded(m, stop_after, flags, Some(DEFAULT_FOLD_EXPANSION_BOUND))
}

/// `run_stages` with an explicit fold expansion bound (`None`: unbounded).
pub fn run_stages_bounded(
    m: &mut Module,
    stop_after: Option<&str>,
    flags: &PassFlags,
    expansion_bound: Option<f64>,
) -> Result<(), Failure> {
    run_stages_with(m, stop_after, flags, expansion_bound, &Codegen::default())
}

/// `run_stages_bounded` for the target and thread count of `cg` (the
/// others build for the portable default, all cores).
pub fn run_stages_with(
    m: &mut Module,
    stop_after: Option<&str>,
    flags: &PassFlags,
    expansion_bound: Option<f64>,
    cg: &Codegen,
) -> Result<(), Failure> {
    if let Some(stop) = stop_after {
        if !stage_names().contains(&stop) {
            return Err(Failure::Diagnostic(ir::Diagnostic::error(format!(
                "unknown stage '{stop}' (stages: {})",
                stage_names().join(", ")
            ))));
        }
        if stop == "import" {
            return Ok(());
        }
    }
    let registry = crate::passes::registry();
    let mut pm = PassManager::new();
    let to_code = stop_after.is_none_or(|s| s != "constprop");
    for (name, pipeline) in STAGES {
        let pipeline = match *name {
            "constprop" => constprop_pipeline(pipeline, expansion_bound, to_code),
            _ => cg.stage_pipeline(name, pipeline),
        };
        pm.extend(registry.parse(&pipeline)?);
        if Some(*name) == stop_after {
            break;
        }
    }
    let reports = flags.instrument(&mut pm);
    let result = pm.run(m);
    flags.report(&reports, &pm);
    result?;
    // Ids in walk order, whatever the passes erased: emitted names (LLVM
    // value names follow ids) do not depend on when the GC compacted.
    m.compact();
    // A cancelled compact left the module uncompacted: stop here.
    ir::cancel::check()?;
    Ok(())
}

/// The constprop stage with its fold bound; compiling to code, QDQ groups
/// first become int8 ops (before their weights fold to floats). A model
/// written back out (fold, `--emit onnx`) keeps its QDQ form, which every
/// runtime reads, and without a bound grows by a small budget at most
/// (`no-growth`: a DequantizeLinear of int8 weights stays, as
/// onnxruntime's QDQ fusion needs).
pub fn constprop_pipeline(pipeline: &str, bound: Option<f64>, to_code: bool) -> String {
    let fuse = if to_code { "fuse-qdq," } else { "" };
    match (bound, to_code) {
        (Some(b), true) => format!("{fuse}{pipeline}{{expansion-bound={b} version-ranks}}"),
        (Some(b), false) => format!("{pipeline}{{expansion-bound={b}}}"),
        (None, false) => format!("{pipeline}{{no-growth}}"),
        (None, true) => format!("{fuse}{pipeline}{{version-ranks}}"),
    }
}

/// LLVM IR of a fully lowered model plus its C entry (`ENTRY`).
pub fn emit_llvm(m: &Module) -> Result<String, Failure> {
    let mut ll = lower::emit_llvm(m, &lower::EmitOptions::default())?;
    ll.push('\n');
    ll.push_str(&lower::cabi::emit_entry(m, MAIN_GRAPH, ENTRY)?);
    Ok(ll)
}
