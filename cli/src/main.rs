//! `onnxc`: the command line. Exit codes: 0 success, 1 a diagnostic about
//! the input, 2 a usage error (clap's own code), 70 an internal error.

mod batch;
mod cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "onnxc",
    version,
    about = "Ahead-of-time compiler for ONNX models: ONNX in, LLVM IR out"
)]
struct Cli {
    /// Log format for tracing output (filter with RUST_LOG).
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Copy, Clone, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Compile an ONNX model to onnx-level IR, memref-level IR or LLVM IR.
    Compile(cmd::compile::CompileArgs),
    /// Fold constants and write the simplified model back as ONNX.
    Fold(cmd::fold::FoldArgs),
    /// Compile a model through LLVM, run it on inputs, write output_N.pb.
    Run(cmd::run::RunArgs),
    /// Run passes on textual IR (MLIR syntax).
    Opt(cmd::opt::OptArgs),
    /// Run the compile daemon (docs/DAEMON.md).
    Serve(cmd::serve::ServeArgs),
    /// Talk to a compile daemon.
    Client(cmd::client::ClientArgs),
    /// Generate models of the built-in zoo.
    #[command(subcommand)]
    Zoo(cmd::zoo::ZooCmd),
    /// Benchmark compiles (time, memory, folding) against peer optimizers.
    Bench(bench::BenchArgs),
    /// Inspect or prune the library cache of Python sessions.
    #[command(subcommand)]
    Cache(cmd::cache::CacheCmd),
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.log_format);
    // A panic is a compiler bug: report it as one instead of aborting noisily.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("onnxc: internal compiler error: {info}");
        eprintln!("please report this with the input that triggered it");
    }));
    let result = std::panic::catch_unwind(|| match cli.command {
        Command::Compile(args) => cmd::compile::run(args),
        Command::Fold(args) => cmd::fold::run(args),
        Command::Run(args) => cmd::run::run(args),
        Command::Opt(args) => cmd::opt::run(args),
        Command::Zoo(args) => cmd::zoo::run(args),
        Command::Serve(args) => cmd::serve::run(args),
        Command::Client(args) => cmd::client::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Cache(args) => cmd::cache::run(args),
    });
    match result {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(cmd::Failure::Diagnostic(d))) => {
            eprintln!("{d}");
            ExitCode::from(1)
        }
        Ok(Err(cmd::Failure::Io(msg))) => {
            eprintln!("error: {msg}");
            ExitCode::from(1)
        }
        Ok(Err(cmd::Failure::Usage(msg))) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
        Ok(Err(cmd::Failure::Quiet)) => ExitCode::from(1),
        Err(_) => ExitCode::from(70),
    }
}
