//! `onnxc fold MODEL.onnx -o OUT.onnx`: constant folding, ONNX to ONNX.

use super::{write_output, CmdResult, PassFlags};
use crate::driver;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct FoldArgs {
    pub model: PathBuf,
    #[arg(short = 'o', long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub flags: PassFlags,
}

pub fn run(args: FoldArgs) -> CmdResult {
    let mut m = driver::import(&args.model)?;
    driver::run_stages(&mut m, Some("constprop"), &args.flags)?;
    let model = frontend::export::export_model(&m)?;
    write_output(Some(&args.output), &frontend::export::encode(&model))
}
