//! `_onnxc.Session`: a model compiled to a shared library (through the
//! cache), opened through its C API and run on numpy arrays.

use crate::cache::{self, Lock};
use crate::errors::InvalidArgument;
use crate::signature::{Api, Port, Tensor};
use crate::{detached, find_clang, import_options, Source};
use frontend::import::zipmap::{zipmap_outputs, Labels};
use numpy::{PyArrayDescr, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pipeline::{io_err, Failure};
use pyo3::exceptions::{PyOSError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Element types: ONNX code, ORT's type string, numpy's dtype name.
const DTYPES: &[(i32, &str, &str)] = &[
    (1, "tensor(float)", "float32"),
    (2, "tensor(uint8)", "uint8"),
    (3, "tensor(int8)", "int8"),
    (4, "tensor(uint16)", "uint16"),
    (5, "tensor(int16)", "int16"),
    (6, "tensor(int32)", "int32"),
    (7, "tensor(int64)", "int64"),
    (9, "tensor(bool)", "bool"),
    (10, "tensor(float16)", "float16"),
    (11, "tensor(double)", "float64"),
    (12, "tensor(uint32)", "uint32"),
    (13, "tensor(uint64)", "uint64"),
    (16, "tensor(bfloat16)", "bfloat16"),
];

fn dtype_row(code: i32) -> Option<&'static (i32, &'static str, &'static str)> {
    DTYPES.iter().find(|r| r.0 == code)
}

/// numpy's dtype for an element type; bfloat16 needs ml_dtypes.
fn numpy_dtype(py: Python<'_>, code: i32) -> Option<Py<PyArrayDescr>> {
    let (_, _, name) = dtype_row(code)?;
    let descr = if *name == "bfloat16" {
        let t = py.import("ml_dtypes").ok()?.getattr("bfloat16").ok()?;
        PyArrayDescr::new(py, &t)
    } else {
        PyArrayDescr::new(py, *name)
    };
    descr.ok().map(Bound::unbind)
}

#[pyclass(frozen, module = "onnxc._onnxc")]
pub struct Session {
    api: Api,
    in_dtypes: Vec<Option<Py<PyArrayDescr>>>,
    out_dtypes: Vec<Option<Py<PyArrayDescr>>>,
    path: PathBuf,
    cache_hit: bool,
    /// Inputs that had to be copied (not C-contiguous and aligned).
    copies: AtomicU64,
    /// Per output: the class labels when a ZipMap makes it (returned as a
    /// list of {label: probability} dicts, as onnxruntime does).
    zipmap: Vec<Option<Labels>>,
}

/// The library of a model: from the cache, or compiled into it.
struct Built {
    lib: PathBuf,
    hit: bool,
    inputs: Vec<frontend::proto::ValueInfoProto>,
    outputs: Vec<frontend::proto::ValueInfoProto>,
    zipmap: Vec<Option<Labels>>,
}

/// Where a session's library is built and for which CPU.
struct Target<'a> {
    cache_dir: &'a Path,
    clang: &'a Path,
    llvm_bin: Option<&'a Path>,
    /// The code built: `--target-cpu` (None: the portable default) and
    /// `--threads` (None: all cores).
    code: pipeline::CodegenFlags,
    /// What the cache key says of the code.
    key: String,
}

/// `cpu`: None or "native" builds for this machine (the library runs in
/// this process) when its instruction sets are known, else for the
/// portable baseline; any other name as `--target-cpu`. The code, and
/// what the cache key says of it.
fn code_and_key(cpu: Option<String>, threads: Option<u64>) -> (pipeline::CodegenFlags, String) {
    let (target_cpu, isa) = match cpu.as_deref() {
        None | Some("native") => match cache::host_isa() {
            Some(isa) => (Some("native".to_string()), format!("native {isa}")),
            None => (None, "portable".to_string()),
        },
        Some(c) => (Some(c.to_string()), c.to_string()),
    };
    let key = format!("{isa} threads={threads:?}");
    let code = pipeline::CodegenFlags {
        target_cpu,
        threads,
    };
    (code, key)
}

