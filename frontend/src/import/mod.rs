//! ONNX graph → `func.func @main_graph` of `onnx.*` ops, following
//! docs/ONNX_DIALECT.md.

pub mod attrs;
mod normalize;
mod order;
pub mod tensor;
pub mod types;

use crate::load::{ExternalData, LoadedModel};
use crate::proto::{FunctionProto, GraphProto, NodeProto, TensorProto, ValueInfoProto};
use ir::elements::{DType, Elements, WideNum};
use ir::{Attribute, BlockId, Builder, Diagnostic, Location, Module, OpSpec, Sym, Type, ValueId};
use std::collections::{HashMap, HashSet};

/// Name of the imported main function.
pub const MAIN_GRAPH: &str = "main_graph";

/// Opset assumed when a model imports no default-domain opset (IR < 3).
const DEFAULT_OPSET: i64 = 1;

/// Imports the main graph of a loaded model into a fresh module, with result
/// types refined by shape inference.
pub fn import_model(model: &LoadedModel) -> Result<Module, Diagnostic> {
    crate::dialect::register();
    let proto = &model.proto;
    let graph = proto
        .graph
        .as_ref()
        .ok_or_else(|| Diagnostic::error("the model has no graph"))?;
    let opset = proto
        .opset_import
        .iter()
        .find(|o| o.domain.is_empty() || o.domain == "ai.onnx")
        .map_or(DEFAULT_OPSET, |o| o.version);
    let mut imp = Importer {
        m: Module::new(),
        external: model.external(),
        functions: &proto.functions,
        values: HashMap::new(),
        declared: HashMap::new(),
        no_value: None,
        block: None,
    };
    let func = imp.import_graph(graph)?;
    let mut m = imp.m;
    let top = m.top();
    m.set_attr(top, "onnx.opset", Attribute::i64(opset));
    m.set_attr(top, "onnx.ir_version", Attribute::i64(proto.ir_version));
    if let Some(ml) = proto.opset_import.iter().find(|o| o.domain == "ai.onnx.ml") {
        m.set_attr(top, "onnx.ml_opset", Attribute::i64(ml.version));
    }
    crate::infer::infer_function(&mut m, func)?;
    Ok(m)
}

/// The node's name for messages: its name, else its first output.
pub fn node_label(node: &NodeProto) -> &str {
    if !node.name.is_empty() {
        return &node.name;
    }
    node.output
        .iter()
        .find(|o| !o.is_empty())
        .map_or("", String::as_str)
}

/// A diagnostic located at a node, naming its op.
pub fn node_diag(node: &NodeProto, msg: String) -> Diagnostic {
    Diagnostic::error(msg)
        .at(Location::name(node_label(node)))
        .on_op(format!("onnx.{}", node.op_type))
}

struct Importer<'a> {
    m: Module,
    external: &'a ExternalData,
    /// Model-local functions, only to name them in diagnostics.
    functions: &'a [FunctionProto],
    /// ONNX value name → IR value.
    values: HashMap<String, ValueId>,
    /// Types declared by `value_info` and graph outputs.
    declared: HashMap<String, Type>,
    /// The shared `onnx.NoValue` result, created on first need.
    no_value: Option<ValueId>,
    block: Option<BlockId>,
}

fn value_info_type(vi: &ValueInfoProto) -> Result<Type, Diagnostic> {
    let tp = vi
        .r#type
        .as_ref()
        .ok_or_else(|| Diagnostic::error(format!("value '{}' has no type", vi.name)))?;
    types::convert_type(tp).map_err(|e| Diagnostic::error(format!("value '{}': {e}", vi.name)))
}

fn string_array(names: impl Iterator<Item = String>) -> Attribute {
    Attribute::Array(names.map(|n| Attribute::string(&n)).collect())
}

