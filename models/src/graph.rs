//! A small builder over the `frontend::proto` types: graph inputs and
//! outputs, initializers, weights (random or "light"), nodes and attributes.

use std::collections::HashSet;

use bytes::Bytes;
use frontend::proto::{
    attribute_proto::AttributeType, tensor_proto::DataType, tensor_shape_proto, type_proto,
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto,
    TensorShapeProto, TypeProto, ValueInfoProto,
};

use crate::rng::Rng;
use crate::GenOptions;

/// IR version written into every model (ONNX 1.16+, 2024-03-25).
pub const IR_VERSION: i64 = 10;
/// Default-domain opset unless a model asks for another.
pub const DEFAULT_OPSET: i64 = 17;

/// One dimension of a declared graph input or output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dim {
    Value(i64),
    /// Symbolic dimension, e.g. `"batch"`.
    Param(String),
}

impl From<i64> for Dim {
    fn from(v: i64) -> Self {
        Dim::Value(v)
    }
}

impl From<&str> for Dim {
    fn from(p: &str) -> Self {
        Dim::Param(p.to_string())
    }
}

/// How a weight's values are drawn (ignored in light mode).
#[derive(Clone, Copy, Debug)]
pub enum Init {
    /// Kaiming/He normal: N(0, 2 / fan_in), for layers followed by ReLU.
    HeNormal {
        fan_in: usize,
    },
    Normal {
        std: f32,
    },
    Uniform {
        lo: f32,
        hi: f32,
    },
    /// Every element equal (e.g. LayerNorm gamma = 1).
    Const(f32),
}

impl Init {
    /// A small bias, as trained networks have.
    pub const BIAS: Init = Init::Uniform {
        lo: -0.05,
        hi: 0.05,
    };

    /// He normal for a layer with `fan_in` inputs per output.
    pub fn he(fan_in: i64) -> Init {
        Init::HeNormal {
            fan_in: fan_in.max(1) as usize,
        }
    }

    /// The single fill value of a light weight. A fixed 0.02 (what onnx's
    /// own `light_*` models use) overflows f32 in deep nets, so the fill
    /// keeps the scale: He weights average their inputs, BN stays ~identity.
    pub fn light_value(self) -> f32 {
        match self {
            Init::HeNormal { fan_in } => 1.0 / fan_in.max(1) as f32,
            Init::Normal { std } => 0.5 * std,
            Init::Uniform { lo, hi } => 0.5 * (lo + hi),
            Init::Const(v) => v,
        }
    }

    /// `n` samples as little-endian f32 bytes, written straight into the
    /// buffer that becomes `raw_data` (the big zoo models hold ~250 MB).
    fn sample_le_bytes(self, rng: &mut Rng, n: usize) -> Vec<u8> {
        let mut raw = Vec::with_capacity(4 * n);
        let mut put = |v: f32| raw.extend_from_slice(&v.to_le_bytes());
        match self {
            Init::HeNormal { fan_in } => {
                let std = (2.0 / fan_in.max(1) as f64).sqrt();
                (0..n).for_each(|_| put((rng.normal() * std) as f32));
            }
            Init::Normal { std } => {
                (0..n).for_each(|_| put((rng.normal() * f64::from(std)) as f32))
            }
            Init::Uniform { lo, hi } => (0..n).for_each(|_| put(rng.uniform_range(lo, hi))),
            Init::Const(v) => (0..n).for_each(|_| put(v)),
        }
        raw
    }
}

/// Attribute constructors, named after the ONNX attribute kinds.
pub mod attr {
    use super::*;

    fn base(name: &str, ty: AttributeType) -> AttributeProto {
        AttributeProto {
            name: name.to_string(),
            r#type: ty as i32,
            ..Default::default()
        }
    }

    pub fn int(name: &str, v: i64) -> AttributeProto {
        AttributeProto {
            i: v,
            ..base(name, AttributeType::Int)
        }
    }

    pub fn float(name: &str, v: f32) -> AttributeProto {
        AttributeProto {
            f: v,
            ..base(name, AttributeType::Float)
        }
    }

    pub fn string(name: &str, v: &str) -> AttributeProto {
        AttributeProto {
            s: v.as_bytes().to_vec(),
            ..base(name, AttributeType::String)
        }
    }

    pub fn ints(name: &str, v: &[i64]) -> AttributeProto {
        AttributeProto {
            ints: v.to_vec(),
            ..base(name, AttributeType::Ints)
        }
    }

    pub fn floats(name: &str, v: &[f32]) -> AttributeProto {
        AttributeProto {
            floats: v.to_vec(),
            ..base(name, AttributeType::Floats)
        }
    }