fn build(
    bytes: bytes::Bytes,
    dir: PathBuf,
    opts: &frontend::import::ImportOptions,
    target: &Target<'_>,
    flags: &pipeline::PassFlags,
) -> Result<Built, Failure> {
    let loaded = frontend::load::load_model_bytes(bytes.clone(), dir)?;
    opts.check(&loaded).map_err(Failure::Usage)?;
    let (inputs, outputs, zipmap) = match &loaded.proto.graph {
        Some(g) => (g.input.clone(), g.output.clone(), zipmap_outputs(g)),
        None => Default::default(),
    };
    let key = cache::key(&bytes, &loaded, opts, (target.clang, &target.key));
    let entry = target.cache_dir.join(key);
    let _lock = Lock::take(&entry).map_err(|e| io_err("lock", &entry, e))?;
    let lib = entry.join(cache::LIB_NAME);
    let hit = lib.is_file();
    if !hit {
        let m = frontend::import::import_model_with(&loaded, opts)?;
        drop(loaded);
        let mut copts = pipeline::CompileOptions::new(pipeline::Emit::Lib);
        copts.llvm_bin = target.llvm_bin.map(Path::to_path_buf);
        copts.codegen = target.code.resolve(false, target.llvm_bin)?;
        pipeline::compile_module(m, Some(&lib), &copts, flags)?;
        // Bounded: the least recently used entries make room for this one.
        let max = pipeline::session_cache::max_bytes().map_err(Failure::Usage)?;
        let _ = pipeline::session_cache::prune(target.cache_dir, max, Some(&entry));
    }
    Ok(Built {
        lib,
        hit,
        inputs,
        outputs,
        zipmap,
    })
}

/// A call's arguments, moved to the thread that runs without the GIL.
struct Call<'a> {
    run: crate::signature::RunCheckedFn,
    ins: &'a [Tensor],
    outs: &'a mut [Tensor],
    /// The message of a failed runtime check.
    err: &'a mut [u8],
}

// SAFETY: the pointers in `ins` are numpy buffers and shape vectors the
// calling frame keeps alive until the call returns; `outs` is written only
// by the callee. The library is reentrant (docs/ABI.md).
unsafe impl Send for Call<'_> {}

impl Call<'_> {
    fn go(self) -> i32 {
        let (err, cap) = (self.err.as_mut_ptr().cast(), self.err.len());
        // SAFETY: `ins` has one tensor per input, `outs` one slot per
        // output, `err` holds `cap` bytes.
        unsafe { (self.run)(self.ins.as_ptr(), self.outs.as_mut_ptr(), err, cap) }
    }
}

/// The outputs of a successful call, released by the library on drop.
struct Outputs {
    t: Vec<Tensor>,
    free: crate::signature::FreeFn,
}

impl Drop for Outputs {
    fn drop(&mut self) {
        // SAFETY: filled by a successful run, released exactly once.
        unsafe { (self.free)(self.t.as_mut_ptr()) }
    }
}

fn empty_slots(n: usize) -> Vec<Tensor> {
    (0..n.max(1))
        .map(|_| Tensor {
            data: std::ptr::null_mut(),
            shape: std::ptr::null(),
            rank: 0,
        })
        .collect()
}

