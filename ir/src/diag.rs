//! Diagnostics: what went wrong, on which op, at which ONNX node.

use std::fmt;
use std::sync::Arc;

/// Where an op came from: the ONNX node name, or a file position of textual IR.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Location {
    #[default]
    Unknown,
    /// `loc("conv1")`: the ONNX node name.
    Name(Arc<str>),
    /// `loc("file.mlir":3:5)`.
    File { file: Arc<str>, line: u32, col: u32 },
}

impl Location {
    pub fn name(s: &str) -> Location {
        Location::Name(Arc::from(s))
    }
    pub fn is_known(&self) -> bool {
        !matches!(self, Location::Unknown)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Unknown => f.write_str("unknown location"),
            Location::Name(n) => write!(f, "node '{n}'"),
            Location::File { file, line, col } => write!(f, "{file}:{line}:{col}"),
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
    Note,
}

/// An error (or warning) about the input, naming the op and its location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub loc: Location,
    /// The op the message is about, e.g. `onnx.Conv` or `memref.alloc`.
    pub op: Option<String>,
    pub message: String,
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            loc: Location::Unknown,
            op: None,
            message: message.into(),
            notes: Vec::new(),
        }
    }
    pub fn warning(message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(message)
        }
    }
    pub fn at(mut self, loc: Location) -> Self {
        self.loc = loc;
        self
    }
    pub fn on_op(mut self, op: impl Into<String>) -> Self {
        self.op = Some(op.into());
        self
    }
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        if self.loc.is_known() {
            write!(f, "{}: ", self.loc)?;
        }
        write!(f, "{sev}: ")?;
        if let Some(op) = &self.op {
            write!(f, "'{op}' ")?;
        }
        f.write_str(&self.message)?;
        for n in &self.notes {
            write!(f, "\n  note: {n}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

pub type Result<T, E = Diagnostic> = std::result::Result<T, E>;
