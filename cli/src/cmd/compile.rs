//! `onnxc compile MODEL.onnx -o OUT --emit KIND`.

use super::{write_output, CmdResult, Failure, PassFlags};
use crate::driver;
use std::path::PathBuf;

#[derive(Copy, Clone, PartialEq, Eq, clap::ValueEnum)]
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

#[derive(clap::Args)]
pub struct CompileArgs {
    /// The ONNX model.
    pub model: PathBuf,
    /// More models or directories of *.onnx: a batch (see --out-dir).
    #[arg(value_name = "MORE")]
    pub more: Vec<PathBuf>,
    /// Output file (stdout when absent or `-`).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Emit::Llvm)]
    pub emit: Emit,
    /// Stop after this stage and print its IR: import, constprop, scrub,
    /// bufferize, dealloc, lower.
    #[arg(long, value_name = "STAGE")]
    pub stop_after: Option<String>,
    /// Directory of the LLVM tools (clang); default: LLVM 19, then PATH.
    #[arg(long)]
    pub llvm_bin: Option<PathBuf>,
    /// Don't fold when the results would take more than F times the bytes
    /// of the operands (default 16; see driver::DEFAULT_FOLD_EXPANSION_BOUND).
    #[arg(long, value_name = "F")]
    pub fold_expansion_bound: Option<f64>,
    /// With --emit onnx: write initializers of at least BYTES bytes to
    /// OUTPUT.data (ONNX external data); needs -o.
    #[arg(long, value_name = "BYTES")]
    pub external_data_threshold: Option<usize>,
    #[command(flatten)]
    pub shapes: super::ShapeFlags,
    #[command(flatten)]
    pub flags: PassFlags,
    #[command(flatten)]
    pub codegen: crate::target::CodegenFlags,
    #[command(flatten)]
    pub batch: crate::batch::BatchArgs,
}

pub fn run(args: CompileArgs) -> CmdResult {
    crate::batch::dispatch(args, compile_one)
}

fn compile_one(args: CompileArgs) -> CmdResult {
    let mut m = driver::import(&args.model, &args.shapes.options())?;
    let stop = args.stop_after.as_deref().or(match args.emit {
        Emit::Onnx | Emit::OnnxIr => Some("constprop"),
        Emit::Memref => Some("dealloc"),
        Emit::Llvm | Emit::Obj | Emit::Lib => None,
    });
    let bound = args
        .fold_expansion_bound
        .unwrap_or(driver::DEFAULT_FOLD_EXPANSION_BOUND);
    let cg = args.codegen.resolve(false, args.llvm_bin.as_deref())?;
    driver::run_stages_bounded(&mut m, stop, &args.flags, Some(bound), &cg)?;
    if let (Emit::Onnx, Some(t)) = (args.emit, args.external_data_threshold) {
        let Some(out) = args.output.as_deref().filter(|o| o.as_os_str() != "-") else {
            return Err(Failure::Io(
                "--external-data-threshold needs -o OUTPUT".into(),
            ));
        };
        return Ok(frontend::export::write_model(&m, out, Some(t))?);
    }
    if args.emit == Emit::Onnx {
        // To a file: the streaming writer of `onnxc fold` (no whole model
        // in memory); to stdout: encoded at once.
        if let Some(out) = args.output.as_deref().filter(|o| o.as_os_str() != "-") {
            return Ok(constprop::stream::write_model(&m, out, None)?);
        }
        let model = frontend::export::export_model(&m)?;
        return write_output(args.output.as_deref(), &frontend::export::encode(&model));
    }
    if stop.is_some() {
        let text = ir::text::print_module(&m, &ir::text::PrintOptions::default());
        return write_output(args.output.as_deref(), text.as_bytes());
    }
    match args.emit {
        Emit::Obj | Emit::Lib => {
            let Some(out) = &args.output else {
                return Err(Failure::Io("--emit obj|lib needs -o OUTPUT".into()));
            };
            super::native::build(
                m,
                args.emit == Emit::Lib,
                out,
                args.llvm_bin.as_deref(),
                &cg,
            )
        }
        _ => super::native::write_llvm(&m, args.output.as_deref()),
    }
}
