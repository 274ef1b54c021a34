//! `onnxc opt FILE.mlir -p PIPELINE [--emit mlir|llvm]`.

use super::{io_err, write_output, CmdResult, Failure, PassFlags};
use ir::pass::PassManager;
use std::path::PathBuf;

#[derive(Copy, Clone, PartialEq, Eq, clap::ValueEnum)]
pub enum OptEmit {
    Mlir,
    Llvm,
}

#[derive(clap::Args)]
pub struct OptArgs {
    /// Input file in MLIR syntax (`-` for stdin).
    #[arg(required_unless_present = "list_passes")]
    pub input: Option<PathBuf>,
    /// Comma-separated pass pipeline, e.g. "canonicalize,dealloc-pipeline".
    #[arg(short = 'p', long = "pipeline", default_value = "")]
    pub pipeline: String,
    #[arg(long, value_enum, default_value_t = OptEmit::Mlir)]
    pub emit: OptEmit,
    /// Output file (default stdout).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Print ops in the generic form.
    #[arg(long)]
    pub generic: bool,
    /// Print locations (`loc(...)`).
    #[arg(long)]
    pub debug_info: bool,
    /// Check diagnostics against `// expected-error {{...}}` comments.
    #[arg(long)]
    pub verify_diagnostics: bool,
    /// List the registered passes and exit.
    #[arg(long)]
    pub list_passes: bool,
    #[command(flatten)]
    pub flags: PassFlags,
}

pub fn run(args: OptArgs) -> CmdResult {
    let registry = pipeline::registry();
    if args.list_passes {
        for (name, summary) in registry.list() {
            println!("  {name:<32} {summary}");
        }
        return Ok(());
    }
    let Some(input) = &args.input else {
        return Err(Failure::Io("no input file".into()));
    };
    let (src, file_name) = read_input(input)?;
    let outcome = compile(&args, &registry, &src, &file_name);
    if args.verify_diagnostics {
        return crate::cmd::opt::check_expected(&src, &file_name, outcome.err());
    }
    let text = outcome?;
    write_output(args.output.as_deref(), text.as_bytes())
}

fn read_input(path: &std::path::Path) -> Result<(String, String), Failure> {
    if path.as_os_str() == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .map_err(|e| Failure::Io(format!("cannot read stdin: {e}")))?;
        return Ok((s, "<stdin>".to_string()));
    }
    let s = std::fs::read_to_string(path).map_err(|e| io_err("read", path, e))?;
    Ok((s, path.display().to_string()))
}

fn compile(
    args: &OptArgs,
    registry: &ir::pass::PassRegistry,
    src: &str,
    file: &str,
) -> Result<String, Failure> {
    let mut m = ir::text::parse_module(src, file)?;
    ir::verify(&m)?;
    let mut pm = PassManager::new();
    pm.extend(registry.parse(&args.pipeline)?);
    if args.emit == OptEmit::Llvm {
        pm.extend(registry.parse(pipeline::LLVM_LOWERING)?);
    }
    let reports = args.flags.instrument(&mut pm);
    let run = pm.run(&mut m);
    args.flags.report(&reports, &pm);
    run?;
    ir::verify(&m)?;
    match args.emit {
        OptEmit::Mlir => {
            let opts = ir::text::PrintOptions {
                debug_info: args.debug_info,
                generic: args.generic,
            };
            Ok(ir::text::print_module(&m, &opts))
        }
        OptEmit::Llvm => Ok(lower::emit_llvm(&m, &lower::EmitOptions::default())?),
    }
}

/// `--verify-diagnostics`: every `expected-error {{msg}}` must be matched by
/// the produced error (same line, message containing `msg`), and vice versa.
pub fn check_expected(src: &str, file: &str, failure: Option<Failure>) -> CmdResult {
    let expected = parse_expectations(src);
    let produced = match failure {
        None => None,
        Some(Failure::Diagnostic(d)) => Some(d),
        Some(other) => return Err(other),
    };
    let Some(d) = produced else {
        if expected.is_empty() {
            return Ok(());
        }
        eprintln!(
            "{file}: expected {} error(s) but the input compiled cleanly",
            expected.len()
        );
        return Err(Failure::Quiet);
    };
    let line = match &d.loc {
        ir::Location::File { line, .. } => Some(*line),
        _ => None,
    };
    let matched = expected
        .iter()
        .any(|(l, msg)| d.message.contains(msg.as_str()) && (line.is_none() || line == Some(*l)));
    if matched {
        Ok(())
    } else {
        eprintln!("{file}: unexpected diagnostic: {d}");
        for (l, msg) in &expected {
            eprintln!("  expected at line {l}: {msg}");
        }
        Err(Failure::Quiet)
    }
}

/// `// expected-error {{msg}}` applies to its own line; `@+N`/`@-N` shift it.
fn parse_expectations(src: &str) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for (i, line) in src.lines().enumerate() {
        let Some(pos) = line.find("expected-error") else {
            continue;
        };
        let rest = &line[pos + "expected-error".len()..];
        let mut target = i as i64 + 1;
        let rest = rest.trim_start();
        let rest = if let Some(r) = rest.strip_prefix('@') {
            let end = r
                .find(|c: char| c.is_whitespace() || c == '{')
                .unwrap_or(r.len());
            target += r[..end].parse::<i64>().unwrap_or(0);
            &r[end..]
        } else {
            rest
        };
        if let (Some(a), Some(b)) = (rest.find("{{"), rest.rfind("}}")) {
            if a + 2 <= b {
                out.push((target.max(0) as u32, rest[a + 2..b].to_string()));
            }
        }
    }
    out
}