#[pymethods]
impl Session {
    #[new]
    #[pyo3(signature = (model, input_shapes, cache_dir=None, llvm_bin=None, target_cpu=None, threads=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        model: &Bound<'_, PyAny>,
        input_shapes: Vec<String>,
        cache_dir: Option<PathBuf>,
        llvm_bin: Option<PathBuf>,
        target_cpu: Option<String>,
        threads: Option<u64>,
    ) -> PyResult<Session> {
        let source = Source::extract(model)?;
        let opts = import_options(&input_shapes)?;
        let clang = find_clang(llvm_bin.as_deref())?;
        let (bytes, dir) = match source {
            Source::Path(p) => {
                let b = frontend::load::map_file(&p).map_err(|e| {
                    PyOSError::new_err(format!("cannot read '{}': {e}", p.display()))
                })?;
                (b, frontend::load::parent_dir(&p))
            }
            Source::Bytes(b) => (b, PathBuf::from(".")),
        };
        let cache_dir = cache_dir.unwrap_or_else(cache::default_dir);
        let (code, key) = code_and_key(target_cpu, threads);
        let target = Target {
            cache_dir: &cache_dir,
            clang: &clang,
            llvm_bin: llvm_bin.as_deref(),
            code,
            key,
        };
        // A cached library that does not load (damaged) is rebuilt once.
        for _ in 0..2 {
            let built = detached(py, |flags| {
                build(bytes.clone(), dir.clone(), &opts, &target, flags)
            })?;
            match Api::open(&built.lib, cache::PREFIX, &built.inputs, &built.outputs) {
                Ok(api) => return Session::new_open(py, api, built),
                Err(e) if !built.hit => {
                    return Err(PyOSError::new_err(format!(
                        "cannot load the compiled model '{}': {e}",
                        built.lib.display()
                    )))
                }
                Err(_) => {
                    let _ = std::fs::remove_file(&built.lib);
                }
            }
        }
        Err(PyOSError::new_err("cannot load the compiled model"))
    }

    /// `[(name, type, shape)]` of the inputs; a dynamic dim is its name
    /// from the model or None.
    #[getter]
    fn inputs<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        self.api
            .inputs
            .iter()
            .map(|p| describe(py, p, None))
            .collect()
    }

    #[getter]
    fn outputs<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        self.api
            .outputs
            .iter()
            .enumerate()
            .map(|(k, p)| describe(py, p, self.zipmap.get(k).and_then(Option::as_ref)))
            .collect()
    }

    /// The compiled library in the cache.
    #[getter]
    fn library_path(&self) -> PathBuf {
        self.path.clone()
    }

    /// Whether the library came from the cache (no compile).
    #[getter]
    fn cache_hit(&self) -> bool {
        self.cache_hit
    }

    /// How many inputs `run` has copied so far (those not C-contiguous).
    #[getter]
    fn copied_inputs(&self) -> u64 {
        self.copies.load(Ordering::Relaxed)
    }

    /// Runs the model on `feed` ({input name: array}); returns the outputs
    /// named by `output_names` (all when None or empty), in that order.
    #[pyo3(signature = (output_names, feed))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        output_names: Option<Vec<String>>,
        feed: &Bound<'py, PyDict>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let wanted = self.wanted_outputs(output_names)?;
        let arrays = self.feed_arrays(py, feed)?;
        let shapes: Vec<Vec<i64>> = arrays
            .iter()
            .map(|a| a.shape().iter().map(|&d| d as i64).collect())
            .collect();
        let ins: Vec<Tensor> = arrays
            .iter()
            .zip(&shapes)
            .map(|(a, s)| Tensor {
                data: data_ptr(a).cast(),
                shape: s.as_ptr(),
                rank: s.len() as i64,
            })
            .collect();
        let mut outs = empty_slots(self.api.outputs.len());
        let mut err = [0u8; 1024];
        let call = Call {
            run: self.api.run,
            ins: &ins,
            outs: &mut outs,
            err: &mut err,
        };
        let rc = py.detach(move || call.go());
        if rc < 0 {
            let msg = std::ffi::CStr::from_bytes_until_nul(&err)
                .map_or_else(|_| "?".into(), |m| m.to_string_lossy());
            let msg = msg.trim().trim_start_matches("assertion failed: ");
            return Err(InvalidArgument::new_err(format!(
                "the inputs break a runtime check of the model: {msg}"
            )));
        }
        if rc != 0 {
            let name = rc
                .checked_sub(1)
                .and_then(|k| self.api.inputs.get(k as usize))
                .map_or("?", |p| p.name.as_str());
            return Err(InvalidArgument::new_err(format!(
                "input '{name}': the compiled model refused its shape"
            )));
        }
        let outs = Outputs {
            t: outs,
            free: self.api.free,
        };
        drop(arrays);
        wanted
            .into_iter()
            .map(|k| {
                let a = self.output_array(py, k, &outs)?;
                match self.zipmap.get(k).and_then(Option::as_ref) {
                    Some(labels) => zipped(py, &a, labels),
                    None => Ok(a),
                }
            })
            .collect()
    }
}

/// An array's first element.
fn data_ptr(a: &Bound<'_, PyUntypedArray>) -> *mut std::ffi::c_char {
    // SAFETY: `a` is a live ndarray; its field block is read.
    unsafe { (*numpy::npyffi::_PyArray_GET_ITEM_DATA(a.as_array_ptr())).data }
}

/// `(name, type, shape)` of a port.
fn describe<'py>(
    py: Python<'py>,
    p: &Port,
    zipmap: Option<&Labels>,
) -> PyResult<Bound<'py, PyTuple>> {
    let shape = PyList::empty(py);
    // A ZipMap output is a sequence of maps to onnxruntime: no shape.
    let ty = match zipmap {
        Some(Labels::Ints(_)) => "seq(map(int64,tensor(float)))",
        Some(Labels::Strings(_)) => "seq(map(string,tensor(float)))",
        None => {
            for (&d, label) in p.dims.iter().zip(&p.labels) {
                match (d >= 0, label) {
                    (true, _) => shape.append(d)?,
                    (false, Some(name)) => shape.append(name)?,
                    (false, None) => shape.append(py.None())?,
                }
            }
            dtype_row(p.dtype).map_or("tensor(unknown)", |r| r.1)
        }
    };
    PyTuple::new(
        py,
        [
            PyString::new(py, &p.name).into_any(),
            PyString::new(py, ty).into_any(),
            shape.into_any(),
        ],
    )
}

