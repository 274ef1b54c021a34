//! `onnxc compile MODEL.onnx -o OUT --emit KIND`.

use super::{write_output, CmdResult, Failure, PassFlags};
use crate::driver;
use std::path::PathBuf;

#[derive(Copy, Clone, PartialEq, Eq, clap::ValueEnum)]
pub enum Emit {
    /// The onnx-dialect IR after import and constant propagation.
    OnnxIr,
    /// Memref-level IR after bufferization and deallocation.
    Memref,
    /// Textual LLVM IR.
    Llvm,
}

#[derive(clap::Args)]
pub struct CompileArgs {
    /// The ONNX model.
    pub model: PathBuf,
    /// Output file (stdout when absent or `-`).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Emit::Llvm)]
    pub emit: Emit,
    /// Stop after this stage and print its IR: import, constprop, scrub,
    /// bufferize, dealloc, lower.
    #[arg(long, value_name = "STAGE")]
    pub stop_after: Option<String>,
    #[command(flatten)]
    pub flags: PassFlags,
}

pub fn run(args: CompileArgs) -> CmdResult {
    let mut m = driver::import(&args.model)?;
    let stop = args.stop_after.as_deref().or(match args.emit {
        Emit::OnnxIr => Some("constprop"),
        Emit::Memref => Some("dealloc"),
        Emit::Llvm => None,
    });
    driver::run_stages(&mut m, stop, &args.flags)?;
    let text = if args.emit == Emit::Llvm && stop.is_none() {
        let mut text = lower::emit_llvm(&m, &lower::EmitOptions::default())?;
        text.push('\n');
        text.push_str(&lower::cabi::emit_entry(
            &m,
            driver::MAIN_GRAPH,
            driver::ENTRY,
        )?);
        text
    } else {
        ir::text::print_module(&m, &ir::text::PrintOptions::default())
    };
    write_output(args.output.as_deref(), text.as_bytes()).map_err(|e| match e {
        Failure::Io(s) => Failure::Io(s),
        other => other,
    })
}
