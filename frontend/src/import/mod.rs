//! ONNX graph → `func.func @main_graph` of `onnx.*` ops, following
//! docs/ONNX_DIALECT.md.

pub mod attrs;
mod contrib;
mod function;
pub(crate) mod legacy;
mod model_info;
mod node;
pub(crate) mod normalize;
mod options;
pub(crate) mod order;
mod subgraph;
pub mod tensor;
pub mod types;
pub mod zipmap;

use crate::dialect::{DIM_PARAMS_IN, DIM_PARAMS_OUT};
use crate::load::{ExternalData, LoadedModel};
use crate::proto::{FunctionProto, GraphProto, NodeProto, TensorProto, ValueInfoProto};
use ir::elements::{DType, Elements, WideNum};
use ir::{
    Attribute, BlockId, Builder, Diagnostic, InsertPoint, Location, Module, OpId, Type, ValueId,
};
use onnx::OpKind;
use std::collections::{HashMap, HashSet};

pub use node::constant_node_value;
pub use options::{ImportOptions, InputShape};

/// Name of the imported main function.
pub const MAIN_GRAPH: &str = "main_graph";

/// Subgraphs and function calls nested deeper than this are refused (the
/// importer recurses once per level).
const MAX_DEPTH: usize = 64;

/// Imports the main graph of a loaded model into a fresh module, with result
/// types refined by shape inference.
pub fn import_model(model: &LoadedModel) -> Result<Module, Diagnostic> {
    import_model_with(model, &ImportOptions::default())
}

/// [`import_model`] with options (input shapes fixed before inference).
/// Shapes that do not fit the model are a diagnostic here; callers that
/// treat them as usage errors call [`ImportOptions::check`] first.
pub fn import_model_with(model: &LoadedModel, opts: &ImportOptions) -> Result<Module, Diagnostic> {
    opts.check(model).map_err(Diagnostic::error)?;
    crate::dialect::register();
    let proto = &model.proto;
    let graph = proto
        .graph
        .as_ref()
        .ok_or_else(|| Diagnostic::error("the model has no graph"))?;
    let opsets = model_info::Opsets::new(&proto.opset_import, proto.ir_version)?;
    let mut imp = Importer {
        m: Module::new(),
        external: model.external(),
        functions: function::index(&proto.functions)?,
        opsets,
        scopes: Vec::new(),
        frames: Vec::new(),
        no_value: None,
        entry: None,
        block: None,
        depth: 0,
        declared_types: crate::infer::Declared::default(),
        keep_foreign: opts.keep_foreign,
    };
    let func = imp.import_main(graph, opts)?;
    let mut m = std::mem::take(&mut imp.m);
    model_info::record(&mut m, proto, func);
    crate::infer::infer_function_with(&mut m, func, &imp.declared_types)?;
    Ok(m)
}

/// A `Constant` node of the value of an initializer.
fn foreign_constant(t: &TensorProto) -> NodeProto {
    NodeProto {
        op_type: OpKind::Constant.name().to_string(),
        output: vec![t.name.clone()],
        attribute: vec![crate::proto::AttributeProto {
            name: "value".to_string(),
            r#type: crate::proto::attribute_proto::AttributeType::Tensor as i32,
            t: Some(t.clone()),
            ..Default::default()
        }],
        ..NodeProto::default()
    }
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
    let op = match node.domain.as_str() {
        "" | "ai.onnx" => format!("onnx.{}", node.op_type),
        d => format!("{d}.{}", node.op_type),
    };
    Diagnostic::error(msg)
        .at(Location::name(node_label(node)))
        .on_op(op)
}

/// A graph output of a type onnxc cannot import. One made by a node names
/// it: the string labels of a classifier, skl2onnx's ZipMap.
fn output_type_error(g: &GraphProto, vi: &ValueInfoProto, e: String) -> Diagnostic {
    let string = matches!(
        vi.r#type.as_ref().and_then(|t| t.value.as_ref()),
        Some(crate::proto::type_proto::Value::TensorType(t))
            if t.elem_type == crate::proto::tensor_proto::DataType::String as i32
    );
    let plain = || Diagnostic::error(format!("value '{}': {e}", vi.name));
    let Some(node) = g.node.iter().find(|n| n.output.contains(&vi.name)) else {
        return plain();
    };
    let kind = OpKind::from_model(&node.domain, &node.op_type);
    let why = match kind {
        Some(OpKind::LinearClassifier | OpKind::TreeEnsembleClassifier | OpKind::SVMClassifier)
            if string =>
        {
            onnx::ml::STRING_LABELS.to_string()
        }
        Some(OpKind::ZipMap) => format!(
            "{e}: ZipMap's sequence of maps has no C ABI form; export the classifier \
             without it (skl2onnx: options={{'zipmap': False}})"
        ),
        _ if string => {
            "string tensors are not supported: onnxc and its C ABI have numeric tensors only".into()
        }
        _ => return plain(),
    };
    Diagnostic::error(format!("output '{}': {why}", vi.name))
        .at(Location::name(node_label(node)))
        .on_op(kind.map_or_else(|| node.op_type.clone(), |k| k.ir_name().to_string()))
}

