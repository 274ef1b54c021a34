//! `onnxc compile` of one model: the stages up to what `emit` asks for,
//! then the output in that form.

use crate::driver::{self, DEFAULT_FOLD_EXPANSION_BOUND};
use crate::target::Codegen;
use crate::{native, write_output, CmdResult, Failure, PassFlags};
use frontend::import::ImportOptions;
use ir::Module;
use std::path::{Path, PathBuf};

/// What `compile` writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Emit {
    /// An ONNX model after constant propagation.
    Onnx,
    /// The onnx-dialect IR after import and constant propagation.
    OnnxIr,
    /// Memref-level IR after bufferization and deallocation.
    Memref,
    /// Textual LLVM IR.
    Llvm,
    /// An object file (built with clang).
    Obj,
    /// A shared library plus a C header next to it (built with clang).
    Lib,
}

impl Emit {
    const NAMES: [(&'static str, Emit); 6] = [
        ("onnx", Emit::Onnx),
        ("onnx-ir", Emit::OnnxIr),
        ("memref", Emit::Memref),
        ("llvm", Emit::Llvm),
        ("obj", Emit::Obj),
        ("lib", Emit::Lib),
    ];

    /// The kind named as `--emit` names it (the daemon and the Python
    /// package take the same names).
    pub fn parse(name: &str) -> Result<Emit, String> {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, e)| e)
            .ok_or_else(|| {
                format!("unknown emit kind '{name}' (onnx, onnx-ir, memref, llvm, obj, lib)")
            })
    }

    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, e)| *e == self)
            .map_or("?", |(n, _)| n)
    }

    /// Text artifacts (IR), as opposed to binary ones.
    pub fn is_text(self) -> bool {
        matches!(self, Emit::OnnxIr | Emit::Memref | Emit::Llvm)
    }

    /// The stage the pipeline stops after for this kind, unless told.
    pub fn last_stage(self) -> Option<&'static str> {
        match self {
            Emit::Onnx | Emit::OnnxIr => Some("constprop"),
            Emit::Memref => Some("dealloc"),
            Emit::Llvm | Emit::Obj | Emit::Lib => None,
        }
    }
}

/// Everything `compile` takes besides the model and the output path.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    pub emit: Emit,
    /// Stop after this stage and print its IR.
    pub stop_after: Option<String>,
    /// Directory of the LLVM tools (clang).
    pub llvm_bin: Option<PathBuf>,
    /// `None`: `DEFAULT_FOLD_EXPANSION_BOUND`.
    pub fold_expansion_bound: Option<f64>,
    /// With `Emit::Onnx`: initializers of at least this many bytes go to
    /// OUTPUT.data (needs an output file).
    pub external_data_threshold: Option<usize>,
    pub import: ImportOptions,
    /// Target CPU and thread count (`--target-cpu`, `--threads`).
    pub codegen: Codegen,
}

impl CompileOptions {
    pub fn new(emit: Emit) -> CompileOptions {
        CompileOptions {
            emit,
            stop_after: None,
            llvm_bin: None,
            fold_expansion_bound: None,
            external_data_threshold: None,
            import: ImportOptions::default(),
            codegen: Codegen::default(),
        }
    }
}

/// Imports `model` and compiles it to `output` (stdout when `None` or `-`).
pub fn compile(
    model: &Path,
    output: Option<&Path>,
    opts: &CompileOptions,
    flags: &PassFlags,
) -> CmdResult {
    let import = ImportOptions {
        keep_foreign: opts.emit == Emit::Onnx,
        ..opts.import.clone()
    };
    let m = driver::import(model, &import)?;
    compile_module(m, output, opts, flags)
}

/// `compile` of an imported module.
pub fn compile_module(
    mut m: Module,
    output: Option<&Path>,
    opts: &CompileOptions,
    flags: &PassFlags,
) -> CmdResult {
    let stop = opts.stop_after.as_deref().or(opts.emit.last_stage());
    let bound = opts
        .fold_expansion_bound
        .unwrap_or(DEFAULT_FOLD_EXPANSION_BOUND);
    driver::run_stages_with(&mut m, stop, flags, Some(bound), &opts.codegen)?;
    if opts.emit == Emit::Onnx {
        crate::fold::prepare_export(&mut m)?;
    }
    let to_file = output.filter(|o| o.as_os_str() != "-");
    if let (Emit::Onnx, Some(t)) = (opts.emit, opts.external_data_threshold) {
        let Some(out) = to_file else {
            return Err(Failure::Io(
                "--external-data-threshold needs -o OUTPUT".into(),
            ));
        };
        return Ok(frontend::export::write_model(&m, out, Some(t))?);
    }
    if opts.emit == Emit::Onnx {
        // To a file: the streaming writer of `onnxc fold` (no whole model
        // in memory); to stdout: encoded at once.
        if let Some(out) = to_file {
            return Ok(constprop::stream::write_model(&m, out, None)?);
        }
        let model = frontend::export::export_model(&m)?;
        return write_output(output, &frontend::export::encode(&model));
    }
    if stop.is_some() {
        let text = ir::text::print_module(&m, &ir::text::PrintOptions::default());
        return write_output(output, text.as_bytes());
    }
    match opts.emit {
        Emit::Obj | Emit::Lib => {
            let Some(out) = output else {
                return Err(Failure::Io("--emit obj|lib needs -o OUTPUT".into()));
            };
            native::build(
                m,
                opts.emit == Emit::Lib,
                out,
                opts.llvm_bin.as_deref(),
                &opts.codegen,
            )
        }
        _ => native::write_llvm(&m, output),
    }
}
