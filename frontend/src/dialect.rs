//! The `onnx` and `onnx_ml` dialects: one generic-syntax op per ONNX
//! operator (every operator of the default and `ai.onnx.ml` domains).

use ir::dialects::op_error;
use ir::registry::{OpDef, Syntax, Traits};
use ir::{Attribute, Module, OpId};
use std::sync::{Once, OnceLock};

/// Deterministic operators of the default domain, plus `NoValue` (the
/// placeholder for omitted optional inputs). Dropout counts as pure: this is
/// an inference compiler, where it is the identity.
#[rustfmt::skip]
const PURE_OPS: &[&str] = &[
    "Abs", "Acos", "Acosh", "Add", "AffineGrid", "And", "ArgMax", "ArgMin", "Asin", "Asinh",
    "Atan", "Atanh", "Attention", "AveragePool", "BatchNormalization", "BitCast", "BitShift",
    "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "BlackmanWindow", "Cast", "CastLike",
    "CausalConvWithState", "Ceil", "Celu", "CenterCropPad", "Clip", "Col2Im", "Compress",
    "Concat", "ConcatFromSequence", "Constant", "ConstantOfShape", "Conv", "ConvInteger",
    "ConvTranspose", "Cos", "Cosh", "CumProd", "CumSum", "DFT", "DeformConv", "DepthToSpace",
    "DequantizeLinear", "Det", "Div", "Dropout", "DynamicQuantizeLinear", "Einsum", "Elu",
    "Equal", "Erf", "Exp", "Expand", "EyeLike", "Flatten", "Floor", "GRU", "Gather",
    "GatherElements", "GatherND", "Gelu", "Gemm", "GlobalAveragePool", "GlobalLpPool",
    "GlobalMaxPool", "Greater", "GreaterOrEqual", "GridSample", "GroupNormalization",
    "HammingWindow", "HannWindow", "HardSigmoid", "HardSwish", "Hardmax", "Identity",
    "ImageDecoder", "InstanceNormalization", "IsInf", "IsNaN", "LRN", "LSTM",
    "LayerNormalization", "LeakyRelu", "Less", "LessOrEqual", "LinearAttention", "Log",
    "LogSoftmax", "LpNormalization", "LpPool", "MatMul", "MatMulInteger", "Max", "MaxPool",
    "MaxRoiPool", "MaxUnpool", "Mean", "MeanVarianceNormalization", "MelWeightMatrix", "Min",
    "Mish", "Mod", "Mul", "Neg", "NegativeLogLikelihoodLoss", "NoValue", "NonMaxSuppression",
    "NonZero", "Not", "OneHot", "Optional", "OptionalGetElement", "OptionalHasElement", "Or",
    "PRelu", "Pad", "Pow", "QLinearConv", "QLinearMatMul", "QuantizeLinear", "RMSNormalization",
    "RNN", "Range", "Reciprocal", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
    "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare",
    "RegexFullMatch", "Relu", "Reshape", "Resize", "ReverseSequence", "RoiAlign",
    "RotaryEmbedding", "Round", "STFT", "Scatter", "ScatterElements", "ScatterND", "Selu",
    "SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase", "SequenceInsert",
    "SequenceLength", "Shape", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Size", "Slice",
    "Softmax", "SoftmaxCrossEntropyLoss", "Softplus", "Softsign", "SpaceToDepth", "Split",
    "SplitToSequence", "Sqrt", "Squeeze", "StringConcat", "StringNormalizer", "StringSplit",
    "Sub", "Sum", "SwiGLU", "Swish", "Tan", "Tanh", "TensorScatter", "TfIdfVectorizer",
    "ThresholdedRelu", "Tile", "TopK", "Transpose", "Trilu", "Unique", "Unsqueeze", "Upsample",
    "Where", "Xor",
];

/// Random operators and control flow: never moved, merged or dropped as pure.
#[rustfmt::skip]
const EFFECT_OPS: &[&str] = &[
    "Bernoulli", "If", "Loop", "Multinomial", "RandomNormal", "RandomNormalLike",
    "RandomUniform", "RandomUniformLike", "Scan", "SequenceMap",
];