    pub fn strings(name: &str, v: &[&str]) -> AttributeProto {
        AttributeProto {
            strings: v.iter().map(|s| s.as_bytes().to_vec()).collect(),
            ..base(name, AttributeType::Strings)
        }
    }

    pub fn tensor(name: &str, t: TensorProto) -> AttributeProto {
        AttributeProto {
            t: Some(t),
            ..base(name, AttributeType::Tensor)
        }
    }

    /// A subgraph body (If branches, Loop/Scan bodies).
    pub fn graph(name: &str, g: GraphProto) -> AttributeProto {
        AttributeProto {
            g: Some(g),
            ..base(name, AttributeType::Graph)
        }
    }
}

/// An f32 tensor stored as little-endian `raw_data`.
pub fn tensor_f32(name: &str, dims: &[i64], data: &[f32]) -> TensorProto {
    let raw: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    raw_tensor(name, DataType::Float, dims, raw)
}

/// An i64 tensor stored as little-endian `raw_data`.
pub fn tensor_i64(name: &str, dims: &[i64], data: &[i64]) -> TensorProto {
    let raw: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    raw_tensor(name, DataType::Int64, dims, raw)
}

fn raw_tensor(name: &str, ty: DataType, dims: &[i64], raw: Vec<u8>) -> TensorProto {
    TensorProto {
        name: name.to_string(),
        dims: dims.to_vec(),
        data_type: ty as i32,
        raw_data: Bytes::from(raw),
        ..Default::default()
    }
}

/// `TypeProto` of a tensor; `None` dims means unknown rank.
pub fn tensor_type(elem: DataType, dims: Option<&[Dim]>) -> TypeProto {
    let shape = dims.map(|dims| TensorShapeProto {
        dim: dims
            .iter()
            .map(|d| tensor_shape_proto::Dimension {
                value: Some(match d {
                    Dim::Value(v) => tensor_shape_proto::dimension::Value::DimValue(*v),
                    Dim::Param(p) => tensor_shape_proto::dimension::Value::DimParam(p.clone()),
                }),
                denotation: String::new(),
            })
            .collect(),
    });
    TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: elem as i32,
            shape,
        })),
        denotation: String::new(),
    }
}

fn value_info(name: &str, elem: DataType, dims: &[Dim]) -> ValueInfoProto {
    ValueInfoProto {
        name: name.to_string(),
        r#type: Some(tensor_type(elem, Some(dims))),
        ..Default::default()
    }
}

fn fixed(dims: &[i64]) -> Vec<Dim> {
    dims.iter().map(|&d| Dim::Value(d)).collect()
}

/// Accumulates one graph; `finish` wraps it into a model.
pub struct GraphBuilder {
    graph: GraphProto,
    opsets: Vec<OperatorSetIdProto>,
    seed: u64,
    light: bool,
    doc: String,
}

impl GraphBuilder {
    pub fn new(name: &str, opts: &GenOptions) -> Self {
        GraphBuilder {
            graph: GraphProto {
                name: name.to_string(),
                ..Default::default()
            },
            opsets: vec![OperatorSetIdProto {
                domain: String::new(),
                version: DEFAULT_OPSET,
            }],
            seed: opts.seed,
            light: opts.light,
            doc: String::new(),
        }
    }

    /// Imports `domain` at `version`, replacing an earlier import of it.
    pub fn opset(&mut self, domain: &str, version: i64) {
        match self.opsets.iter_mut().find(|o| o.domain == domain) {
            Some(o) => o.version = version,
            None => self.opsets.push(OperatorSetIdProto {
                domain: domain.to_string(),
                version,
            }),
        }
    }

    pub fn doc(&mut self, doc: &str) {
        self.doc = doc.to_string();
    }

    pub fn is_light(&self) -> bool {
        self.light
    }

    pub fn input(&mut self, name: &str, elem: DataType, dims: &[Dim]) -> String {
        self.graph.input.push(value_info(name, elem, dims));
        name.to_string()
    }

    pub fn input_f32(&mut self, name: &str, dims: &[i64]) -> String {
        self.input(name, DataType::Float, &fixed(dims))
    }

    pub fn output(&mut self, name: &str, elem: DataType, dims: &[Dim]) {
        self.graph.output.push(value_info(name, elem, dims));
    }

    pub fn output_f32(&mut self, name: &str, dims: &[i64]) {
        self.output(name, DataType::Float, &fixed(dims));
    }

    /// Declares the type of an intermediate value.
    pub fn value_info(&mut self, name: &str, elem: DataType, dims: &[Dim]) {
        self.graph.value_info.push(value_info(name, elem, dims));
    }

    /// A stored initializer, kept as is in light mode too (shapes, scales).
    pub fn initializer(&mut self, t: TensorProto) -> String {
        let name = t.name.clone();
        self.graph.initializer.push(t);
        name
    }

