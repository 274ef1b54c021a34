//! A compiled model's library opened through its C API (docs/ABI.md): the
//! run and free entry points and the signature, with the dim names the
//! ONNX model declares for its dynamic dims.

use frontend::proto::{tensor_shape_proto::dimension, type_proto, ValueInfoProto};
use libloading::Library;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::Path;

/// `onnxc_tensor` of the generated header.
#[repr(C)]
pub struct Tensor {
    pub data: *mut c_void,
    pub shape: *const i64,
    pub rank: i64,
}

/// `_run_checked`: a failed runtime check returns -1 and its message.
pub type RunCheckedFn =
    unsafe extern "C" fn(*const Tensor, *mut Tensor, *mut c_char, usize) -> c_int;
pub type FreeFn = unsafe extern "C" fn(*mut Tensor);
type CountFn = unsafe extern "C" fn() -> c_int;
type NameFn = unsafe extern "C" fn(c_int) -> *const c_char;
type IntFn = unsafe extern "C" fn(c_int) -> c_int;
type ShapeFn = unsafe extern "C" fn(c_int) -> *const i64;

/// One input or output: its dims are sizes, or -1 for a dynamic dim with
/// the name the model gives it (`labels`), if any.
#[derive(Clone, Debug)]
pub struct Port {
    pub name: String,
    /// ONNX `TensorProto.DataType` code.
    pub dtype: i32,
    pub dims: Vec<i64>,
    pub labels: Vec<Option<String>>,
    /// An output whose rank is decided at each call (`dims` is empty).
    pub rank_varies: bool,
}

/// An open library; the function pointers live as long as `_lib`.
pub struct Api {
    _lib: Library,
    pub run: RunCheckedFn,
    pub free: FreeFn,
    pub inputs: Vec<Port>,
    pub outputs: Vec<Port>,
}

/// The largest rank the C wrapper supports.
const MAX_RANK: c_int = 64;

impl Api {
    /// Opens `path`, whose symbols start with `prefix`; the model's
    /// declared inputs and outputs name the dynamic dims.
    pub fn open(
        path: &Path,
        prefix: &str,
        declared_inputs: &[ValueInfoProto],
        declared_outputs: &[ValueInfoProto],
    ) -> Result<Api, String> {
        // SAFETY: the library is one onnxc built (its initializers are the C
        // runtime's only); it stays loaded while the pointers taken from it
        // are used, since they live in the same `Api`.
        let lib = unsafe { Library::new(path) }.map_err(|e| e.to_string())?;
        let sym = |name: &str| -> Result<*const c_void, String> {
            let full = format!("{prefix}_{name}\0");
            // SAFETY: a symbol's address is read, not yet called.
            unsafe { lib.get::<*const c_void>(full.as_bytes()) }
                .map(|s| *s)
                .map_err(|e| format!("{}: {e}", path.display()))
        };
        // SAFETY: each symbol has the type the generated header declares.
        let (run, free) = unsafe {
            (
                std::mem::transmute::<*const c_void, RunCheckedFn>(sym("run_checked")?),
                std::mem::transmute::<*const c_void, FreeFn>(sym("free_outputs")?),
            )
        };
        let mut ports = Vec::new();
        for kind in ["input", "output"] {
            // SAFETY: as above.
            let f = unsafe {
                Fns {
                    count: std::mem::transmute::<*const c_void, CountFn>(sym(&format!(
                        "num_{kind}s"
                    ))?),
                    name: std::mem::transmute::<*const c_void, NameFn>(sym(&format!(
                        "{kind}_name"
                    ))?),
                    dtype: std::mem::transmute::<*const c_void, IntFn>(sym(&format!(
                        "{kind}_dtype"
                    ))?),
                    rank: std::mem::transmute::<*const c_void, IntFn>(sym(&format!(
                        "{kind}_rank"
                    ))?),
                    shape: std::mem::transmute::<*const c_void, ShapeFn>(sym(&format!(
                        "{kind}_shape"
                    ))?),
                }
            };
            ports.push(f.read(kind)?);
        }
        let (mut inputs, mut outputs) = match <[Vec<Port>; 2]>::try_from(ports) {
            Ok([i, o]) => (i, o),
            Err(_) => return Err("signature".into()),
        };
        label(&mut inputs, declared_inputs);
        label(&mut outputs, declared_outputs);
        Ok(Api {
            _lib: lib,
            run,
            free,
            inputs,
            outputs,
        })
    }
}

struct Fns {
    count: CountFn,
    name: NameFn,
    dtype: IntFn,
    rank: IntFn,
    shape: ShapeFn,
}

impl Fns {
    fn read(&self, kind: &str) -> Result<Vec<Port>, String> {
        // SAFETY: the accessors take any index and return NULL / -1 out of
        // range; the tables they return are static.
        unsafe {
            let n = (self.count)();
            let mut ports = Vec::new();
            for i in 0..n.max(0) {
                let name = (self.name)(i);
                let rank = (self.rank)(i);
                let shape = (self.shape)(i);
                // Rank -1: an output whose rank each call decides.
                let rank_varies = kind == "output" && rank == -1 && shape.is_null();
                if name.is_null()
                    || !rank_varies && (shape.is_null() || !(0..=MAX_RANK).contains(&rank))
                {
                    return Err(format!("bad signature of {kind} {i}"));
                }
                let dims = match rank_varies {
                    true => Vec::new(),
                    false => std::slice::from_raw_parts(shape, rank as usize).to_vec(),
                };
                ports.push(Port {
                    name: CStr::from_ptr(name).to_string_lossy().into_owned(),
                    dtype: (self.dtype)(i),
                    labels: vec![None; dims.len()],
                    dims,
                    rank_varies,
                });
            }
            Ok(ports)
        }
    }
}

/// Names the dynamic dims of `ports` after the model's `dim_param`s.
fn label(ports: &mut [Port], declared: &[ValueInfoProto]) {
    let by_name: HashMap<&str, &ValueInfoProto> =
        declared.iter().map(|v| (v.name.as_str(), v)).collect();
    for p in ports {
        let Some(vi) = by_name.get(p.name.as_str()) else {
            continue;
        };
        let Some(type_proto::Value::TensorType(t)) =
            vi.r#type.as_ref().and_then(|t| t.value.as_ref())
        else {
            continue;
        };
        let Some(shape) = &t.shape else { continue };
        if shape.dim.len() != p.dims.len() {
            continue;
        }
        for ((label, &d), dim) in p.labels.iter_mut().zip(&p.dims).zip(&shape.dim) {
            if let (true, Some(dimension::Value::DimParam(name))) = (d < 0, &dim.value) {
                *label = Some(name.clone()).filter(|n| !n.is_empty());
            }
        }
    }
}