/// A [N, C] probability array as a list of N {label: probability} dicts.
fn zipped<'py>(
    py: Python<'py>,
    probs: &Bound<'py, PyAny>,
    labels: &Labels,
) -> PyResult<Bound<'py, PyAny>> {
    let rows = probs.call_method0("tolist")?;
    let out = PyList::empty(py);
    for row in rows.try_iter()? {
        let row = row?;
        let d = PyDict::new(py);
        for (k, v) in row.try_iter()?.enumerate() {
            let v = v?;
            match labels {
                Labels::Ints(l) => d.set_item(l.get(k).copied().unwrap_or(k as i64), v)?,
                Labels::Strings(l) => match l.get(k) {
                    Some(s) => d.set_item(s, v)?,
                    None => d.set_item(k, v)?,
                },
            }
        }
        out.append(d)?;
    }
    Ok(out.into_any())
}

/// `[1, 3, 'height', None]` as text for messages.
fn shape_text(p: &Port) -> String {
    let dims: Vec<String> = p
        .dims
        .iter()
        .zip(&p.labels)
        .map(|(&d, l)| match (d >= 0, l) {
            (true, _) => d.to_string(),
            (false, Some(n)) => format!("'{n}'"),
            (false, None) => "None".into(),
        })
        .collect();
    format!("[{}]", dims.join(", "))
}

impl Session {
    fn new_open(py: Python<'_>, api: Api, built: Built) -> PyResult<Session> {
        let in_dtypes = api
            .inputs
            .iter()
            .map(|p| numpy_dtype(py, p.dtype))
            .collect();
        let out_dtypes = api
            .outputs
            .iter()
            .map(|p| numpy_dtype(py, p.dtype))
            .collect();
        Ok(Session {
            api,
            in_dtypes,
            out_dtypes,
            path: built.lib,
            cache_hit: built.hit,
            copies: AtomicU64::new(0),
            zipmap: built.zipmap,
        })
    }

