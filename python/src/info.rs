//! `_onnxc.model_info`: what a model says of itself without compiling it
//! (onnxruntime's `ModelMetadata`, and the inputs' declared dims, which
//! `SessionOptions.add_free_dimension_override_by_name` fixes by name).

use crate::errors::to_py;
use crate::Source;
use frontend::proto::{tensor_shape_proto::dimension, type_proto, ModelProto, ValueInfoProto};
use pipeline::Failure;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::collections::HashSet;
use std::path::PathBuf;

/// `{producer_name, producer_version, domain, model_version, doc_string,
/// graph_name, graph_doc_string, metadata: {key: value}, inputs: [(name,
/// [dim])], external_data}`; a dim is an int, the name of a `dim_param`,
/// or None. Inputs that an initializer feeds are left out, as onnxruntime
/// does. `external_data`: whether any initializer or Constant keeps its
/// data in another file.
#[pyfunction]
pub fn model_info<'py>(py: Python<'py>, model: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let (bytes, dir) = match Source::extract(model)? {
        Source::Path(p) => {
            let b = frontend::load::map_file(&p).map_err(|e| {
                pyo3::exceptions::PyOSError::new_err(format!("cannot read '{}': {e}", p.display()))
            })?;
            (b, frontend::load::parent_dir(&p))
        }
        Source::Bytes(b) => (b, PathBuf::from(".")),
    };
    let loaded = frontend::load::load_model_bytes(bytes, dir)
        .map_err(|d| to_py(py, Failure::Diagnostic(d)))?;
    describe(py, &loaded.proto)
}

fn describe<'py>(py: Python<'py>, m: &ModelProto) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("producer_name", &m.producer_name)?;
    d.set_item("producer_version", &m.producer_version)?;
    d.set_item("domain", &m.domain)?;
    d.set_item("model_version", m.model_version)?;
    d.set_item("doc_string", &m.doc_string)?;
    let meta = PyDict::new(py);
    for e in &m.metadata_props {
        meta.set_item(&e.key, &e.value)?;
    }
    d.set_item("metadata", meta)?;
    let inputs = PyList::empty(py);
    if let Some(g) = &m.graph {
        d.set_item("graph_name", &g.name)?;
        d.set_item("graph_doc_string", &g.doc_string)?;
        let fed: HashSet<&str> = g.initializer.iter().map(|t| t.name.as_str()).collect();
        for vi in g.input.iter().filter(|v| !fed.contains(v.name.as_str())) {
            inputs.append((&vi.name, dims(py, vi)?))?;
        }
    }
    d.set_item("inputs", inputs)?;
    d.set_item(
        "external_data",
        !crate::cache::external_tensors(m).is_empty(),
    )?;
    Ok(d)
}

/// The declared dims of a tensor input (None when it declares no shape).
fn dims<'py>(py: Python<'py>, vi: &ValueInfoProto) -> PyResult<Option<Bound<'py, PyList>>> {
    let Some(type_proto::Value::TensorType(t)) = vi.r#type.as_ref().and_then(|t| t.value.as_ref())
    else {
        return Ok(None);
    };
    let Some(shape) = &t.shape else {
        return Ok(None);
    };
    let list = PyList::empty(py);
    for dim in &shape.dim {
        match &dim.value {
            Some(dimension::Value::DimValue(v)) => list.append(*v)?,
            Some(dimension::Value::DimParam(p)) if !p.is_empty() => list.append(p)?,
            _ => list.append(py.None())?,
        }
    }
    Ok(Some(list))
}
