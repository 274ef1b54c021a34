//! `onnxc._onnxc`: the native half of the onnxc Python package. It runs
//! the compile pipeline of the CLI (the `pipeline` crate) and calls
//! compiled models through their C API (docs/ABI.md); `onnxc/__init__.py`
//! is the Python-facing layer.

mod cache;
mod errors;
mod info;
mod session;
mod signature;

use errors::{clang_not_found, compile_error, to_py, Diagnostic};
use frontend::import::{ImportOptions, InputShape};
use pipeline::{Failure, PassFlags, WarningSink};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::{Path, PathBuf};

pyo3::create_exception!(
    onnxc,
    CompileWarning,
    pyo3::exceptions::PyUserWarning,
    "A warning of the compiler (e.g. a pass that did not converge)."
);

/// A model given as a file or as its bytes.
pub enum Source {
    Path(PathBuf),
    Bytes(bytes::Bytes),
}

impl Source {
    /// `str`/`os.PathLike` is a path, `bytes` the model itself.
    pub fn extract(model: &Bound<'_, PyAny>) -> PyResult<Source> {
        if let Ok(b) = model.cast::<PyBytes>() {
            return Ok(Source::Bytes(bytes::Bytes::copy_from_slice(b.as_bytes())));
        }
        match model.extract::<PathBuf>() {
            Ok(p) => Ok(Source::Path(p)),
            Err(_) => Err(PyTypeError::new_err(
                "model must be a path (str or os.PathLike) or the model's bytes",
            )),
        }
    }

    /// Imports the model (external data resolves next to a file, or in the
    /// current directory for bytes).
    pub fn import(self, opts: &ImportOptions) -> Result<ir::Module, Failure> {
        match self {
            Source::Path(p) => pipeline::import(&p, opts),
            Source::Bytes(b) => pipeline::import_bytes(b, PathBuf::from("."), opts),
        }
    }
}

/// `["x=1x3x?x?", ...]` → import options; a bad spec is a ValueError.
pub fn import_options(specs: &[String]) -> PyResult<ImportOptions> {
    let input_shapes = specs
        .iter()
        .map(|s| {
            InputShape::parse(s)
                .map_err(|e| crate::errors::InvalidArgument::new_err(format!("input_shapes: {e}")))
        })
        .collect::<PyResult<_>>()?;
    Ok(ImportOptions {
        input_shapes,
        ..ImportOptions::default()
    })
}

/// Stack of the thread a compile runs on: the passes recurse over the IR
/// (the daemon's workers get 16 MiB; reserved, not committed).
const COMPILE_STACK: usize = 64 << 20;

/// Runs `f` without the GIL, on a thread with a compiler-sized stack (a
/// Python thread's may be small). A panic (a compiler bug) becomes a
/// CompileError instead of taking the interpreter down; the passes'
/// warnings become `onnxc.CompileWarning`s.
pub fn detached<T: Send>(
    py: Python<'_>,
    f: impl FnOnce(&PassFlags) -> Result<T, Failure> + Send,
) -> PyResult<T> {
    let sink = WarningSink::default();
    let flags = PassFlags {
        warnings: Some(sink.clone()),
        ..PassFlags::default()
    };
    let result = py.detach(|| {
        std::thread::scope(|s| {
            let worker = std::thread::Builder::new()
                .name("onnxc-compile".into())
                .stack_size(COMPILE_STACK)
                .spawn_scoped(s, || f(&flags));
            match worker {
                Ok(h) => h.join(),
                // No thread to be had (resource limits).
                Err(_) => Ok(Err(Failure::Io("cannot start the compile thread".into()))),
            }
        })
    });
    let warnings: Vec<ir::Diagnostic> = match sink.lock() {
        Ok(mut w) => std::mem::take(&mut *w),
        Err(_) => Vec::new(),
    };
    for w in warnings {
        let text = std::ffi::CString::new(w.to_string().replace('\0', " ")).unwrap_or_default();
        PyErr::warn(py, &py.get_type::<CompileWarning>(), &text, 1)?;
    }
    match result {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(failure)) => Err(to_py(py, failure)),
        Err(panic) => {
            let msg = pipeline::panic_message(panic.as_ref());
            Err(compile_error(
                py,
                format!("internal compiler error: {msg} (please report it with the model)"),
                Vec::new(),
            ))
        }
    }
}

/// clang's path, or the error saying what to install.
pub fn find_clang(llvm_bin: Option<&Path>) -> PyResult<PathBuf> {
    pipeline::tools::find_tool("clang", llvm_bin).ok_or_else(|| clang_not_found(llvm_bin))
}

fn parse_emit(emit: &str) -> PyResult<pipeline::Emit> {
    pipeline::Emit::parse(emit).map_err(PyValueError::new_err)
}

