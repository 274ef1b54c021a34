//! `onnxc compile A.onnx B.onnx DIR/ --out-dir OUT -j N`: many models in
//! parallel. Each model is compiled by a child `onnxc` running the very
//! same command line for one model (so every flag means what it means for
//! a single compile, a crash stays confined to its model, and the peak
//! memory of each compile is its own), or by a daemon with `--daemon`.

use crate::cmd::compile::CompileArgs;
use crate::cmd::{io_err, CmdResult, Failure};
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(clap::Args, Default, Clone)]
pub struct BatchArgs {
    /// Batch mode: write one artifact per model into this directory.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// Models compiled at once [default: number of cores].
    #[arg(short = 'j', long)]
    pub jobs: Option<usize>,
    /// Plain progress lines instead of a progress bar.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Forward the compile to a running `onnxc serve` (unix:PATH or
    /// tcp:HOST:PORT).
    #[arg(long, value_name = "ADDR")]
    pub daemon: Option<String>,
}

/// Set in the environment of child compiles: the model and the output.
const CHILD_MODEL: &str = "ONNXC_INTERNAL_BATCH_MODEL";
const CHILD_OUTPUT: &str = "ONNXC_INTERNAL_BATCH_OUTPUT";
/// Last stderr line of a child: its peak resident memory.
const PEAK_MARK: &str = "onnxc-batch-peak-kib: ";

/// Entry point of `onnxc compile`: a child compile, a batch, a compile
/// forwarded to a daemon, or `one` for a plain single-model compile.
pub fn dispatch(mut args: CompileArgs, one: fn(CompileArgs) -> CmdResult) -> CmdResult {
    if let (Some(model), Some(out)) = (
        std::env::var_os(CHILD_MODEL),
        std::env::var_os(CHILD_OUTPUT),
    ) {
        args.model = model.into();
        args.output = Some(out.into());
        args.more.clear();
        args.batch = BatchArgs::default();
        let r = one(args);
        if let Some(k) = daemon::proc_status_kib("VmHWM") {
            eprintln!("{PEAK_MARK}{k}");
        }
        return r;
    }
    if !args.more.is_empty() || args.batch.out_dir.is_some() || args.model.is_dir() {
        return run(args);
    }
    if let Some(addr) = &args.batch.daemon {
        let mut c = crate::cmd::client::Client::connect(addr)?;
        let emit = emit_name(&args);
        return crate::cmd::client::compile_remote(
            &mut c,
            &args.model,
            &remote_options(&args, &emit),
            args.output.as_deref(),
        );
    }
    one(args)
}

/// What `compile --daemon` forwards: the emit kind, --stop-after,
/// --fold-expansion-bound and --input-shape.
fn remote_options<'a>(args: &'a CompileArgs, emit: &'a str) -> crate::cmd::client::Remote<'a> {
    crate::cmd::client::Remote {
        emit,
        stop_after: args.stop_after.as_deref(),
        fold_expansion_bound: args.fold_expansion_bound,
        input_shapes: &args.shapes.input_shapes,
        ..Default::default()
    }
}

fn emit_name(args: &CompileArgs) -> String {
    use clap::ValueEnum;
    args.emit
        .to_possible_value()
        .map_or_else(|| "llvm".into(), |v| v.get_name().to_string())
}

/// Artifact file extension for an emit kind (`--stop-after` prints IR).
fn extension(emit: &str, stop_after: Option<&str>) -> &'static str {
    match emit {
        "onnx" => "onnx",
        _ if stop_after.is_some() => "mlir",
        "onnx-ir" => "onnx.mlir",
        "memref" => "mlir",
        "llvm" => "ll",
        "obj" => "o",
        "lib" => "so",
        _ => "out",
    }
}

struct Item {
    model: PathBuf,
    output: PathBuf,
}

struct Outcome {
    ok: bool,
    time: Duration,
    peak_kib: Option<u64>,
    size: Option<u64>,
}