    fn names(ports: &[Port]) -> String {
        ports
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn wanted_outputs(&self, names: Option<Vec<String>>) -> PyResult<Vec<usize>> {
        let outs = &self.api.outputs;
        match names.filter(|n| !n.is_empty()) {
            None => Ok((0..outs.len()).collect()),
            Some(names) => names
                .iter()
                .map(|n| {
                    outs.iter().position(|p| &p.name == n).ok_or_else(|| {
                        InvalidArgument::new_err(format!(
                            "'{n}' is not an output of the model (outputs: {})",
                            Session::names(outs)
                        ))
                    })
                })
                .collect(),
        }
    }

    /// The inputs in graph order, checked against the signature.
    fn feed_arrays<'py>(
        &self,
        py: Python<'py>,
        feed: &Bound<'py, PyDict>,
    ) -> PyResult<Vec<Bound<'py, PyUntypedArray>>> {
        let ins = &self.api.inputs;
        for key in feed.keys() {
            let known = key
                .extract::<String>()
                .is_ok_and(|k| ins.iter().any(|p| p.name == k));
            if !known {
                return Err(InvalidArgument::new_err(format!(
                    "{} is not an input of the model (inputs: {})",
                    key.repr()?,
                    Session::names(ins)
                )));
            }
        }
        let mut seen: HashMap<&str, (usize, &str)> = HashMap::new();
        let mut arrays = Vec::with_capacity(ins.len());
        for (i, port) in ins.iter().enumerate() {
            let value = feed.get_item(&port.name)?.ok_or_else(|| {
                InvalidArgument::new_err(format!(
                    "missing input '{}' (inputs: {})",
                    port.name,
                    Session::names(ins)
                ))
            })?;
            let arr = self.input_array(py, i, &value)?;
            check_shape(port, arr.shape(), &mut seen)?;
            arrays.push(arr);
        }
        Ok(arrays)
    }

    /// `value` as an aligned C-contiguous array of input `i`'s dtype: as it
    /// is when it already is one (no copy).
    fn input_array<'py>(
        &self,
        py: Python<'py>,
        i: usize,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyUntypedArray>> {
        let port = &self.api.inputs[i];
        let ty = dtype_row(port.dtype).map_or("tensor(unknown)", |r| r.1);
        let Some(dtype) = self.in_dtypes.get(i).and_then(Option::as_ref) else {
            return Err(PyTypeError::new_err(format!(
                "input '{}' is {ty}: install ml_dtypes to pass it from numpy",
                port.name
            )));
        };
        let dtype = dtype.bind(py);
        let np = py.import("numpy")?;
        let arr = match value.cast::<PyUntypedArray>() {
            Ok(a) => {
                if !a.dtype().is_equiv_to(dtype) {
                    return Err(InvalidArgument::new_err(format!(
                        "input '{}': expected {ty} (numpy {}), got an array of {}",
                        port.name,
                        dtype.str()?,
                        a.dtype().str()?
                    )));
                }
                a.clone()
            }
            Err(_) => np
                .call_method1("asarray", (value, dtype))
                .and_then(|a| Ok(a.cast_into::<PyUntypedArray>()?))
                .map_err(|e| {
                    InvalidArgument::new_err(format!(
                        "input '{}': cannot make an array of {} from it: {e}",
                        port.name, dtype
                    ))
                })?,
        };
        if arr.is_c_contiguous() && arr.is_aligned() {
            return Ok(arr);
        }
        self.copies.fetch_add(1, Ordering::Relaxed);
        Ok(np
            .call_method1("ascontiguousarray", (arr,))?
            .cast_into::<PyUntypedArray>()?)
    }

    /// Output `k` of a call as a new numpy array.
    fn output_array<'py>(
        &self,
        py: Python<'py>,
        k: usize,
        outs: &Outputs,
    ) -> PyResult<Bound<'py, PyAny>> {
        let port = &self.api.outputs[k];
        let Some(dtype) = self.out_dtypes.get(k).and_then(Option::as_ref) else {
            return Err(PyTypeError::new_err(format!(
                "output '{}' has no numpy dtype here (bfloat16: install ml_dtypes)",
                port.name
            )));
        };
        let t = &outs.t[k];
        let rank_ok = t.rank == port.dims.len() as i64 || port.rank_varies && t.rank >= 0;
        if !rank_ok || (t.shape.is_null() && t.rank > 0) {
            return Err(InvalidArgument::new_err(format!(
                "output '{}': the library returned rank {}",
                port.name, t.rank
            )));
        }
        let shape: &[i64] = match t.rank {
            0 => &[],
            // SAFETY: the library fills `rank` sizes.
            r => unsafe { std::slice::from_raw_parts(t.shape, r as usize) },
        };
        let dims: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
        let arr = py
            .import("numpy")?
            .call_method1("empty", (PyTuple::new(py, &dims)?, dtype.bind(py)))?
            .cast_into::<PyUntypedArray>()?;
        let bytes = dims
            .iter()
            .try_fold(dtype.bind(py).itemsize(), |n, &d| n.checked_mul(d))
            .ok_or_else(|| InvalidArgument::new_err("output too large"))?;
        if bytes > 0 {
            // SAFETY: the library's buffer holds the packed elements; the new
            // array has exactly `bytes` bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    t.data.cast::<u8>(),
                    data_ptr(&arr).cast::<u8>(),
                    bytes,
                )
            };
        }
        Ok(arr.into_any())
    }
}

/// Rank, static dims, and equal sizes for equal dim names across inputs.
fn check_shape<'a>(
    port: &'a Port,
    shape: &[usize],
    seen: &mut HashMap<&'a str, (usize, &'a str)>,
) -> PyResult<()> {
    let err = |what: String| {
        Err(InvalidArgument::new_err(format!(
            "input '{}': {what} (the model declares {}, got {:?})",
            port.name,
            shape_text(port),
            shape
        )))
    };
    if shape.len() != port.dims.len() {
        return err(format!(
            "expected rank {}, got rank {}",
            port.dims.len(),
            shape.len()
        ));
    }
    for (d, ((&want, label), &got)) in port.dims.iter().zip(&port.labels).zip(shape).enumerate() {
        if want >= 0 && got as i64 != want {
            return err(format!("dim {d} must be {want}, got {got}"));
        }
        // `?` and `-1` name no dim: each such dim is free (as at import).
        let named = label
            .as_deref()
            .filter(|n| frontend::import::types::names_a_dim(n));
        let Some(name) = named else {
            continue;
        };
        match seen.get(name) {
            Some(&(size, other)) if size != got => {
                return err(format!(
                    "dim {d} ('{name}') is {got}, but input '{other}' has '{name}' = {size}"
                ))
            }
            Some(_) => {}
            None => {
                seen.insert(name, (got, port.name.as_str()));
            }
        }
    }
    Ok(())
}
