//! One ONNX node → one op (or an inlined function body, or a constant).
//! The op is identified once ([`OpKind::from_model`]), its schema version
//! resolved for the model's opset, older forms rewritten into the newest,
//! and the result checked against the op's table row.

use super::legacy::Plan;
use super::{attrs, node_diag, small_elements, tensor, Importer};
use crate::dialect::DOC_ATTR;
use crate::forms::{self, Legacy, Role};
use crate::load::ExternalData;
use crate::proto::{AttributeProto, NodeProto};
use ir::elements::{DType, Elements, WideNum};
use ir::{Attribute, Diagnostic, Location, OpSpec, Type, ValueId};
use onnx::OpKind;
use std::borrow::Cow;

/// ONNX domains we know of but do not import.
const UNSUPPORTED_DOMAINS: &[&str] = &[
    "ai.onnx.preview",
    "ai.onnx.preview.training",
    "ai.onnx.training",
    "com.microsoft",
    "com.microsoft.nchwc",
    "org.pytorch.aten",
];

/// Operators whose results are sequences or optionals (not in the table).
const SEQUENCE_OPS: &[&str] = &[
    "ConcatFromSequence",
    "Optional",
    "SequenceAt",
    "SequenceConstruct",
    "SequenceEmpty",
    "SequenceErase",
    "SequenceInsert",
    "SequenceLength",
    "SequenceMap",
    "SplitToSequence",
];

/// Default-domain operators onnxruntime runs before the opset that
/// standardized them, with that opset's inputs, outputs and attributes:
/// its own LayerNormalization kernel predates opset 17, and its
/// transformer optimizer writes the op into opset-14 models.
const ORT_PRESTANDARD_OPS: &[&str] = &["LayerNormalization"];