/// Models named on the command line; directories give their `*.onnx`
/// files (recursively, sorted), mirrored under the output directory.
fn collect(inputs: &[PathBuf], out_dir: &Path, ext: &str) -> Result<Vec<Item>, Failure> {
    let mut items = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let mut found = Vec::new();
            walk(input, &mut found)?;
            found.sort();
            for model in found {
                let rel = model
                    .strip_prefix(input)
                    .unwrap_or(&model)
                    .with_extension(ext);
                items.push(Item {
                    output: out_dir.join(rel),
                    model,
                });
            }
        } else {
            let stem = input.file_stem().unwrap_or(input.as_os_str());
            items.push(Item {
                output: out_dir.join(Path::new(stem).with_extension(ext)),
                model: input.clone(),
            });
        }
    }
    let mut seen: HashMap<&Path, &Path> = HashMap::new();
    for it in &items {
        if let Some(other) = seen.insert(&it.output, &it.model) {
            return Err(Failure::Io(format!(
                "'{}' and '{}' would both be written to '{}'",
                other.display(),
                it.model.display(),
                it.output.display()
            )));
        }
    }
    Ok(items)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Failure> {
    for e in std::fs::read_dir(dir).map_err(|e| io_err("read directory", dir, e))? {
        let path = e.map_err(|e| io_err("read directory", dir, e))?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|x| x == "onnx") {
            out.push(path);
        }
    }
    Ok(())
}

enum Progress {
    Bar(indicatif::ProgressBar),
    Lines { done: AtomicUsize, total: usize },
}

impl Progress {
    fn new(total: usize, quiet: bool) -> Progress {
        if quiet || !std::io::stderr().is_terminal() {
            return Progress::Lines {
                done: AtomicUsize::new(0),
                total,
            };
        }
        let bar = indicatif::ProgressBar::new(total as u64);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {pos}/{len} {msg}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        Progress::Bar(bar)
    }

    fn finished(&self, model: &Path, o: &Outcome, log: &str) {
        let status = if o.ok { "ok" } else { "FAILED" };
        let mut text = String::new();
        if !log.is_empty() {
            text = format!("{}:\n{}", model.display(), log.trim_end());
        }
        match self {
            Progress::Bar(bar) => {
                if !text.is_empty() {
                    bar.println(text);
                }
                bar.set_message(format!("{status} {}", model.display()));
                bar.inc(1);
            }
            Progress::Lines { done, total } => {
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                if !text.is_empty() {
                    eprintln!("{text}");
                }
                eprintln!(
                    "[{n}/{total}] {status} {} ({:.2} s)",
                    model.display(),
                    o.time.as_secs_f64()
                );
            }
        }
    }

    fn finish(&self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}

fn run(args: CompileArgs) -> CmdResult {
    if args.output.is_some() {
        return Err(Failure::Io(
            "-o names a single output: use --out-dir DIR to compile several models".into(),
        ));
    }
    let Some(out_dir) = args.batch.out_dir.clone() else {
        return Err(Failure::Io(
            "compiling several models needs --out-dir DIR".into(),
        ));
    };
    let emit = emit_name(&args);
    let ext = extension(&emit, args.stop_after.as_deref());
    let inputs: Vec<PathBuf> = std::iter::once(args.model.clone())
        .chain(args.more.iter().cloned())
        .collect();
    let items = collect(&inputs, &out_dir, ext)?;
    if items.is_empty() {
        return Err(Failure::Io("no .onnx models found".into()));
    }
    for it in &items {
        if let Some(dir) = it.output.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io_err("create", dir, e))?;
        }
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = args.batch.jobs.unwrap_or(cores).clamp(1, items.len());
    let progress = Progress::new(items.len(), args.batch.quiet);
    let results: Vec<Mutex<Option<Outcome>>> = items.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                let mut client = None;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let (Some(it), Some(slot)) = (items.get(i), results.get(i)) else {
                        break;
                    };
                    let (o, log) = match &args.batch.daemon {
                        Some(addr) => compile_remote(&mut client, addr, it, &emit, &args),
                        None => compile_child(it),
                    };
                    progress.finished(&it.model, &o, &log);
                    if let Ok(mut slot) = slot.lock() {
                        *slot = Some(o);
                    }
                }
            });
        }
    });
    progress.finish();
    let outcomes: Vec<Option<Outcome>> = results
        .into_iter()
        .map(|m| m.into_inner().ok().flatten())
        .collect();
    print!("{}", summary(&items, &outcomes));
    if outcomes.iter().all(|o| o.as_ref().is_some_and(|o| o.ok)) {
        Ok(())
    } else {
        Err(Failure::Quiet)
    }
}

