//! Export: the `onnx` dialect back to a `ModelProto`. Names, opset
//! imports, metadata and doc strings come from the attributes the importer
//! left (docs/ONNX_DIALECT.md); constants become initializers, written in
//! their dtype, optionally to an external data file.

pub mod attr;
mod denormalize;
mod external;
mod graph;

use crate::dialect::{DIM_PARAMS_IN, DIM_PARAMS_OUT, DOC_ATTR};
use crate::proto::{
    type_proto, ModelProto, OperatorSetIdProto, StringStringEntryProto, TensorShapeProto,
    TypeProto, ValueInfoProto,
};
use external::External;
use graph::{Exporter, GraphNames};
use ir::attr::Attribute;
use ir::dialects::op_error;
use ir::{Diagnostic, Module, OpId, Result};
use std::io::Write;
use std::path::Path;

/// How to write a model.
#[derive(Clone, Debug, Default)]
pub struct ExportOptions {
    /// Initializers of at least this many bytes go to an external file.
    pub external_threshold: Option<usize>,
    /// Its name, relative to the model (`location` in the tensors).
    pub external_location: String,
    /// Main-graph initializers of at least this many bytes get no data:
    /// `Exported::deferred` lists them for a streaming writer.
    pub defer_min: Option<usize>,
}

/// An exported model and the contents of its external data file.
pub struct Exported {
    pub model: ModelProto,
    external: Option<External>,
    /// (index in the main graph's initializers, values) of the tensors
    /// left without data (`ExportOptions::defer_min`), in index order.
    pub deferred: Vec<(usize, ir::elements::Elements)>,
}

impl Exported {
    /// Whether any initializer was moved to the external file.
    pub fn has_external_data(&self) -> bool {
        self.external.as_ref().is_some_and(|e| !e.chunks.is_empty())
    }
    /// Writes the external data file's bytes.
    pub fn write_external(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        match &self.external {
            Some(e) => e.write_to(w),
            None => Ok(()),
        }
    }
}

/// Exports the module's main graph (its first function) as an ONNX model
/// with every initializer inline.
pub fn export_model(m: &Module) -> Result<ModelProto> {
    Ok(export_model_with(m, &ExportOptions::default())?.model)
}

fn str_attr(m: &Module, op: ir::OpId, name: &str) -> String {
    m.attr(op, name)
        .and_then(Attribute::as_str)
        .unwrap_or("")
        .to_string()
}

