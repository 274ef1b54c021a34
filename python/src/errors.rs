//! Failures of the pipeline as Python exceptions, named as onnxruntime's
//! where code catches them (docs/PYTHON.md, "Errors"): a diagnostic about
//! the model is an `onnxc.CompileError` (an `onnxc.Fail`, a
//! `RuntimeError`) carrying its node and op names, a malformed protobuf
//! an `InvalidProtobuf`, a request or input that does not fit the model an
//! `InvalidArgument` (a `ValueError`), a file problem an `OSError`, a
//! missing clang an `onnxc.ClangNotFoundError`.

use pipeline::Failure;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;

pyo3::create_exception!(
    onnxc,
    Fail,
    PyRuntimeError,
    "onnxruntime's Fail: the session could not be created or run."
);
pyo3::create_exception!(
    onnxc,
    CompileError,
    Fail,
    "The model cannot be compiled; `.diagnostics` lists what the compiler said."
);
pyo3::create_exception!(
    onnxc,
    InvalidProtobuf,
    CompileError,
    "onnxruntime's InvalidProtobuf: the bytes are not an ONNX model."
);
pyo3::create_exception!(
    onnxc,
    InvalidArgument,
    PyValueError,
    "onnxruntime's InvalidArgument: an input or option does not fit the model."
);
pyo3::create_exception!(
    onnxc,
    ClangNotFoundError,
    PyRuntimeError,
    "clang (LLVM), which builds a compiled model's library, is not installed."
);

/// One message of the compiler, about an ONNX node and op when it knows them.
#[pyclass(frozen, module = "onnxc", get_all)]
#[derive(Clone)]
pub struct Diagnostic {
    /// 'error', 'warning' or 'note'.
    pub severity: &'static str,
    pub message: String,
    /// The ONNX node's name, when the message is about one.
    pub node: Option<String>,
    /// The op, e.g. 'onnx.Conv'.
    pub op: Option<String>,
    pub notes: Vec<String>,
    /// The whole diagnostic as the CLI prints it.
    pub text: String,
}

#[pymethods]
impl Diagnostic {
    fn __str__(&self) -> String {
        self.text.clone()
    }
    fn __repr__(&self) -> String {
        format!(
            "Diagnostic(severity={:?}, node={:?}, op={:?}, message={:?})",
            self.severity, self.node, self.op, self.message
        )
    }
}

impl Diagnostic {
    pub fn of(d: &ir::Diagnostic) -> Diagnostic {
        use ir::diag::{Location, Severity};
        Diagnostic {
            severity: match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Note => "note",
            },
            message: d.message.clone(),
            node: match &d.loc {
                Location::Name(n) => Some(n.to_string()),
                _ => None,
            },
            op: d.op.clone(),
            notes: d.notes.clone(),
            text: d.to_string(),
        }
    }
}

/// A `CompileError` (an `InvalidProtobuf` for bytes that do not decode)
/// with `message` and the diagnostics.
pub fn compile_error(py: Python<'_>, message: String, diags: Vec<Diagnostic>) -> PyErr {
    let protobuf = diags.iter().any(|d| {
        [frontend::load::MALFORMED, frontend::load::EMPTY]
            .iter()
            .any(|p| d.message.starts_with(p))
    });
    let err = match protobuf {
        true => InvalidProtobuf::new_err(message),
        false => CompileError::new_err(message),
    };
    let list = PyList::new(py, diags).map(|l| err.value(py).setattr("diagnostics", l));
    match list {
        Ok(Ok(())) => err,
        Ok(Err(e)) | Err(e) => e,
    }
}

/// The Python exception for a pipeline failure.
pub fn to_py(py: Python<'_>, f: Failure) -> PyErr {
    match f {
        Failure::Diagnostic(d) => compile_error(py, d.to_string(), vec![Diagnostic::of(&d)]),
        // Options that do not fit the model (an input_shapes name or rank).
        Failure::Usage(m) => InvalidArgument::new_err(m.replace("--input-shape", "input_shapes")),
        Failure::Io(m) => PyOSError::new_err(m),
        Failure::Quiet => compile_error(py, "compilation failed".into(), Vec::new()),
    }
}

/// What to install when clang is missing.
pub fn clang_not_found(llvm_bin: Option<&std::path::Path>) -> PyErr {
    let looked = match llvm_bin {
        Some(d) => format!("in {} (ONNXC_LLVM_BIN)", d.display()),
        None => "in /usr/lib/llvm-19/bin or on PATH".into(),
    };
    ClangNotFoundError::new_err(format!(
        "clang not found {looked}: onnxc builds each model into a shared library with \
         LLVM's clang. Install clang (LLVM 19 or newer), e.g. `apt-get install clang-19` \
         on Debian/Ubuntu or `dnf install clang` on Fedora, or set ONNXC_LLVM_BIN to \
         a directory holding clang."
    ))
}