/// `onnxc compile MODEL -o OUTPUT --emit EMIT`; `model` is a path or the
/// model's bytes.
#[pyfunction]
#[pyo3(signature = (model, output, emit, input_shapes, llvm_bin=None))]
fn compile(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    output: PathBuf,
    emit: &str,
    input_shapes: Vec<String>,
    llvm_bin: Option<PathBuf>,
) -> PyResult<()> {
    let source = Source::extract(model)?;
    let mut opts = pipeline::CompileOptions::new(parse_emit(emit)?);
    opts.import = import_options(&input_shapes)?;
    if matches!(opts.emit, pipeline::Emit::Lib | pipeline::Emit::Obj) {
        find_clang(llvm_bin.as_deref())?;
    }
    opts.llvm_bin = llvm_bin;
    detached(py, |flags| match source {
        Source::Path(model) => pipeline::compile(&model, Some(&output), &opts, flags),
        Source::Bytes(_) => {
            let import = ImportOptions {
                keep_foreign: opts.emit == pipeline::Emit::Onnx,
                ..opts.import.clone()
            };
            let m = source.import(&import)?;
            pipeline::compile_module(m, Some(&output), &opts, flags)
        }
    })
}

/// `onnxc fold SRC -o DST [--external-data-threshold N]
/// [--fold-expansion-bound F]`: streamed file to file.
#[pyfunction]
#[pyo3(signature = (src, dst, input_shapes, external_data_threshold=None, expansion_bound=None))]
fn fold(
    py: Python<'_>,
    src: PathBuf,
    dst: PathBuf,
    input_shapes: Vec<String>,
    external_data_threshold: Option<usize>,
    expansion_bound: Option<f64>,
) -> PyResult<()> {
    let opts = pipeline::FoldOptions {
        import: import_options(&input_shapes)?,
        external_data_threshold,
        expansion_bound,
    };
    detached(py, |flags| {
        pipeline::fold(&src, &dst, &opts, flags).map(|_| ())
    })
}

/// The folded model's bytes (what `onnxc fold` writes), for `simplify`.
#[pyfunction]
fn simplify(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    input_shapes: Vec<String>,
) -> PyResult<Py<PyBytes>> {
    let source = Source::extract(model)?;
    let opts = ImportOptions {
        keep_foreign: true,
        ..import_options(&input_shapes)?
    };
    let bytes = detached(py, |flags| {
        let mut m = source.import(&opts)?;
        pipeline::run_stages_bounded(&mut m, Some("constprop"), flags, None)?;
        pipeline::prepare_export(&mut m)?;
        let model = frontend::export::export_model(&m)?;
        frontend::export::check_proto_size(&model, "pass output_path= with a model path")?;
        Ok(frontend::export::encode(&model))
    })?;
    Ok(PyBytes::new(py, &bytes).unbind())
}

/// `{dir, entries, bytes, max_bytes}` of the session cache (`dir`: the
/// default when None).
#[pyfunction]
#[pyo3(signature = (dir=None))]
fn cache_info(py: Python<'_>, dir: Option<PathBuf>) -> PyResult<Bound<'_, pyo3::types::PyDict>> {
    let dir = dir.unwrap_or_else(pipeline::session_cache::default_dir);
    let entries = pipeline::session_cache::entries(&dir)
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", dir.display())))?;
    let d = pyo3::types::PyDict::new(py);
    d.set_item("dir", dir.display().to_string())?;
    d.set_item("entries", entries.len())?;
    d.set_item("bytes", entries.iter().map(|e| e.bytes).sum::<u64>())?;
    d.set_item(
        "max_bytes",
        pipeline::session_cache::max_bytes().map_err(PyValueError::new_err)?,
    )?;
    Ok(d)
}

/// Removes least recently used entries until the cache takes at most
/// `max_bytes` (default: its bound); `(removed, freed bytes)`.
#[pyfunction]
#[pyo3(signature = (max_bytes=None, dir=None))]
fn cache_prune(max_bytes: Option<u64>, dir: Option<PathBuf>) -> PyResult<(usize, u64)> {
    let dir = dir.unwrap_or_else(pipeline::session_cache::default_dir);
    let max = match max_bytes {
        Some(m) => m,
        None => pipeline::session_cache::max_bytes().map_err(PyValueError::new_err)?,
    };
    let done = pipeline::session_cache::prune(&dir, max, None)
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", dir.display())))?;
    Ok((done.removed, done.freed))
}

/// A size as the CLI reads it: `123`, `64K`, `512M`, `2G`.
#[pyfunction]
fn parse_size(s: &str) -> PyResult<u64> {
    pipeline::session_cache::parse_size(s).map_err(PyValueError::new_err)
}

#[pymodule]
fn _onnxc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("Fail", py.get_type::<errors::Fail>())?;
    m.add("CompileError", py.get_type::<errors::CompileError>())?;
    m.add("InvalidProtobuf", py.get_type::<errors::InvalidProtobuf>())?;
    m.add("InvalidArgument", py.get_type::<errors::InvalidArgument>())?;
    m.add(
        "ClangNotFoundError",
        py.get_type::<errors::ClangNotFoundError>(),
    )?;
    m.add("CompileWarning", py.get_type::<CompileWarning>())?;
    m.add_class::<Diagnostic>()?;
    m.add_class::<session::Session>()?;
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(fold, m)?)?;
    m.add_function(wrap_pyfunction!(simplify, m)?)?;
    m.add_function(wrap_pyfunction!(info::model_info, m)?)?;
    m.add_function(wrap_pyfunction!(cache_info, m)?)?;
    m.add_function(wrap_pyfunction!(cache_prune, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size, m)?)?;
    Ok(())
}