/// One lexical scope: a graph, a subgraph or an inlined function body.
#[derive(Default)]
struct Scope {
    /// ONNX value name → IR value.
    values: HashMap<String, ValueId>,
    /// Types declared by `value_info`, graph outputs and subgraph inputs.
    declared: HashMap<String, Type>,
    /// A function body: names of the caller's scopes are not visible.
    isolated: bool,
}

/// An inlined model-local function being imported.
struct Frame {
    /// The call's attributes, for `ref_attr_name` references.
    attrs: HashMap<String, crate::proto::AttributeProto>,
    /// Prefix of value and node names inside the body ("call/").
    prefix: String,
    /// Function output name → the caller's output name.
    outputs: HashMap<String, String>,
    /// Opset of the default domain the body was written for.
    opset: Option<i64>,
}

struct Importer<'a> {
    m: Module,
    external: &'a ExternalData,
    /// Model-local functions by (domain, name, overload).
    functions: HashMap<(String, String, String), &'a FunctionProto>,
    opsets: model_info::Opsets,
    scopes: Vec<Scope>,
    frames: Vec<Frame>,
    /// The shared `onnx.NoValue` result, created on first need.
    no_value: Option<ValueId>,
    /// Entry block of the main function (where `onnx.NoValue` lives).
    entry: Option<BlockId>,
    /// Block new ops go to.
    block: Option<BlockId>,
    /// Current nesting of subgraphs and function calls.
    depth: usize,
    /// Types values were created with (declarations or placeholders),
    /// before on-the-fly inference refined them.
    declared_types: crate::infer::Declared,
    /// See [`ImportOptions::keep_foreign`].
    keep_foreign: bool,
}

fn value_info_type(vi: &ValueInfoProto) -> Result<Type, Diagnostic> {
    let tp = vi
        .r#type
        .as_ref()
        .ok_or_else(|| Diagnostic::error(format!("value '{}' has no type", vi.name)))?;
    for (i, v) in types::nonpositive_dims(Some(tp))
        .into_iter()
        .filter(|&(_, v)| v < 0)
    {
        tracing::warn!(
            "value '{}': dim {i} is declared {v}; taken as an unknown (dynamic) dim",
            vi.name
        );
    }
    types::convert_type(tp).map_err(|e| Diagnostic::error(format!("value '{}': {e}", vi.name)))
}