/// Operators of `ai.onnx.ml`, all deterministic.
#[rustfmt::skip]
const ML_OPS: &[&str] = &[
    "ArrayFeatureExtractor", "Binarizer", "CastMap", "CategoryMapper", "DictVectorizer",
    "FeatureVectorizer", "Imputer", "LabelEncoder", "LinearClassifier", "LinearRegressor",
    "Normalizer", "OneHotEncoder", "SVMClassifier", "SVMRegressor", "Scaler", "TreeEnsemble",
    "TreeEnsembleClassifier", "TreeEnsembleRegressor", "ZipMap",
];

/// Terminator of `If`/`Loop`/`Scan` regions: its operands are the
/// subgraph's outputs, in order.
pub const YIELD: &str = "onnx.Yield";

/// Op attribute: the ONNX names of the op's results (an array of strings,
/// `""` for an omitted optional output). Absent when the only result is
/// named like the op's location.
pub const NAMES_ATTR: &str = "onnx.names";
/// Op attribute of `If`/`Loop`/`Scan`: per region, a dictionary with the
/// subgraph's `name` and the ONNX names of its `inputs` (the block
/// arguments) and `outputs` (the yielded values).
pub const GRAPHS_ATTR: &str = "onnx.graphs";
/// Main-function attributes: per graph input (output), the `dim_param`
/// names of its dims (`""` where a dim has none; an empty list for a value
/// without any). Absent when no input (output) has a symbolic dim.
pub const DIM_PARAMS_IN: &str = "onnx.input_dim_params";
pub const DIM_PARAMS_OUT: &str = "onnx.output_dim_params";
/// Op, function or module attribute: the ONNX `doc_string`.
pub const DOC_ATTR: &str = "onnx.doc_string";

/// The attribute names of an op's subgraphs, one per region in order.
pub fn region_attr_names(op_type: &str) -> &'static [&'static str] {
    match op_type {
        "If" => &["then_branch", "else_branch"],
        "Loop" | "Scan" => &["body"],
        _ => &[],
    }
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn table() -> &'static [OpDef] {
    static TABLE: OnceLock<Vec<OpDef>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut defs = Vec::with_capacity(PURE_OPS.len() + EFFECT_OPS.len() + ML_OPS.len());
        for &n in PURE_OPS {
            let def = OpDef::new(leak(format!("onnx.{n}")), Traits::PURE, Syntax::Generic);
            defs.push(if n == "Constant" {
                def.verified(verify_constant)
            } else {
                def
            });
        }
        for &n in EFFECT_OPS {
            defs.push(OpDef::new(
                leak(format!("onnx.{n}")),
                Traits::NONE,
                Syntax::Generic,
            ));
        }
        defs.push(OpDef::new(
            YIELD,
            Traits::TERMINATOR.union(Traits::RETURN_LIKE),
            Syntax::Generic,
        ));
        for &n in ML_OPS {
            defs.push(OpDef::new(
                leak(format!("onnx_ml.{n}")),
                Traits::PURE,
                Syntax::Generic,
            ));
        }
        defs
    })
}

/// Registers the ONNX dialects with the IR registry (idempotent).
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| ir::registry::register(table()));
}

/// Whether `onnx.<op_type>` is a known ONNX operator.
pub fn is_known_op(op_type: &str) -> bool {
    op_type != "NoValue" && (PURE_OPS.contains(&op_type) || EFFECT_OPS.contains(&op_type))
}

/// Whether `onnx_ml.<op_type>` is a known `ai.onnx.ml` operator.
pub fn is_known_ml_op(op_type: &str) -> bool {
    ML_OPS.contains(&op_type)
}

/// `onnx.Constant`: a `value` elements attribute whose type is the result's.
fn verify_constant(m: &Module, op: OpId) -> ir::Result<()> {
    let Some(Attribute::Elements(e)) = m.attr(op, "value") else {
        return Err(op_error(m, op, "requires a 'value' elements attribute"));
    };
    let [r] = m.results(op) else {
        return Err(op_error(m, op, "must have exactly one result"));
    };
    let ty = m.value_type(*r);
    if *ty != e.tensor_type() {
        return Err(op_error(
            m,
            op,
            format!(
                "result type {ty} differs from the value's type {}",
                e.tensor_type()
            ),
        ));
    }
    Ok(())
}