/// Runs this same command line in a child restricted to one model.
fn compile_child(it: &Item) -> (Outcome, String) {
    let start = Instant::now();
    let out = std::env::current_exe().and_then(|exe| {
        std::process::Command::new(exe)
            .args(std::env::args_os().skip(1))
            .env(CHILD_MODEL, &it.model)
            .env(CHILD_OUTPUT, &it.output)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .output()
    });
    let time = start.elapsed();
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            let o = Outcome {
                ok: false,
                time,
                peak_kib: None,
                size: None,
            };
            return (o, format!("error: cannot run the compiler: {e}"));
        }
    };
    let mut log = String::new();
    let mut peak_kib = None;
    for line in String::from_utf8_lossy(&out.stderr).lines() {
        match line.strip_prefix(PEAK_MARK) {
            Some(k) => peak_kib = k.trim().parse().ok(),
            None => {
                log.push_str(line);
                log.push('\n');
            }
        }
    }
    let ok = out.status.success();
    if !ok && out.status.code().is_none() {
        log.push_str(&format!(
            "error: the compiler was killed ({})\n",
            out.status
        ));
    }
    let size = ok
        .then(|| std::fs::metadata(&it.output).ok().map(|m| m.len()))
        .flatten();
    (
        Outcome {
            ok,
            time,
            peak_kib,
            size,
        },
        log,
    )
}

/// One request per model to the daemon, one connection per batch thread.
fn compile_remote(
    client: &mut Option<crate::cmd::client::Client>,
    addr: &str,
    it: &Item,
    emit: &str,
    args: &CompileArgs,
) -> (Outcome, String) {
    let start = Instant::now();
    let result = (|| {
        if client.is_none() {
            *client = Some(crate::cmd::client::Client::connect(addr)?);
        }
        let Some(c) = client.as_mut() else {
            return Err(Failure::Io("no connection".into()));
        };
        crate::cmd::client::compile_remote(
            c,
            &it.model,
            &remote_options(args, emit),
            Some(&it.output),
        )
    })();
    let time = start.elapsed();
    let (ok, log) = match result {
        Ok(()) => (true, String::new()),
        Err(f) => (false, f.message()),
    };
    if !ok {
        client.take(); // the connection may be out of step: reconnect
    }
    let size = ok
        .then(|| std::fs::metadata(&it.output).ok().map(|m| m.len()))
        .flatten();
    (
        Outcome {
            ok,
            time,
            peak_kib: None,
            size,
        },
        log,
    )
}

fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{bytes} B")
    }
}

fn summary(items: &[Item], outcomes: &[Option<Outcome>]) -> String {
    let names: Vec<String> = items
        .iter()
        .map(|i| i.model.display().to_string())
        .collect();
    let w = names.iter().map(String::len).max().unwrap_or(5).max(5);
    let mut s = format!(
        "{:<w$}  {:<6}  {:>8}  {:>10}  {:>10}\n",
        "model", "status", "time", "peak mem", "output"
    );
    let (mut ok, mut failed) = (0, 0);
    for (name, o) in names.iter().zip(outcomes) {
        let Some(o) = o else {
            failed += 1;
            s.push_str(&format!("{name:<w$}  {:<6}\n", "FAILED"));
            continue;
        };
        if o.ok {
            ok += 1;
        } else {
            failed += 1;
        }
        s.push_str(&format!(
            "{name:<w$}  {:<6}  {:>6.2} s  {:>10}  {:>10}\n",
            if o.ok { "ok" } else { "FAILED" },
            o.time.as_secs_f64(),
            o.peak_kib.map_or("-".into(), |k| human(k * 1024)),
            o.size.map_or("-".into(), human),
        ));
    }
    s.push_str(&format!(
        "{} models: {ok} ok, {failed} failed\n",
        items.len()
    ));
    s
}
