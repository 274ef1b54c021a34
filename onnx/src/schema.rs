//! What the table says of one op: its inputs, outputs and attributes.

use crate::OpKind;

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Domain {
    /// `ai.onnx` (written `""` in models).
    Onnx,
    /// `ai.onnx.ml`.
    OnnxMl,
    /// `com.microsoft`: onnxruntime's operators that onnxc computes as
    /// they are (the others are imported as the ops they mean).
    Microsoft,
    /// onnxc's own ops (`NoValue`, `Yield`).
    Internal,
}

impl Domain {
    /// The IR dialect prefix.
    pub fn dialect(self) -> &'static str {
        match self {
            Domain::Onnx | Domain::Internal => "onnx",
            Domain::OnnxMl => "onnx_ml",
            Domain::Microsoft => "ms",
        }
    }
    /// The domain name models use.
    pub fn model_name(self) -> &'static str {
        match self {
            Domain::Onnx | Domain::Internal => "",
            Domain::OnnxMl => "ai.onnx.ml",
            Domain::Microsoft => "com.microsoft",
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Arity {
    Single,
    Optional,
    Variadic { min: usize },
}

/// One formal input or output.
#[derive(Copy, Clone, Debug)]
pub struct Param {
    pub name: &'static str,
    pub arity: Arity,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum AttrType {
    Int,
    Float,
    String,
    Ints,
    Floats,
    Strings,
    Tensor,
    Tensors,
    Graph,
    Graphs,
    Type,
    Types,
    SparseTensor,
}

impl AttrType {
    pub fn name(self) -> &'static str {
        match self {
            AttrType::Int => "int",
            AttrType::Float => "float",
            AttrType::String => "string",
            AttrType::Ints => "ints",
            AttrType::Floats => "floats",
            AttrType::Strings => "strings",
            AttrType::Tensor => "tensor",
            AttrType::Tensors => "tensors",
            AttrType::Graph => "graph",
            AttrType::Graphs => "graphs",
            AttrType::Type => "type",
            AttrType::Types => "types",
            AttrType::SparseTensor => "sparse_tensor",
        }
    }
}

#[derive(Copy, Clone, Debug)]
pub enum AttrDefault {
    /// Must be present.
    Required,
    /// May be absent; the op's semantics say what that means.
    Absent,
    Int(i64),
    Float(f32),
    String(&'static str),
    Ints(&'static [i64]),
    Floats(&'static [f32]),
    Strings(&'static [&'static str]),
}

#[derive(Copy, Clone, Debug)]
pub struct AttrSchema {
    pub name: &'static str,
    pub ty: AttrType,
    pub default: AttrDefault,
}

#[derive(Debug)]
pub struct OpSchema {
    pub kind: OpKind,
    pub name: &'static str,
    /// The IR op name: `onnx.Conv`, `onnx_ml.Scaler`.
    pub ir_name: &'static str,
    pub domain: Domain,
    /// The opsets in which the schema changed, increasing.
    pub versions: &'static [i64],
    /// The opset from which the op no longer exists.
    pub removed_in: Option<i64>,
    pub pure: bool,
    pub terminator: bool,
    pub inputs: &'static [Param],
    pub outputs: &'static [Param],
    pub attrs: &'static [AttrSchema],
}

impl OpSchema {
    pub fn attr(&self, name: &str) -> Option<&'static AttrSchema> {
        self.attrs.iter().find(|a| a.name == name)
    }

    /// The schema version in effect at `opset`: the newest version not
    /// after it. `Err` says why the op does not exist at that opset.
    pub fn version_at(&self, opset: i64) -> Result<i64, String> {
        if let Some(r) = self.removed_in.filter(|&r| opset >= r) {
            return Err(format!(
                "operator '{}' was removed in opset {r}; the model imports opset {opset}",
                self.name
            ));
        }
        self.versions
            .iter()
            .rev()
            .find(|&&v| v <= opset)
            .copied()
            .ok_or_else(|| {
                format!(
                    "operator '{}' exists from opset {}; the model imports opset {opset}",
                    self.name,
                    self.versions.first().copied().unwrap_or(1)
                )
            })
    }

    /// Smallest and largest count of `params` (`usize::MAX`: variadic).
    pub fn arity_range(params: &[Param]) -> (usize, usize) {
        let mut min = 0;
        let mut max = 0usize;
        for (i, p) in params.iter().enumerate() {
            match p.arity {
                Arity::Single => {
                    min = i + 1;
                    max = max.saturating_add(1);
                }
                Arity::Optional => max = max.saturating_add(1),
                Arity::Variadic { min: m } => {
                    min = min.max(i + m);
                    max = usize::MAX;
                }
            }
        }
        (min, max)
    }
}