/// The type of a graph input or output: like [`value_info_type`], and a
/// declared 0 is an unknown dim too (exporters write 0 for "any size").
fn graph_io_type(vi: &ValueInfoProto) -> Result<Type, Diagnostic> {
    let ty = value_info_type(vi)?;
    let zeros: Vec<usize> = types::nonpositive_dims(vi.r#type.as_ref())
        .into_iter()
        .filter(|&(_, v)| v == 0)
        .map(|(i, _)| i)
        .collect();
    let Some(shape) = ty.shape().filter(|_| !zeros.is_empty()) else {
        return Ok(ty);
    };
    for i in &zeros {
        tracing::warn!(
            "graph input/output '{}': dim {i} is declared 0; taken as an unknown (dynamic) dim",
            vi.name
        );
    }
    let dims = shape
        .iter()
        .enumerate()
        .map(|(i, &d)| if zeros.contains(&i) { ir::DYN } else { d })
        .collect();
    Ok(Type::tensor(dims, ty.element_type().clone()))
}

/// Symbols for the dynamic dims of graph inputs: a dim's `dim_param`, else
/// `<input>_d<i>` (made unique), so that every dynamic size has a name
/// that shape inference carries through the graph.
struct InputSymbols {
    used: HashSet<String>,
}

impl InputSymbols {
    fn new(inputs: &[&ValueInfoProto]) -> InputSymbols {
        let used = inputs
            .iter()
            .filter_map(|vi| types::dim_params(vi.r#type.as_ref()))
            .flatten()
            .filter(|n| !n.is_empty())
            .collect();
        InputSymbols { used }
    }

    fn name_dims(&mut self, vi: &ValueInfoProto, ty: Type) -> Type {
        let (Some(shape), Some(params)) = (
            ty.shape().map(<[i64]>::to_vec),
            Some(types::dim_params(vi.r#type.as_ref()).unwrap_or_default()),
        ) else {
            return ty;
        };
        if !shape.contains(&ir::DYN) {
            return ty;
        }
        let base: String = vi
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let dims = shape
            .iter()
            .enumerate()
            .map(|(i, &d)| {
                if d != ir::DYN {
                    return Some(ir::dim::DimExpr::constant(d));
                }
                let name = match params.get(i).filter(|p| !p.is_empty()) {
                    Some(p) => p.clone(),
                    None => self.unique(format!("{base}_d{i}")),
                };
                Some(ir::dim::DimExpr::sym(&name))
            })
            .collect();
        Type::tensor_dims(dims, ty.element_type().clone())
    }

    fn unique(&mut self, name: String) -> String {
        let mut n = name.clone();
        let mut k = 1;
        while !self.used.insert(n.clone()) {
            k += 1;
            n = format!("{name}_{k}");
        }
        n
    }
}

/// `ty` with the dims `s` fixes (a `?` keeps the declared dim).
fn with_shape(ty: &Type, s: &InputShape) -> Type {
    let declared = ty.shape().map(<[i64]>::to_vec);
    let dims = s
        .dims
        .iter()
        .enumerate()
        .map(|(i, d)| match d {
            Some(n) => *n,
            None => declared
                .as_ref()
                .and_then(|sh| sh.get(i).copied())
                .unwrap_or(ir::DYN),
        })
        .collect();
    Type::tensor(dims, ty.element_type().clone())
}

fn string_array(names: impl Iterator<Item = String>) -> Attribute {
    Attribute::Array(names.map(|n| Attribute::string(&n)).collect())
}

impl<'a> Importer<'a> {
    fn import_main(&mut self, g: &GraphProto, opts: &ImportOptions) -> Result<OpId, Diagnostic> {
        self.scopes.push(Scope::default());
        // Initializers listed as inputs (IR < 4) are constants, not inputs.
        let init_names: HashSet<&str> = g.initializer.iter().map(|t| t.name.as_str()).collect();
        let inputs: Vec<&ValueInfoProto> = g
            .input
            .iter()
            .filter(|vi| !init_names.contains(vi.name.as_str()))
            .collect();
        let mut input_types = Vec::with_capacity(inputs.len());
        let mut names = InputSymbols::new(&inputs);
        for vi in &inputs {
            let ty = self.or_foreign(vi, graph_io_type(vi))?;
            let ty = match opts.shape_of(&vi.name) {
                Some(s) => with_shape(&ty, s),
                None => ty,
            };
            input_types.push(names.name_dims(vi, ty));
        }
        for vi in &g.output {
            // Outputs may omit their type, but not have one we cannot import
            // (a ZipMap's maps come out as their probability tensor).
            let zipped = zipmap::maker(g, &vi.name).is_some();
            if let Some(tp) = vi.r#type.as_ref().filter(|_| !self.keep_foreign && !zipped) {
                types::convert_type(tp).map_err(|e| output_type_error(g, vi, e))?;
            }
        }
        let body = self.m.body();
        let mut b = Builder::at_end(&mut self.m, body);
        let (func, entry) = b.func(MAIN_GRAPH, input_types, Vec::new());
        self.entry = Some(entry);
        self.block = Some(entry);
        self.m.set_attr(
            func,
            "input_names",
            string_array(inputs.iter().map(|v| v.name.clone())),
        );
        self.m.set_attr(
            func,
            "output_names",
            string_array(g.output.iter().map(|v| v.name.clone())),
        );
        for (attr, vis) in [
            (DIM_PARAMS_IN, inputs.clone()),
            (DIM_PARAMS_OUT, g.output.iter().collect()),
        ] {
            let per_value: Vec<Option<Vec<String>>> = vis
                .iter()
                .map(|vi| types::dim_params(vi.r#type.as_ref()))
                .collect();
            if per_value.iter().any(Option::is_some) {
                // Unit: no dim named (no shape, or static dims only).
                let lists = per_value
                    .into_iter()
                    .map(|names| names.map_or(Attribute::Unit, |n| string_array(n.into_iter())));
                self.m
                    .set_attr(func, attr, Attribute::Array(lists.collect()));
            }
        }
        let zipped = zipmap::zipmap_outputs(g);
        if !self.keep_foreign && zipped.iter().any(Option::is_some) {
            let entries = zipped
                .iter()
                .map(|l| l.as_ref().map_or(Attribute::Unit, zipmap::Labels::to_attr));
            self.m.set_attr(
                func,
                ir::dialects::func::OUTPUT_ZIPMAP,
                Attribute::Array(entries.collect()),
            );
        }
        let args = self.m.block_args(entry).to_vec();
        for (vi, &arg) in inputs.iter().zip(&args) {
            self.define(&vi.name, arg, None)?;
        }
        let results = self.import_body(g)?;
        let mut b = Builder::at_end(&mut self.m, entry);
        b.ret(&results);
        self.scopes.pop();
        Ok(func)
    }

    /// Imports a graph's initializers and nodes into the current block and
    /// scope (its inputs are already defined); returns its outputs.
    fn import_body(&mut self, g: &GraphProto) -> Result<Vec<ValueId>, Diagnostic> {
        if let Some(s) = g.sparse_initializer.first() {
            let name = s.values.as_ref().map_or("", |v| v.name.as_str());
            return Err(Diagnostic::error(format!(
                "unsupported sparse initializer '{name}'"
            )));
        }
        for vi in &g.value_info {
            if let Ok(t) = self.or_foreign(vi, value_info_type(vi)) {
                self.scope_mut()?.declared.insert(vi.name.clone(), t);
            }
        }
        for vi in &g.output {
            if let Ok(t) = self.or_foreign(vi, graph_io_type(vi)) {
                self.scope_mut()?.declared.insert(vi.name.clone(), t);
            }
        }
        let mut seen = HashSet::with_capacity(g.initializer.len());
        for t in &g.initializer {
            if !seen.insert(t.name.as_str()) {
                return Err(Diagnostic::error(format!(
                    "initializer '{}' is defined more than once",
                    t.name
                )));
            }
            if self.scope_mut()?.values.contains_key(&t.name) {
                continue; // an input of the same name wins (IR < 4 defaults)
            }
            self.import_initializer(t)?;
        }
        let local: HashSet<&str> = g
            .input
            .iter()
            .map(|v| v.name.as_str())
            .chain(g.initializer.iter().map(|t| t.name.as_str()))
            .collect();
        let order = order::topo_order(&g.node, &local, &|n: &str| self.lookup(n).is_some())?;
        for i in order {
            if let Some(node) = g.node.get(i) {
                ir::cancel::check()?;
                self.import_node(node)?;
            }
        }
        let mut results = Vec::with_capacity(g.output.len());
        for vi in &g.output {
            let v = self.lookup(&vi.name).ok_or_else(|| {
                Diagnostic::error(format!("graph output '{}' is not defined", vi.name))
            })?;
            results.push(v);
        }
        Ok(results)
    }

    /// A declared type, or a foreign one when onnxc cannot import it and
    /// keeps foreign parts.
    fn or_foreign(
        &self,
        vi: &ValueInfoProto,
        ty: Result<Type, Diagnostic>,
    ) -> Result<Type, Diagnostic> {
        match ty {
            Err(_) if self.keep_foreign && vi.r#type.is_some() => {
                Ok(crate::foreign::type_of(vi.r#type.as_ref()))
            }
            ty => ty,
        }
    }

    fn scope_mut(&mut self) -> Result<&mut Scope, Diagnostic> {
        self.scopes
            .last_mut()
            .ok_or_else(|| Diagnostic::error("internal: no scope to import into"))
    }

    /// The value an ONNX name denotes here (innermost scope first, never
    /// past a function body).
    fn lookup(&self, name: &str) -> Option<ValueId> {
        for s in self.scopes.iter().rev() {
            if let Some(&v) = s.values.get(name) {
                return Some(v);
            }
            if s.isolated {
                break;
            }
        }
        None
    }

    /// The type declared for a name, if any scope declares one.
    fn declared(&self, name: &str) -> Option<&Type> {
        for s in self.scopes.iter().rev() {
            if let Some(t) = s.declared.get(name) {
                return Some(t);
            }
            if s.isolated {
                break;
            }
        }
        None
    }

    /// Binds an ONNX name to a value; names are single-assignment per scope.
    fn define(
        &mut self,
        name: &str,
        v: ValueId,
        node: Option<&NodeProto>,
    ) -> Result<(), Diagnostic> {
        if name.is_empty() {
            return Ok(());
        }
        if self
            .scope_mut()?
            .values
            .insert(name.to_string(), v)
            .is_some()
        {
            let msg = format!("value '{name}' is defined more than once");
            return Err(match node {
                Some(n) => node_diag(n, msg),
                None => Diagnostic::error(msg),
            });
        }
        Ok(())
    }

    /// The name a value gets on export: inside an inlined function, the
    /// caller's output name or the name prefixed by the call.
    fn export_name(&self, name: &str) -> String {
        match self.frames.last() {
            Some(_) if name.is_empty() => String::new(),
            Some(f) => f
                .outputs
                .get(name)
                .cloned()
                .unwrap_or_else(|| format!("{}{name}", f.prefix)),
            None => name.to_string(),
        }
    }

    /// The location of a node: its label, prefixed inside functions.
    fn node_loc(&self, node: &NodeProto) -> Location {
        match self.frames.last() {
            Some(f) => Location::name(&format!("{}{}", f.prefix, node_label(node))),
            None => Location::name(node_label(node)),
        }
    }

    /// Records the export names of `op`'s results unless they are the
    /// default (a single result named like the location).
    fn set_names(&mut self, op: OpId, outputs: &[String]) {
        let names: Vec<String> = outputs.iter().map(|o| self.export_name(o)).collect();
        let default = match self.m.loc(op) {
            Location::Name(n) => names.len() == 1 && names[0] == **n,
            _ => false,
        };
        if !default {
            self.m.set_attr(
                op,
                crate::dialect::NAMES_ATTR,
                string_array(names.into_iter()),
            );
        }
    }

    fn builder(&mut self, loc: Location) -> Result<Builder<'_>, Diagnostic> {
        let block = self
            .block
            .ok_or_else(|| Diagnostic::error("internal: no block to import into"))?;
        Ok(Builder::at_end(&mut self.m, block).with_loc(loc))
    }

    /// An `onnx.Constant` holding `e`.
    fn constant(&mut self, e: Elements, loc: Location) -> Result<OpId, Diagnostic> {
        let ty = e.tensor_type();
        let mut b = self.builder(loc)?;
        Ok(b.op(
            OpKind::Constant.ir_name(),
            &[],
            &[ty],
            &[("value", Attribute::Elements(e))],
        ))
    }

    /// A constant operand made at import (normalized attributes).
    fn constant_value(&mut self, e: Elements, loc: Location) -> Result<ValueId, Diagnostic> {
        let op = self.constant(e, loc)?;
        self.m
            .result(op, 0)
            .ok_or_else(|| Diagnostic::error("internal: constant without result"))
    }

    fn import_initializer(&mut self, t: &TensorProto) -> Result<(), Diagnostic> {
        let e = match tensor::tensor_to_elements(t, Some(self.external)) {
            // A string initializer: a Constant node that holds it.
            Err(_) if self.keep_foreign => {
                let node = foreign_constant(t);
                let op = self.import_foreign(&node, &node.attribute)?;
                self.m.set_attr(op, "initializer", Attribute::i64(1));
                return Ok(());
            }
            e => e?,
        };
        let name = self.export_name(&t.name);
        let op = self.constant(e, Location::name(&name))?;
        let v = self
            .m
            .result(op, 0)
            .ok_or_else(|| Diagnostic::error("internal: constant without result"))?;
        self.define(&t.name, v, None)
    }

    /// The shared `onnx.NoValue`, at the start of the main function so that
    /// it dominates every use, in subgraphs too.
    pub(super) fn no_value(&mut self) -> Result<ValueId, Diagnostic> {
        if let Some(v) = self.no_value {
            return Ok(v);
        }
        let entry = self
            .entry
            .ok_or_else(|| Diagnostic::error("internal: no main function"))?;
        let mut b = Builder::new(&mut self.m, InsertPoint::Start(entry));
        let v = b.op1(OpKind::NoValue.ir_name(), &[], Type::None, &[]);
        self.no_value = Some(v);
        Ok(v)
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
