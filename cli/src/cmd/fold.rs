//! `onnxc fold MODEL.onnx -o OUT.onnx`: constant folding, ONNX to ONNX.

use super::{CmdResult, PassFlags};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct FoldArgs {
    pub model: PathBuf,
    #[arg(short = 'o', long)]
    pub output: PathBuf,
    /// Don't fold when the results would take more than F times the bytes
    /// of the operands (default: a fold whose results take more than 1 KiB
    /// beyond the constants it consumes draws on one budget per model,
    /// 256 KiB or 1/64 of its constants).
    #[arg(long, value_name = "F")]
    pub fold_expansion_bound: Option<f64>,
    /// Write initializers of at least BYTES bytes to OUT.onnx.data (ONNX
    /// external data) instead of inside the model.
    #[arg(long, value_name = "BYTES")]
    pub external_data_threshold: Option<usize>,
    #[command(flatten)]
    pub shapes: super::ShapeFlags,
    #[command(flatten)]
    pub flags: PassFlags,
}

pub fn run(args: FoldArgs) -> CmdResult {
    let opts = pipeline::FoldOptions {
        expansion_bound: args.fold_expansion_bound,
        external_data_threshold: args.external_data_threshold,
        import: args.shapes.options(),
    };
    let t = pipeline::fold(&args.model, &args.output, &opts, &args.flags)?;
    if args.flags.timing {
        eprintln!(
            "  fold phases (wall s): load+import {:.4}, passes {:.4}, write {:.4}",
            t.imported.as_secs_f64(),
            (t.folded - t.imported).as_secs_f64(),
            (t.written - t.folded).as_secs_f64()
        );
    }
    if args.flags.stats {
        let pool = ir::elements::pool::stats();
        eprintln!("  {:>12}  peak heap constant bytes", pool.peak);
        eprintln!("  {:>12}  live heap constant buffers at exit", pool.count);
        if let Some(kb) = peak_rss_kib() {
            eprintln!("  {:>12}  peak RSS bytes of onnxc fold", kb * 1024);
        }
    }
    Ok(())
}

/// The process's peak resident set (VmHWM), in KiB, where /proc has it.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