fn strings(m: &Module, op: ir::OpId, name: &str) -> Vec<String> {
    m.attr(op, name)
        .and_then(Attribute::as_array)
        .map(|a| {
            a.iter()
                .map(|s| s.as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// `[[k, v], ...]` pairs of a module attribute.
fn pairs(m: &Module, name: &str) -> Vec<(Attribute, Attribute)> {
    m.attr(m.top(), name)
        .and_then(Attribute::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|p| match p.as_array()? {
                    [k, v] => Some((k.clone(), v.clone())),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

pub fn export_model_with(m: &Module, opts: &ExportOptions) -> Result<Exported> {
    let f = m
        .top_level_ops("func.func")
        .into_iter()
        .next()
        .ok_or_else(|| Diagnostic::error("the module has no function to export"))?;
    let entry = m
        .region(f, 0)
        .and_then(|r| m.entry_block(r))
        .ok_or_else(|| op_error(m, f, "has no body to export"))?;
    let external = opts
        .external_threshold
        .map(|t| External::new(t, opts.external_location.clone()));
    let top = m.top();
    let int = |name: &str| m.attr(top, name).and_then(Attribute::as_int);
    let opset = onnx::model_opset(m);
    let mut ex = Exporter::new(m, external, opset);
    ex.defer_min = opts.defer_min;
    let mut name = str_attr(m, f, "onnx.graph_name");
    if name.is_empty() {
        name = ir::dialects::func::sym_name(m, f)
            .unwrap_or("main_graph")
            .to_string();
    }
    let info = GraphNames {
        name,
        inputs: strings(m, f, "input_names"),
        outputs: strings(m, f, "output_names"),
    };
    let mut graph = ex.graph(f, entry, &info)?;
    name_dims(m, f, DIM_PARAMS_IN, &mut graph.input);
    name_dims(m, f, DIM_PARAMS_OUT, &mut graph.output);
    graph.doc_string = str_attr(m, f, DOC_ATTR);
    let ir_version = int("onnx.ir_version").unwrap_or(8);
    if ir_version < 4 {
        // Before IR 4 every initializer must also be a graph input.
        for t in &graph.initializer {
            graph.input.push(initializer_input(t));
        }
    }
    let mut opset_import: Vec<OperatorSetIdProto> = pairs(m, "onnx.opset_imports")
        .into_iter()
        .filter_map(|(d, v)| {
            Some(OperatorSetIdProto {
                domain: d.as_str()?.to_string(),
                version: v.as_int()?,
            })
        })
        .collect();
    if !opset_import.iter().any(|o| o.domain.is_empty()) {
        opset_import.insert(
            0,
            OperatorSetIdProto {
                domain: String::new(),
                version: opset,
            },
        );
    }
    if ex.uses_ml && !opset_import.iter().any(|o| o.domain == "ai.onnx.ml") {
        opset_import.push(OperatorSetIdProto {
            domain: "ai.onnx.ml".into(),
            version: onnx::model_ml_opset(m),
        });
    }
    if ex.uses_microsoft && !opset_import.iter().any(|o| o.domain == "com.microsoft") {
        opset_import.push(OperatorSetIdProto {
            domain: "com.microsoft".into(),
            version: 1,
        });
    }
    let metadata_props = pairs(m, "onnx.metadata_props")
        .into_iter()
        .filter_map(|(k, v)| {
            Some(StringStringEntryProto {
                key: k.as_str()?.to_string(),
                value: v.as_str()?.to_string(),
            })
        })
        .collect();
    let mut producer_name = str_attr(m, top, "onnx.producer_name");
    let mut producer_version = str_attr(m, top, "onnx.producer_version");
    if producer_name.is_empty() {
        producer_name = "onnxc".into();
        producer_version = env!("CARGO_PKG_VERSION").into();
    }
    let model = ModelProto {
        ir_version,
        opset_import,
        producer_name,
        producer_version,
        domain: str_attr(m, top, "onnx.domain"),
        model_version: int("onnx.model_version").unwrap_or(0),
        doc_string: str_attr(m, top, DOC_ATTR),
        graph: Some(graph),
        metadata_props,
        ..ModelProto::default()
    };
    Ok(Exported {
        model,
        external: ex.external,
        deferred: ex.deferred,
    })
}

/// The graph input declaring an initializer (IR < 4).
fn initializer_input(t: &crate::proto::TensorProto) -> ValueInfoProto {
    use crate::proto::tensor_shape_proto::{dimension::Value, Dimension};
    let dim = t
        .dims
        .iter()
        .map(|&d| Dimension {
            value: Some(Value::DimValue(d)),
            denotation: String::new(),
        })
        .collect();
    ValueInfoProto {
        name: t.name.clone(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: t.data_type,
                shape: Some(TensorShapeProto { dim }),
            })),
            denotation: String::new(),
        }),
        ..ValueInfoProto::default()
    }
}

/// Encodes an exported model.
pub fn encode(model: &ModelProto) -> Vec<u8> {
    prost::Message::encode_to_vec(model)
}

/// Protobuf messages are limited to 2 GiB.
const MAX_PROTO_BYTES: usize = i32::MAX as usize;

/// An error unless `model` encodes within protobuf's 2 GiB; `remedy` says
/// how the caller gets large initializers written as external data.
pub fn check_proto_size(model: &ModelProto, remedy: &str) -> Result<()> {
    let len = prost::Message::encoded_len(model);
    match len > MAX_PROTO_BYTES {
        true => Err(Diagnostic::error(format!(
            "the model needs {len} bytes, over the 2 GiB protobuf limit; write large initializers as external data ({remedy})"
        ))),
        false => Ok(()),
    }
}

/// Writes `m` as an ONNX file at `path`; with a threshold, initializers of
/// at least that many bytes go to `<file name>.data` beside it. Both files
/// are written to temporaries first and renamed into place.
pub fn write_model(m: &Module, path: &Path, external_threshold: Option<usize>) -> Result<()> {
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| Diagnostic::error(format!("'{}' is not a file path", path.display())))?;
    let location = format!("{file_name}.data");
    let opts = ExportOptions {
        external_threshold,
        external_location: location.clone(),
        defer_min: None,
    };
    let exported = export_model_with(m, &opts)?;
    check_proto_size(&exported.model, "--external-data-threshold")?;
    let dir = crate::load::parent_dir(path);
    if exported.has_external_data() {
        let data_path = dir.join(&location);
        write_atomic(&data_path, |w| exported.write_external(w))?;
    }
    let bytes = encode(&exported.model);
    write_atomic(path, |w| w.write_all(&bytes))
}

fn write_atomic(
    path: &Path,
    fill: impl FnOnce(&mut std::io::BufWriter<&mut std::fs::File>) -> std::io::Result<()>,
) -> Result<()> {
    let fail = |what: &str, e: std::io::Error| {
        Diagnostic::error(format!("cannot {what} '{}': {e}", path.display()))
    };
    let mut out = ir::output::OutputFile::create(path).map_err(|e| fail("create", e))?;
    let mut w = std::io::BufWriter::new(out.file());
    fill(&mut w)
        .and_then(|()| w.flush())
        .map_err(|e| fail("write", e))?;
    drop(w);
    out.commit().map_err(|e| fail("write", e))
}

/// Gives the still-unknown dims of the main graph's inputs or outputs the
/// `dim_param` names the imported model declared. An output whose rank is
/// known only at run time (an axis-less Squeeze of a dynamic dim) keeps
/// the rank the model declared: ONNX requires a shape on graph outputs,
/// and onnxruntime only warns when a run yields another.
fn name_dims(m: &Module, f: OpId, attr: &str, values: &mut [ValueInfoProto]) {
    use crate::proto::tensor_shape_proto::dimension::Value;
    let Some(per_value) = m.attr(f, attr).and_then(Attribute::as_array) else {
        return;
    };
    for (vi, names) in values.iter_mut().zip(per_value.iter()) {
        let Some(type_proto::Value::TensorType(t)) =
            vi.r#type.as_mut().and_then(|t| t.value.as_mut())
        else {
            continue;
        };
        let Some(names) = names.as_array() else {
            continue;
        };
        let shape = t
            .shape
            .get_or_insert_with(|| crate::proto::TensorShapeProto {
                dim: vec![Default::default(); names.len()],
            });
        for (d, name) in shape.dim.iter_mut().zip(names.iter()) {
            match name.as_str() {
                Some(n) if !n.is_empty() && d.value.is_none() => {
                    d.value = Some(Value::DimParam(n.to_string()));
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests;