fn valid_op_type(t: &str) -> bool {
    t.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn has_subgraph(a: &AttributeProto) -> bool {
    a.g.is_some() || !a.graphs.is_empty()
}

impl<'a> Importer<'a> {
    pub(super) fn import_node(&mut self, node: &NodeProto) -> Result<(), Diagnostic> {
        if !valid_op_type(&node.op_type) {
            return Err(node_diag(
                node,
                format!("invalid op type '{}'", node.op_type),
            ));
        }
        let attrs = self.resolve_attr_refs(node)?;
        if let Some(f) = self.function(node) {
            return self.inline_function(node, f, &attrs);
        }
        // onnxruntime's own ops become the ops they compute; a fold keeps
        // them for onnxruntime (foreign ops).
        let contrib = node.domain == super::contrib::DOMAIN
            || (node.domain.is_empty()
                && super::contrib::DEFAULT_DOMAIN_OPS.contains(&node.op_type.as_str()));
        if contrib && !self.keep_foreign {
            return self.import_contrib(node, &attrs);
        }
        let (kind, version) = match self.identify(node) {
            Err(_) if self.keep_foreign => return self.import_foreign(node, &attrs).map(drop),
            identified => identified?,
        };
        if kind == OpKind::ZipMap && !self.keep_foreign {
            return self.import_zipmap(node);
        }
        let form = forms::of(kind);
        refuse_legacy(node, form.legacy, version)?;
        match form.role {
            Role::Node => {}
            Role::Constant => {
                let e = match constant_node_value(node, &attrs, self.external) {
                    Err(_) if self.keep_foreign => {
                        return self.import_foreign(node, &attrs).map(drop)
                    }
                    e => e?,
                };
                let op = self.constant(e, self.node_loc(node))?;
                return self.finish_node(node, op);
            }
            Role::Regions => return self.import_control_flow(node, kind, &attrs),
            // Models cannot name onnxc's own ops (`from_model` excludes them).
            Role::Omitted | Role::Outputs | Role::Foreign => {
                return Err(node_diag(
                    node,
                    format!("unknown operator '{}'", node.op_type),
                ))
            }
        }
        if self.keep_foreign && attrs.iter().any(has_subgraph) {
            return self.import_foreign(node, &attrs).map(drop);
        }
        if let Some(a) = attrs.iter().find(|a| has_subgraph(a)) {
            return Err(node_diag(
                node,
                format!(
                    "unsupported subgraph attribute '{}' of operator '{}'",
                    a.name, node.op_type
                ),
            ));
        }
        let mut ir_attrs = match self.convert_attrs(node, &attrs) {
            Err(_) if self.keep_foreign => return self.import_foreign(node, &attrs).map(drop),
            converted => converted?,
        };
        let mut operands = self.operands(node)?;
        let loc = self.node_loc(node);
        self.normalize(node, &form, version, &mut ir_attrs, &mut operands, &loc)?;
        let plan = self.legacy(
            node,
            form.legacy,
            version,
            &mut ir_attrs,
            &mut operands,
            &loc,
        )?;
        let outputs = match &plan {
            Plan::Outputs(o) => o.len(),
            _ => node.output.len(),
        };
        check_row(node, kind, operands.len(), outputs, &ir_attrs)?;
        match plan {
            Plan::Keep => {}
            Plan::Outputs(output) => {
                let form = NodeProto {
                    output,
                    ..node.clone()
                };
                let result_types = self.result_types(&form);
                let op = self.create(kind, operands, result_types, ir_attrs, loc)?;
                return self.finish_node(&form, op);
            }
            Plan::PerActivationBatchNorm => {
                return self.per_activation_batch_norm(node, &ir_attrs, &operands, &loc)
            }
            Plan::CastMask => return self.import_cast_mask(node, ir_attrs, operands, &loc),
            Plan::Rows { axis } => {
                return self.import_rows(node, kind, axis, ir_attrs, &operands, &loc)
            }
        }
        let result_types = self.result_types(node);
        let op = self.create(kind, operands, result_types, ir_attrs, loc)?;
        self.finish_node(node, op)
    }

    /// A node onnxc does not know (or one whose attributes it cannot
    /// import), kept verbatim as `onnx.Foreign`: the outer values its
    /// subgraphs use follow its inputs, so that they stay alive and are
    /// renamed with it.
    pub(super) fn import_foreign(
        &mut self,
        node: &NodeProto,
        attrs: &[AttributeProto],
    ) -> Result<ir::OpId, Diagnostic> {
        let resolved = NodeProto {
            attribute: attrs.to_vec(),
            ..node.clone()
        };
        let mut operands = self.operands(node)?;
        let captures = crate::foreign::captures(&resolved);
        for name in &captures {
            let v = self.lookup(name).ok_or_else(|| {
                node_diag(
                    node,
                    format!("value '{name}' (used in a subgraph) is not defined in the graph"),
                )
            })?;
            operands.push(v);
        }
        let payload =
            crate::foreign::node_payload(&resolved).map_err(|e| node_diag(node, e.to_string()))?;
        let mut ir_attrs = vec![("node".to_string(), Attribute::Elements(payload))];
        if !captures.is_empty() {
            let names = captures.iter().map(|c| Attribute::string(c)).collect();
            ir_attrs.push(("captures".to_string(), Attribute::Array(names)));
        }
        let result_types = self.result_types(node);
        let loc = self.node_loc(node);
        let op = self.create(OpKind::Foreign, operands, result_types, ir_attrs, loc)?;
        self.finish_node(node, op)?;
        Ok(op)
    }

    /// The node's op kind and the version of its schema at the model's
    /// opset; unknown and unsupported operators are reported here.
    fn identify(&self, node: &NodeProto) -> Result<(OpKind, i64), Diagnostic> {
        let default_domain = match node.domain.as_str() {
            "" | "ai.onnx" => true,
            "ai.onnx.ml" => false,
            d if UNSUPPORTED_DOMAINS.contains(&d) => {
                return Err(node_diag(
                    node,
                    format!("unsupported operator '{}' of domain '{d}'", node.op_type),
                ));
            }
            d => {
                return Err(node_diag(
                    node,
                    format!(
                        "unknown domain '{d}' of operator '{}' (neither ONNX nor a model-local function)",
                        node.op_type
                    ),
                ))
            }
        };
        let opset = self.opset_version(&node.domain).ok_or_else(|| {
            node_diag(
                node,
                format!(
                    "the model imports no opset of domain '{}' that this node uses",
                    node.domain
                ),
            )
        })?;
        if default_domain && SEQUENCE_OPS.contains(&node.op_type.as_str()) {
            return Err(node_diag(
                node,
                format!(
                    "unsupported operator '{}': sequence and optional values are not imported",
                    node.op_type
                ),
            ));
        }
        let kind = OpKind::from_model(&node.domain, &node.op_type).ok_or_else(|| {
            node_diag(
                node,
                format!(
                    "unknown operator '{}' of domain '{}'",
                    node.op_type, node.domain
                ),
            )
        })?;
        let schema = kind.schema();
        let prestandard = default_domain
            && ORT_PRESTANDARD_OPS.contains(&node.op_type.as_str())
            && schema.versions.first().is_some_and(|&first| opset < first);
        let version = match prestandard {
            true => schema.versions.first().copied().unwrap_or(opset),
            false => schema.version_at(opset).map_err(|e| node_diag(node, e))?,
        };
        Ok((kind, version))
    }

    /// Creates one op at the end of the current block; its types are
    /// inferred by [`Importer::finish_node`] or [`Importer::infer`].
    /// A ZipMap compiles to its probability tensor (see `zipmap`): its
    /// input as is.
    fn import_zipmap(&mut self, node: &NodeProto) -> Result<(), Diagnostic> {
        let operands = self.operands(node)?;
        let &[x] = operands.as_slice() else {
            return Err(node_diag(node, "ZipMap takes one input".into()));
        };
        let ty = Type::unranked_tensor(self.m.value_type(x).element_type().clone());
        let loc = self.node_loc(node);
        let op = self.create(OpKind::Identity, vec![x], vec![ty], Vec::new(), loc)?;
        self.finish_node(node, op)
    }

    pub(super) fn create(
        &mut self,
        kind: OpKind,
        operands: Vec<ValueId>,
        result_types: Vec<Type>,
        attrs: Vec<(String, Attribute)>,
        loc: Location,
    ) -> Result<ir::OpId, Diagnostic> {
        let spec = OpSpec {
            operands,
            result_types,
            attrs: onnx::dialect::intern_attrs(attrs),
            loc: loc.clone(),
            ..OpSpec::default()
        };
        Ok(self.builder(loc)?.create(kind.ir_name(), spec))
    }

    /// Infers an op that no ONNX output names (a step of a decomposition).
    pub(super) fn infer(&mut self, op: ir::OpId) {
        crate::infer::infer_now(&mut self.m, op, &self.declared_types);
    }

    /// Binds the node's outputs to the op's results and records names and
    /// the doc string.
    pub(super) fn finish_node(&mut self, node: &NodeProto, op: ir::OpId) -> Result<(), Diagnostic> {
        let results = self.m.results(op).to_vec();
        let data_decides = rank_decided_by_data(&self.m, op);
        for &r in &results {
            if data_decides {
                let elem = self.m.value_type(r).element_type().clone();
                self.m.set_value_type(r, Type::unranked_tensor(elem));
            }
            self.declared_types
                .set(r, Some(self.m.value_type(r).clone()));
        }
        crate::infer::infer_now(&mut self.m, op, &self.declared_types);
        for (out, &v) in node.output.iter().zip(&results) {
            self.define(out, v, Some(node))?;
        }
        let outputs: Vec<String> = node.output.iter().take(results.len()).cloned().collect();
        self.set_names(op, &outputs);
        if !node.doc_string.is_empty() {
            self.m
                .set_attr(op, DOC_ATTR, Attribute::string(&node.doc_string));
        }
        Ok(())
    }

    /// The opset of a domain: the enclosing function's own import for the
    /// default domain, else the model's.
    pub(super) fn opset_version(&self, domain: &str) -> Option<i64> {
        let default = super::model_info::canonical_domain(domain).is_empty();
        match self.frames.last().and_then(|f| f.opset) {
            Some(v) if default => Some(v),
            _ => self.opsets.version(domain),
        }
    }

    /// The node's attributes with `ref_attr_name` references replaced by the
    /// enclosing function call's attributes (absent ones dropped).
    pub(super) fn resolve_attr_refs<'n>(
        &self,
        node: &'n NodeProto,
    ) -> Result<Cow<'n, [AttributeProto]>, Diagnostic> {
        if node.attribute.iter().all(|a| a.ref_attr_name.is_empty()) {
            return Ok(Cow::Borrowed(&node.attribute));
        }
        let Some(frame) = self.frames.last() else {
            let a = node.attribute.iter().find(|a| !a.ref_attr_name.is_empty());
            return Err(node_diag(
                node,
                format!(
                    "attribute '{}' refers to '{}' outside of a function",
                    a.map_or("", |a| a.name.as_str()),
                    a.map_or("", |a| a.ref_attr_name.as_str())
                ),
            ));
        };
        let mut out = Vec::with_capacity(node.attribute.len());
        for a in &node.attribute {
            if a.ref_attr_name.is_empty() {
                out.push(a.clone());
            } else if let Some(v) = frame.attrs.get(&a.ref_attr_name) {
                let mut v = v.clone();
                v.name.clone_from(&a.name);
                out.push(v);
            }
        }
        Ok(Cow::Owned(out))
    }

    /// Non-graph attributes as IR attributes.
    pub(super) fn convert_attrs(
        &self,
        node: &NodeProto,
        attrs: &[AttributeProto],
    ) -> Result<Vec<(String, Attribute)>, Diagnostic> {
        let mut out = Vec::with_capacity(attrs.len());
        for a in attrs {
            if has_subgraph(a) {
                continue;
            }
            let value = attrs::convert_attr(a, Some(self.external))
                .map_err(|d| node_diag(node, d.message))?;
            out.push((a.name.clone(), value));
        }
        Ok(out)
    }

    /// The node's inputs as values; omitted ones are `onnx.NoValue`,
    /// trailing omitted ones are dropped.
    pub(super) fn operands(&mut self, node: &NodeProto) -> Result<Vec<ValueId>, Diagnostic> {
        let last_used = node
            .input
            .iter()
            .rposition(|s| !s.is_empty())
            .map_or(0, |p| p + 1);
        let mut operands = Vec::with_capacity(last_used);
        for name in node.input.iter().take(last_used) {
            let v = if name.is_empty() {
                self.no_value()?
            } else {
                self.lookup(name).ok_or_else(|| {
                    node_diag(node, format!("input '{name}' is not defined in the graph"))
                })?
            };
            operands.push(v);
        }
        Ok(operands)
    }

    /// Declared types of the node's outputs; unknown ones are a placeholder
    /// that inference replaces (where it cannot, a kept foreign part
    /// leaves "unknown", not a guess).
    pub(super) fn result_types(&self, node: &NodeProto) -> Vec<Type> {
        node.output
            .iter()
            .map(|o| match self.declared(o) {
                Some(t) => t.clone(),
                None if self.keep_foreign => crate::foreign::type_of(None),
                None => Type::unranked_tensor(Type::f32()),
            })
            .collect()
    }
}

