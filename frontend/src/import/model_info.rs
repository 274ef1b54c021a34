//! Model-level facts: opset imports (checked when a node needs one) and the
//! metadata kept as attributes for export (docs/ONNX_DIALECT.md).

use crate::dialect::DOC_ATTR;
use crate::proto::{ModelProto, OperatorSetIdProto};
use ir::{Attribute, Diagnostic, Module, OpId};
use std::collections::HashMap;

/// Opset imported when a model predates `opset_import` (IR < 3).
const LEGACY_OPSET: i64 = 1;

/// The model's opset imports by domain (`ai.onnx` is stored as `""`).
pub struct Opsets {
    versions: HashMap<String, i64>,
    ir_version: i64,
}

pub fn canonical_domain(d: &str) -> &str {
    if d == "ai.onnx" {
        ""
    } else {
        d
    }
}

impl Opsets {
    pub fn new(imports: &[OperatorSetIdProto], ir_version: i64) -> Result<Self, Diagnostic> {
        let mut versions = HashMap::new();
        for o in imports {
            let domain = canonical_domain(&o.domain).to_string();
            if o.version < 1 {
                return Err(Diagnostic::error(format!(
                    "opset import of domain '{}' has invalid version {}",
                    o.domain, o.version
                )));
            }
            if let Some(old) = versions.insert(domain, o.version) {
                if old != o.version {
                    return Err(Diagnostic::error(format!(
                        "domain '{}' is imported twice, as opsets {old} and {}",
                        o.domain, o.version
                    )));
                }
            }
        }
        Ok(Opsets {
            versions,
            ir_version,
        })
    }

    /// The opset of `domain`; models before IR 3 imply opset 1 of the
    /// default domain.
    pub fn version(&self, domain: &str) -> Option<i64> {
        let domain = canonical_domain(domain);
        match self.versions.get(domain) {
            Some(&v) => Some(v),
            None if domain.is_empty() && self.ir_version < 3 => Some(LEGACY_OPSET),
            None => None,
        }
    }
}

fn pairs(items: impl Iterator<Item = (Attribute, Attribute)>) -> Attribute {
    Attribute::Array(
        items
            .map(|(k, v)| Attribute::Array(vec![k, v].into()))
            .collect(),
    )
}

fn set_str(m: &mut Module, op: OpId, name: &'static str, value: &str) {
    if !value.is_empty() {
        m.set_attr(op, name, Attribute::string(value));
    }
}

/// Keeps what export needs to write the model back: opset imports,
/// producer, metadata, doc strings, the graph name.
pub fn record(m: &mut Module, proto: &ModelProto, func: OpId) {
    let top = m.top();
    let opsets = Opsets::new(&proto.opset_import, proto.ir_version).ok();
    let default = opsets
        .as_ref()
        .and_then(|o| o.version(""))
        .unwrap_or(LEGACY_OPSET);
    m.set_attr(top, onnx::model::OPSET_ATTR, Attribute::i64(default));
    m.set_attr(top, "onnx.ir_version", Attribute::i64(proto.ir_version));
    if let Some(ml) = opsets.as_ref().and_then(|o| o.version("ai.onnx.ml")) {
        m.set_attr(top, onnx::model::ML_OPSET_ATTR, Attribute::i64(ml));
    }
    if !proto.opset_import.is_empty() {
        let imports = proto.opset_import.iter().map(|o| {
            (
                Attribute::string(canonical_domain(&o.domain)),
                Attribute::i64(o.version),
            )
        });
        m.set_attr(top, "onnx.opset_imports", pairs(imports));
    }
    set_str(m, top, "onnx.producer_name", &proto.producer_name);
    set_str(m, top, "onnx.producer_version", &proto.producer_version);
    set_str(m, top, "onnx.domain", &proto.domain);
    if proto.model_version != 0 {
        m.set_attr(
            top,
            "onnx.model_version",
            Attribute::i64(proto.model_version),
        );
    }
    set_str(m, top, DOC_ATTR, &proto.doc_string);
    if !proto.metadata_props.is_empty() {
        let props = proto
            .metadata_props
            .iter()
            .map(|p| (Attribute::string(&p.key), Attribute::string(&p.value)));
        m.set_attr(top, "onnx.metadata_props", pairs(props));
    }
    if let Some(g) = &proto.graph {
        set_str(m, func, "onnx.graph_name", &g.name);
        set_str(m, func, DOC_ATTR, &g.doc_string);
    }
}