    pub fn const_f32(&mut self, name: &str, dims: &[i64], data: &[f32]) -> String {
        self.initializer(tensor_f32(name, dims, data))
    }

    pub fn const_i64(&mut self, name: &str, dims: &[i64], data: &[i64]) -> String {
        self.initializer(tensor_i64(name, dims, data))
    }

    /// A learned parameter: an initializer drawn from `init` with the
    /// tensor's own seeded stream, or in light mode a `ConstantOfShape`
    /// node fed by an int64 `NAME__SHAPE` initializer (onnx's light layout).
    pub fn weight(&mut self, name: &str, dims: &[i64], init: Init) -> String {
        if self.light {
            let shape = self.const_i64(&format!("{name}__SHAPE"), &[dims.len() as i64], dims);
            let fill = attr::tensor("value", tensor_f32("", &[1], &[init.light_value()]));
            self.node_outputs(
                "ConstantOfShape",
                &format!("{name}__fill"),
                &[&shape],
                &[name],
                vec![fill],
            );
            return name.to_string();
        }
        let n = dims.iter().map(|&d| d.max(0) as usize).product();
        let raw = init.sample_le_bytes(&mut Rng::for_tensor(self.seed, name), n);
        self.initializer(raw_tensor(name, DataType::Float, dims, raw))
    }

    /// Appends a single-output node; its output value is named like the node.
    pub fn node(
        &mut self,
        op_type: &str,
        name: &str,
        inputs: &[&str],
        attrs: Vec<AttributeProto>,
    ) -> String {
        self.node_outputs(op_type, name, inputs, &[name], attrs);
        name.to_string()
    }

    /// Appends a node with explicit output names ("" = omitted optional).
    pub fn node_outputs(
        &mut self,
        op_type: &str,
        name: &str,
        inputs: &[&str],
        outputs: &[&str],
        attrs: Vec<AttributeProto>,
    ) -> Vec<String> {
        let output: Vec<String> = outputs.iter().map(|s| s.to_string()).collect();
        self.push_node(NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: output.clone(),
            name: name.to_string(),
            op_type: op_type.to_string(),
            attribute: attrs,
            ..Default::default()
        });
        output
    }

    /// Escape hatch for nodes the helpers do not cover (other domains...).
    pub fn push_node(&mut self, node: NodeProto) {
        self.graph.node.push(node);
    }

    /// The bare graph, unchecked: subgraph bodies may use outer values.
    pub fn into_graph(self) -> GraphProto {
        self.graph
    }

    /// Checks the graph is well formed (see [`check_graph`]) and wraps it in
    /// a model.
    pub fn finish(self) -> Result<ModelProto, String> {
        check_graph(&self.graph)?;
        Ok(ModelProto {
            ir_version: IR_VERSION,
            opset_import: self.opsets,
            producer_name: "onnxc-models".to_string(),
            producer_version: env!("CARGO_PKG_VERSION").to_string(),
            doc_string: self.doc,
            graph: Some(self.graph),
            ..Default::default()
        })
    }
}

/// Catches generator bugs without python: every value is defined once,
/// every node input is defined before use, every graph output is defined.
pub fn check_graph(g: &GraphProto) -> Result<(), String> {
    let mut defined: HashSet<&str> = HashSet::new();
    for v in &g.input {
        if !defined.insert(&v.name) {
            return Err(format!(
                "graph `{}`: input `{}` declared twice",
                g.name, v.name
            ));
        }
    }
    // An initializer may also be a graph input (IR < 4 style defaults).
    let mut inits: HashSet<&str> = HashSet::new();
    for t in &g.initializer {
        if !inits.insert(&t.name) {
            return Err(format!(
                "graph `{}`: initializer `{}` given twice",
                g.name, t.name
            ));
        }
        defined.insert(&t.name);
    }
    for n in &g.node {
        for i in n.input.iter().filter(|i| !i.is_empty()) {
            if !defined.contains(i.as_str()) {
                return Err(format!(
                    "graph `{}`: node `{}` ({}) uses `{i}` before it is defined",
                    g.name, n.name, n.op_type
                ));
            }
        }
        for o in n.output.iter().filter(|o| !o.is_empty()) {
            if !defined.insert(o.as_str()) {
                return Err(format!(
                    "graph `{}`: node `{}` redefines `{o}`",
                    g.name, n.name
                ));
            }
        }
    }
    for o in &g.output {
        if !defined.contains(o.name.as_str()) {
            return Err(format!(
                "graph `{}`: output `{}` is never defined",
                g.name, o.name
            ));
        }
    }
    Ok(())
}
