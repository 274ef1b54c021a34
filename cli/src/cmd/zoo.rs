//! `onnxc zoo list` and `onnxc zoo gen NAME -o FILE.onnx [--inputs DIR]`.

use super::{io_err, write_output, CmdResult, Failure};
use ir::elements::{DType, Elements, WideNum};
use std::path::PathBuf;

#[derive(clap::Subcommand)]
pub enum ZooCmd {
    /// List the models the zoo generates.
    List,
    /// Write a generated model.
    Gen(GenArgs),
}

#[derive(clap::Args)]
pub struct GenArgs {
    pub name: String,
    #[arg(short = 'o', long)]
    pub output: PathBuf,
    /// Seed of the weights and sample inputs.
    #[arg(long, default_value_t = models::GenOptions::default().seed)]
    pub seed: u64,
    /// Weights as ConstantOfShape nodes, like the onnx package's light models.
    #[arg(long)]
    pub light: bool,
    /// Also write the sample inputs as input_N.pb into this directory.
    #[arg(long, value_name = "DIR")]
    pub inputs: Option<PathBuf>,
}

fn diag(msg: String) -> Failure {
    Failure::Diagnostic(ir::Diagnostic::error(msg))
}

pub fn run(cmd: ZooCmd) -> CmdResult {
    match cmd {
        ZooCmd::List => {
            for e in models::zoo() {
                println!("{:<16} {}", e.name, e.summary);
            }
            Ok(())
        }
        ZooCmd::Gen(args) => {
            let opts = models::GenOptions {
                seed: args.seed,
                light: args.light,
            };
            let model = models::generate(&args.name, &opts).map_err(diag)?;
            write_output(Some(&args.output), &models::encode(&model))?;
            if let Some(dir) = &args.inputs {
                std::fs::create_dir_all(dir).map_err(|e| io_err("create", dir, e))?;
                for (i, (name, e)) in sample_inputs(&args.name, args.seed)?
                    .into_iter()
                    .enumerate()
                {
                    frontend::tensor_io::write_tensor_pb(
                        &dir.join(format!("input_{i}.pb")),
                        &name,
                        &e,
                    )?;
                }
            }
            Ok(())
        }
    }
}

/// The zoo's deterministic sample inputs as tensors: token-id inputs are
/// int64, everything else f32.
pub fn sample_inputs(name: &str, seed: u64) -> Result<Vec<(String, Elements)>, Failure> {
    let tokens = models::entry(name).map_err(diag)?.token_vocab;
    models::default_input(name, seed)
        .map_err(diag)?
        .into_iter()
        .map(|(input, shape, values)| {
            let (dtype, wide): (DType, Vec<WideNum>) = match tokens {
                Some(_) => (
                    DType::I64,
                    values
                        .iter()
                        .map(|&v| WideNum::from_i64(v as i64))
                        .collect(),
                ),
                None => (
                    DType::F32,
                    values
                        .iter()
                        .map(|&v| WideNum::from_f64(f64::from(v)))
                        .collect(),
                ),
            };
            let e = Elements::from_wide(dtype, shape, &wide).map_err(|e| diag(e.to_string()))?;
            Ok((input, e))
        })
        .collect()
}