/// A Squeeze without axes of a value with a dynamic dim: its rank depends
/// on the sizes it runs at (every dim of 1 goes), so a declared rank is
/// only the one the exporter traced (torch's `x.squeeze()` of `[N, 1]`
/// declared `[N]`, a scalar at N = 1 in onnxruntime) and is not taken.
fn rank_decided_by_data(m: &ir::Module, op: ir::OpId) -> bool {
    onnx::is(m, op, OpKind::Squeeze)
        && m.operands(op).len() == 1
        && m.operand(op, 0)
            .is_some_and(|x| m.value_type(x).shape().is_none_or(|s| s.contains(&ir::DYN)))
}

/// The value of a `Constant` node, whichever attribute holds it.
pub fn constant_node_value(
    node: &NodeProto,
    attrs: &[AttributeProto],
    external: &ExternalData,
) -> Result<Elements, Diagnostic> {
    let Some(a) = attrs.first() else {
        return Err(node_diag(
            node,
            "Constant node has no value attribute".into(),
        ));
    };
    let fail = |d: Diagnostic| node_diag(node, d.message);
    let ints = |v: &[i64]| {
        let w: Vec<WideNum> = v.iter().map(|&x| WideNum::from_i64(x)).collect();
        Elements::from_wide(DType::I64, vec![v.len() as i64], &w)
            .map_err(|e| Diagnostic::error(e.to_string()))
    };
    match a.name.as_str() {
        "value" => {
            let t =
                a.t.as_ref()
                    .ok_or_else(|| node_diag(node, "'value' attribute holds no tensor".into()))?;
            tensor::tensor_to_elements(t, Some(external)).map_err(fail)
        }
        "value_float" => small_elements(DType::F32, vec![], &[f64::from(a.f)]).map_err(fail),
        "value_floats" => {
            let v: Vec<f64> = a.floats.iter().map(|&f| f64::from(f)).collect();
            small_elements(DType::F32, vec![v.len() as i64], &v).map_err(fail)
        }
        "value_int" => Elements::from_wide(DType::I64, vec![], &[WideNum::from_i64(a.i)])
            .map_err(|e| node_diag(node, e.to_string())),
        "value_ints" => ints(&a.ints).map_err(fail),
        "value_string" | "value_strings" => Err(node_diag(
            node,
            "unsupported dtype STRING in Constant".into(),
        )),
        "sparse_value" => Err(node_diag(node, "unsupported sparse Constant value".into())),
        other => Err(node_diag(
            node,
            format!("unknown Constant attribute '{other}'"),
        )),
    }
}

