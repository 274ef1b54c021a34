//! Failures of a command, and the instrumentation flags of the pass
//! pipeline (`--timing`, `--stats`, `--print-ir-after`, `--verify-each`).

use ir::pass::{PassManager, PrintIr, Timing, VerifyEach};
use std::sync::{Arc, Mutex};

/// Why a command failed; the CLI turns it into a message and exit code 1.
pub enum Failure {
    Diagnostic(ir::Diagnostic),
    Io(String),
    /// A command line that does not fit the input (exit code 2).
    Usage(String),
    /// Already reported (e.g. diagnostics verified against expectations).
    Quiet,
}

impl Failure {
    /// The failure as one message (empty when already reported).
    pub fn message(&self) -> String {
        match self {
            Failure::Diagnostic(d) => d.to_string(),
            Failure::Io(m) | Failure::Usage(m) => m.clone(),
            Failure::Quiet => String::new(),
        }
    }
}

impl From<ir::Diagnostic> for Failure {
    fn from(d: ir::Diagnostic) -> Self {
        Failure::Diagnostic(d)
    }
}

pub type CmdResult = Result<(), Failure>;

pub fn io_err(what: &str, path: &std::path::Path, e: std::io::Error) -> Failure {
    Failure::Io(format!("cannot {what} '{}': {e}", path.display()))
}

/// Where pass warnings go instead of stderr (a library caller's list).
pub type WarningSink = Arc<Mutex<Vec<ir::Diagnostic>>>;

/// Instrumentation flags common to `opt` and `compile`.
#[derive(Clone, Default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct PassFlags {
    /// Print a per-pass timing table to stderr.
    #[cfg_attr(feature = "clap", arg(long))]
    pub timing: bool,
    /// Print the IR after every pass to stderr.
    #[cfg_attr(feature = "clap", arg(long))]
    pub print_ir_after_all: bool,
    /// Print the IR after the named pass (repeatable).
    #[cfg_attr(feature = "clap", arg(long, value_name = "PASS"))]
    pub print_ir_after: Vec<String>,
    /// Run the verifier after every pass.
    #[cfg_attr(feature = "clap", arg(long))]
    pub verify_each: bool,
    /// Print pass statistics (counters, live constant bytes) to stderr.
    #[cfg_attr(feature = "clap", arg(long))]
    pub stats: bool,
    /// Collects the passes' warnings; when absent they go to stderr.
    #[cfg_attr(feature = "clap", arg(skip))]
    pub warnings: Option<WarningSink>,
}

/// Shared state the instrumentation reports into.
#[derive(Default)]
pub struct Reports {
    pub timing: Arc<Mutex<Timing>>,
    pub live_bytes: Arc<Mutex<Vec<(String, u64)>>>,
}

struct SharedTiming(Arc<Mutex<Timing>>);

impl ir::pass::Instrumentation for SharedTiming {
    fn after_pass(
        &mut self,
        pass: &str,
        m: &mut ir::Module,
        elapsed: std::time::Duration,
    ) -> ir::Result<()> {
        match self.0.lock() {
            Ok(mut t) => t.after_pass(pass, m, elapsed),
            Err(_) => Ok(()),
        }
    }
}

impl PassFlags {
    /// Adds the requested instrumentation; GC always runs between passes.
    pub fn instrument(&self, pm: &mut PassManager) -> Reports {
        let reports = Reports::default();
        if self.verify_each {
            pm.instrument(Box::new(VerifyEach));
        }
        let live = reports.live_bytes.clone();
        pm.instrument(Box::new(ir::pass::ConstantGc {
            on_collect: Box::new(move |pass, bytes| {
                if let Ok(mut l) = live.lock() {
                    l.push((pass.to_string(), bytes));
                }
            }),
        }));
        if self.timing {
            pm.instrument(Box::new(SharedTiming(reports.timing.clone())));
        }
        if self.print_ir_after_all || !self.print_ir_after.is_empty() {
            pm.instrument(Box::new(PrintIr {
                only: if self.print_ir_after_all {
                    Vec::new()
                } else {
                    self.print_ir_after.clone()
                },
                render: |m| ir::text::print_module(m, &ir::text::PrintOptions::default()),
                sink: Box::new(|pass, text| {
                    eprintln!("// -----// IR Dump After {pass} //----- //\n{text}")
                }),
            }));
        }
        reports
    }

    /// Prints the timing and statistics reports that were asked for, and
    /// hands the warnings to the sink (stderr without one).
    pub fn report(&self, reports: &Reports, pm: &PassManager) {
        if self.timing {
            if let Ok(t) = reports.timing.lock() {
                eprint!("{}", t.table());
            }
        }
        if self.stats {
            eprintln!("===- statistics -===");
            for (k, v) in &pm.cx.stats {
                eprintln!("  {v:>12}  {k}");
            }
            if let Ok(l) = reports.live_bytes.lock() {
                for (pass, bytes) in l.iter() {
                    eprintln!("  {bytes:>12}  live constant bytes after {pass}");
                }
            }
        }
        match &self.warnings {
            Some(sink) => {
                if let Ok(mut s) = sink.lock() {
                    s.extend(pm.cx.warnings.iter().cloned());
                }
            }
            None => {
                for w in &pm.cx.warnings {
                    eprintln!("{w}");
                }
            }
        }
    }
}

/// Writes `bytes` to `path` atomically (temp file + rename), or stdout for
/// `-` or no path.
pub fn write_output(path: Option<&std::path::Path>, bytes: &[u8]) -> CmdResult {
    use std::io::Write;
    match path {
        None => std::io::stdout()
            .write_all(bytes)
            .map_err(|e| Failure::Io(format!("cannot write to stdout: {e}"))),
        Some(p) if p.as_os_str() == "-" => std::io::stdout()
            .write_all(bytes)
            .map_err(|e| Failure::Io(format!("cannot write to stdout: {e}"))),
        Some(p) => ir::output::write_file(p, bytes).map_err(|e| io_err("write", p, e)),
    }
}

/// `--input-shape NAME=DIMS` (repeatable), shared by the commands that
/// import a model.
#[derive(Clone, Default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct ShapeFlags {
    /// Fix an input's dims before compiling: `NAME=1x3x640x640`; `?` keeps
    /// a dim dynamic (`NAME=?x3x224x224`). Repeatable.
    #[cfg_attr(
        feature = "clap",
        arg(long = "input-shape", value_name = "NAME=DIMS", value_parser = frontend::import::InputShape::parse)
    )]
    pub input_shapes: Vec<frontend::import::InputShape>,
}

impl ShapeFlags {
    pub fn options(&self) -> frontend::import::ImportOptions {
        frontend::import::ImportOptions {
            input_shapes: self.input_shapes.clone(),
            ..Default::default()
        }
    }
}
