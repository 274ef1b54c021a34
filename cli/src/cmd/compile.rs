//! `onnxc compile MODEL.onnx -o OUT --emit KIND`.

use super::{CmdResult, PassFlags};
use std::path::PathBuf;

pub use pipeline::Emit;

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
    /// of the operands (default 16; see pipeline::DEFAULT_FOLD_EXPANSION_BOUND).
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
    pub codegen: pipeline::CodegenFlags,
    #[command(flatten)]
    pub batch: crate::batch::BatchArgs,
}

pub fn run(args: CompileArgs) -> CmdResult {
    crate::batch::dispatch(args, compile_one)
}

fn compile_one(args: CompileArgs) -> CmdResult {
    let opts = pipeline::CompileOptions {
        emit: args.emit,
        stop_after: args.stop_after.clone(),
        llvm_bin: args.llvm_bin.clone(),
        fold_expansion_bound: args.fold_expansion_bound,
        external_data_threshold: args.external_data_threshold,
        import: args.shapes.options(),
        codegen: args.codegen.resolve(false, args.llvm_bin.as_deref())?,
    };
    pipeline::compile(&args.model, args.output.as_deref(), &opts, &args.flags)
}