/// Older forms import does not support: refused before anything is made.
fn refuse_legacy(node: &NodeProto, legacy: Legacy, version: i64) -> Result<(), Diagnostic> {
    if version >= legacy.newest_from() {
        return Ok(());
    }
    let msg = match legacy {
        Legacy::Resize => format!(
            "unsupported Resize of opset {version} (the form before opset 11, without roi and sizes)"
        ),
        Legacy::Scan => {
            format!("unsupported Scan of opset {version} (the batched form before opset 9)")
        }
        Legacy::None
        | Legacy::Broadcast
        | Legacy::Gemm
        | Legacy::Cast
        | Legacy::Concat
        | Legacy::BatchNorm
        | Legacy::Dropout
        | Legacy::Rows2d
        | Legacy::FloatP => return Ok(()),
    };
    Err(node_diag(node, msg))
}

/// Checks the op a node becomes against its table row: operand and result
/// counts, attribute types, required attributes. Attributes the row does
/// not know are kept (export writes them back) but mean nothing to onnxc.
pub(super) fn check_row(
    node: &NodeProto,
    kind: OpKind,
    operands: usize,
    results: usize,
    attrs: &[(String, Attribute)],
) -> Result<(), Diagnostic> {
    let schema = kind.schema();
    let what = |e: String| node_diag(node, format!("{} {e}", kind.name()));
    onnx::verify::check_count("operands", operands, schema.inputs).map_err(what)?;
    onnx::verify::check_count("results", results, schema.outputs).map_err(what)?;
    onnx::verify::check_attrs(schema, attrs.iter().map(|(k, v)| (k.as_str(), v))).map_err(what)?;
    for (name, _) in attrs.iter().filter(|(k, _)| schema.attr(k).is_none()) {
        tracing::trace!(
            "{}: attribute '{name}' is not in the table row of {}; kept as is",
            super::node_label(node),
            kind.name()
        );
    }
    Ok(())
}