impl Importer<'_> {
    fn import_graph(&mut self, g: &GraphProto) -> Result<ir::OpId, Diagnostic> {
        if let Some(s) = g.sparse_initializer.first() {
            let name = s.values.as_ref().map_or("", |v| v.name.as_str());
            return Err(Diagnostic::error(format!(
                "sparse initializer '{name}' is not supported"
            )));
        }
        for vi in &g.value_info {
            if let Ok(t) = value_info_type(vi) {
                self.declared.insert(vi.name.clone(), t);
            }
        }
        for vi in &g.output {
            if let Ok(t) = value_info_type(vi) {
                self.declared.insert(vi.name.clone(), t);
            }
        }
        let mut input_types = Vec::with_capacity(g.input.len());
        for vi in &g.input {
            input_types.push(value_info_type(vi)?);
        }
        let body = self.m.body();
        let mut b = Builder::at_end(&mut self.m, body);
        let (func, entry) = b.func(MAIN_GRAPH, input_types, Vec::new());
        self.block = Some(entry);
        self.m.set_attr(
            func,
            "input_names",
            string_array(g.input.iter().map(|v| v.name.clone())),
        );
        self.m.set_attr(
            func,
            "output_names",
            string_array(g.output.iter().map(|v| v.name.clone())),
        );

        for (vi, &arg) in g.input.iter().zip(self.m.block_args(entry).to_vec().iter()) {
            self.define(&vi.name, arg, None)?;
        }
        let input_names: HashSet<&str> = g.input.iter().map(|i| i.name.as_str()).collect();
        for t in &g.initializer {
            // ONNX IR < 4: an initializer listed as an input stays an input.
            if !input_names.contains(t.name.as_str()) {
                self.import_initializer(t)?;
            }
        }
        let outer: HashSet<&str> = self.values.keys().map(String::as_str).collect();
        let order = order::topo_order(&g.node, &outer)?;
        for i in order {
            if let Some(node) = g.node.get(i) {
                self.import_node(node)?;
            }
        }
        let mut results = Vec::with_capacity(g.output.len());
        for vi in &g.output {
            let v = self.values.get(&vi.name).copied().ok_or_else(|| {
                Diagnostic::error(format!("graph output '{}' is not defined", vi.name))
            })?;
            results.push(v);
        }
        let mut b = Builder::at_end(&mut self.m, entry);
        b.ret(&results);
        Ok(func)
    }

    /// Binds an ONNX name to a value; names are single-assignment.
    fn define(
        &mut self,
        name: &str,
        v: ValueId,
        node: Option<&NodeProto>,
    ) -> Result<(), Diagnostic> {
        if name.is_empty() {
            return Ok(());
        }
        if self.values.insert(name.to_string(), v).is_some() {
            let msg = format!("value '{name}' is defined more than once");
            return Err(match node {
                Some(n) => node_diag(n, msg),
                None => Diagnostic::error(msg),
            });
        }
        Ok(())
    }

    fn builder(&mut self, loc: Location) -> Result<Builder<'_>, Diagnostic> {
        let block = self
            .block
            .ok_or_else(|| Diagnostic::error("internal: no block to import into"))?;
        Ok(Builder::at_end(&mut self.m, block).with_loc(loc))
    }

    /// An `onnx.Constant` holding `e`.
    fn constant(&mut self, e: Elements, loc: Location) -> Result<ValueId, Diagnostic> {
        let ty = e.tensor_type();
        let mut b = self.builder(loc)?;
        Ok(b.op1(
            "onnx.Constant",
            &[],
            ty,
            &[("value", Attribute::Elements(e))],
        ))
    }

    fn import_initializer(&mut self, t: &TensorProto) -> Result<(), Diagnostic> {
        let e = tensor::tensor_to_elements(t, Some(self.external))?;
        let v = self.constant(e, Location::name(&t.name))?;
        self.define(&t.name, v, None)
    }

    fn no_value(&mut self) -> Result<ValueId, Diagnostic> {
        if let Some(v) = self.no_value {
            return Ok(v);
        }
        let mut b = self.builder(Location::Unknown)?;
        let v = b.op1("onnx.NoValue", &[], Type::None, &[]);
        self.no_value = Some(v);
        Ok(v)
    }

    fn import_node(&mut self, node: &NodeProto) -> Result<(), Diagnostic> {
        let dialect = match node.domain.as_str() {
            "" | "ai.onnx" => "onnx",
            "ai.onnx.ml" => "onnx_ml",
            d => {
                let local = self
                    .functions
                    .iter()
                    .any(|f| f.domain == d && f.name == node.op_type);
                let msg = if local {
                    format!("calls of model-local functions ('{d}') are not supported yet")
                } else {
                    format!("unknown domain '{d}'")
                };
                return Err(node_diag(node, msg));
            }
        };
        let valid_name = node
            .op_type
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
            && node
                .op_type
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid_name {
            return Err(node_diag(
                node,
                format!("invalid op type '{}'", node.op_type),
            ));
        }
        let loc = Location::name(node_label(node));
        if dialect == "onnx" && node.op_type == "Constant" {
            let e = constant_node_value(node, self.external)?;
            let v = self.constant(e, loc)?;
            let out = node.output.first().map_or("", String::as_str);
            return self.define(out, v, Some(node));
        }
        let mut attrs = Vec::with_capacity(node.attribute.len());
        for a in &node.attribute {
            let value = attrs::convert_attr(a, Some(self.external))
                .map_err(|d| node_diag(node, d.message))?;
            attrs.push((a.name.clone(), value));
        }
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
                self.values.get(name).copied().ok_or_else(|| {
                    node_diag(node, format!("input '{name}' is not defined in the graph"))
                })?
            };
            operands.push(v);
        }
        if dialect == "onnx" {
            self.normalize(node, &mut attrs, &mut operands, &loc)?;
        }
        let result_types: Vec<Type> = node
            .output
            .iter()
            .map(|o| {
                self.declared
                    .get(o)
                    .cloned()
                    .unwrap_or_else(|| Type::unranked_tensor(Type::f32()))
            })
            .collect();
        let spec = OpSpec {
            operands,
            result_types,
            attrs: attrs.into_iter().map(|(k, v)| (Sym::new(&k), v)).collect(),
            loc: loc.clone(),
            ..OpSpec::default()
        };
        let name = format!("{dialect}.{}", node.op_type);
        let mut b = self.builder(loc)?;
        let op = b.create(&name, spec);
        let results = self.m.results(op).to_vec();
        for (out, v) in node.output.iter().zip(results) {
            self.define(out, v, Some(node))?;
        }
        Ok(())
    }
}

/// A scalar or 1-D constant of `dtype` from plain numbers.
pub(crate) fn small_elements(
    dtype: DType,
    shape: Vec<i64>,
    values: &[f64],
) -> Result<Elements, Diagnostic> {
    let wide: Vec<WideNum> = values
        .iter()
        .map(|&v| match dtype.class() {
            ir::elements::NumClass::Float => WideNum::from_f64(v),
            ir::elements::NumClass::Signed => WideNum::from_i64(v as i64),
            ir::elements::NumClass::Unsigned => WideNum::from_u64(v as u64),
        })
        .collect();
    Elements::from_wide(dtype, shape, &wide).map_err(|e| Diagnostic::error(e.to_string()))
}

/// The value of a `Constant` node, whichever attribute holds it.
fn constant_node_value(node: &NodeProto, external: &ExternalData) -> Result<Elements, Diagnostic> {
    let Some(a) = node.attribute.first() else {
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
        "sparse_value" => Err(node_diag(
            node,
            "sparse Constant values are not supported".into(),
        )),
        other => Err(node_diag(
            node,
            format!("unknown Constant attribute '{other}'"),
        )),
    }
}
