//! How each op appears in an ONNX model, and the older forms it had.
//!
//! Import turns every older form into the op's newest one
//! (import/normalize.rs, import/legacy.rs), so that no later stage needs
//! the model's opset; export writes the older form back for the opset the
//! model had (export/denormalize.rs). One exhaustive match over the table:
//! an op added to onnx/ops.table must say how it is written and whether it
//! had older forms.

use onnx::OpKind;

/// How an op appears in a model.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Role {
    /// A node.
    Node,
    /// A node whose graph attributes are the op's regions.
    Regions,
    /// A `Constant` node or an initializer.
    Constant,
    /// Nothing: an omitted optional input (`onnx.NoValue`).
    Omitted,
    /// The outputs of a graph (`onnx.Yield`).
    Outputs,
    /// A node onnxc does not know, written back as it came (`onnx.Foreign`).
    Foreign,
}

/// How an attribute of an older form becomes an operand.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Kind {
    /// 1-D `i64` from an INTS attribute.
    Ints,
    /// 1-D `i64` holding one INT attribute (TopK `k`).
    IntAsList,
    /// Scalar `i64` from an INT attribute (DFT `axis`).
    Int,
    /// 1-D `f32` from a FLOATS attribute.
    Floats,
    /// Scalar of operand 0's element type from a FLOAT attribute.
    ScalarLikeInput,
}

/// An attribute of older opsets that is an operand in the newest form.
#[derive(Copy, Clone, Debug)]
pub struct Moved {
    /// Its names; export writes the first.
    pub names: &'static [&'static str],
    /// The operand it becomes.
    pub index: usize,
    pub kind: Kind,
    /// The operand an older form without the attribute gets, where its
    /// default differs from the newest form's (DFT `axis`: 1, not -2).
    pub absent: Option<i64>,
}

/// Older forms beyond moved attributes.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Legacy {
    None,
    /// Before opset 7: broadcasting only with `broadcast = 1`, the second
    /// operand aligned at `axis`.
    Broadcast,
    /// Gemm before opset 7: `broadcast` for C.
    Gemm,
    /// Cast before opset 6: `to` names the type.
    Cast,
    /// Concat before opset 4: `axis` may be absent (default 1).
    Concat,
    /// BatchNormalization: `is_test` (< 7), `spatial` (< 9), training
    /// signalled by extra outputs (< 14).
    BatchNorm,
    /// Dropout: `is_test` (< 7), a mask typed like the data (< 10).
    Dropout,
    /// Softmax, LogSoftmax, Hardmax before opset 13: the input coerced to
    /// 2-D at `axis` (default 1).
    Rows2d,
    /// LpPool, GlobalLpPool before opset 2: `p` is a float.
    FloatP,
    /// Resize before opset 11 (X, scales): not supported.
    Resize,
    /// Scan before opset 9 (batched, with sequence lengths): not supported.
    Scan,
}

impl Legacy {
    /// The first opset of the newest form.
    pub fn newest_from(self) -> i64 {
        match self {
            Legacy::None => 1,
            Legacy::FloatP => 2,
            Legacy::Concat => 4,
            Legacy::Cast => 6,
            Legacy::Broadcast | Legacy::Gemm => 7,
            Legacy::Scan => 9,
            Legacy::Dropout => 10,
            Legacy::Resize => 11,
            Legacy::Rows2d => 13,
            Legacy::BatchNorm => 14,
        }
    }
}

/// What the model forms of an op are.
#[derive(Copy, Clone, Debug)]
pub struct Form {
    pub role: Role,
    /// Attributes of older opsets that are operands now.
    pub moved: &'static [Moved],
    /// The opset from which they are operands.
    pub operand_since: i64,
    /// Operands the older form has (the leading ones; moved ones aside).
    pub old_operands: usize,
    pub legacy: Legacy,
}

const fn form(role: Role, legacy: Legacy) -> Form {
    Form {
        role,
        moved: &[],
        operand_since: 1,
        old_operands: 1,
        legacy,
    }
}

const NODE: Form = form(Role::Node, Legacy::None);

const fn moved(moved: &'static [Moved], operand_since: i64) -> Form {
    Form {
        moved,
        operand_since,
        ..NODE
    }
}

const fn attr(names: &'static [&'static str], index: usize, kind: Kind) -> Moved {
    Moved {
        names,
        index,
        kind,
        absent: None,
    }
}

const AXES: &[Moved] = &[attr(&["axes"], 1, Kind::Ints)];
const CLIP: &[Moved] = &[
    attr(&["min"], 1, Kind::ScalarLikeInput),
    attr(&["max"], 2, Kind::ScalarLikeInput),
];
const PAD: &[Moved] = &[
    attr(&["pads", "paddings"], 1, Kind::Ints),
    attr(&["value"], 2, Kind::ScalarLikeInput),
];
const SLICE: &[Moved] = &[
    attr(&["starts"], 1, Kind::Ints),
    attr(&["ends"], 2, Kind::Ints),
    attr(&["axes"], 3, Kind::Ints),
];
const SPLIT: &[Moved] = &[attr(&["split"], 1, Kind::Ints)];
const SCALES: &[Moved] = &[attr(&["scales"], 1, Kind::Floats)];
const TOPK_K: &[Moved] = &[attr(&["k"], 1, Kind::IntAsList)];
const SHAPE: &[Moved] = &[attr(&["shape"], 1, Kind::Ints)];
const RATIO: &[Moved] = &[attr(&["ratio"], 1, Kind::ScalarLikeInput)];
const DFT_AXIS: &[Moved] = &[Moved {
    names: &["axis"],
    index: 2,
    kind: Kind::Int,
    absent: Some(1),
}];

/// The forms of `kind`.
pub fn of(kind: OpKind) -> Form {
    // Variants by name keep the table compact; the match stays exhaustive.
    use OpKind::*;
    match kind {
        Abs | Acos | Acosh | AffineGrid | ArgMax | ArgMin | Asin | Asinh | Atan | Atanh
        | Attention | AveragePool | Bernoulli | Binarizer | BitCast | BitShift | BitwiseAnd
        | BitwiseNot | BitwiseOr | BitwiseXor | BlackmanWindow | CastLike | CastMap
        | CategoryMapper | CausalConvWithState | Ceil | Celu | CenterCropPad | Col2Im
        | Compress | ConstantOfShape | Conv | ConvInteger | ConvTranspose | Cos | Cosh
        | CumProd | CumSum | DeformConv | DepthToSpace | DequantizeLinear | Det
        | DictVectorizer | Einsum | Elu | Erf | Exp | Expand | EyeLike | FeatureVectorizer
        | Flatten | Floor | GRU | Gather | GatherElements | GatherND | Gelu | GlobalAveragePool
        | GlobalMaxPool | GreaterOrEqual | GridSample | GroupNormalization | HammingWindow
        | HannWindow | HardSigmoid | HardSwish | Identity | ImageDecoder | Imputer | IsInf
        | IsNaN | LRN | LSTM | LabelEncoder | LayerNormalization | LeakyRelu | LessOrEqual
        | LinearAttention | LinearClassifier | LinearRegressor | Log | LpNormalization | MatMul
        | MatMulInteger | MatMulNBits | Max | MaxPool | MaxRoiPool | MaxUnpool | Mean
        | MelWeightMatrix | Min | Mish | Mod | Multinomial | Neg | NonMaxSuppression | NonZero
        | Normalizer | Not | OneHot | OneHotEncoder | OptionalGetElement | OptionalHasElement
        | PRelu | QLinearConv | QLinearMatMul | QuantizeLinear | RMSNormalization | RNN
        | RandomNormal | RandomNormalLike | RandomUniform | RandomUniformLike | Range
        | Reciprocal | RegexFullMatch | Relu | ReverseSequence | RoiAlign | RotaryEmbedding
        | Round | STFT | SVMClassifier | SVMRegressor | Scaler | Scatter | ScatterElements
        | ScatterND | Selu | Shape | Shrink | Sigmoid | Sign | Sin | Sinh | Size | Softplus
        | Softsign | SpaceToDepth | Sqrt | StringConcat | StringNormalizer | StringSplit | Sum
        | SwiGLU | Swish | Tan | Tanh | TensorScatter | TfIdfVectorizer | ThresholdedRelu
        | Tile | Transpose | TreeEnsemble | Trilu | Unique | Where | ZipMap => NODE,
        // Names over 20 characters get arms of their own: rustfmt lays out
        // an alternation that holds one with a name per line.
        ArrayFeatureExtractor
        | DynamicQuantizeLinear
        | InstanceNormalization
        | MeanVarianceNormalization
        | NegativeLogLikelihoodLoss
        | SoftmaxCrossEntropyLoss
        | TreeEnsembleClassifier
        | TreeEnsembleRegressor => NODE,
        Constant => form(Role::Constant, Legacy::None),
        NoValue => form(Role::Omitted, Legacy::None),
        Yield => form(Role::Outputs, Legacy::None),
        Foreign => form(Role::Foreign, Legacy::None),
        If | Loop => form(Role::Regions, Legacy::None),
        Scan => form(Role::Regions, Legacy::Scan),
        Add | And | Div | Equal | Greater | Less | Mul | Or | Pow | Sub | Xor => {
            form(Role::Node, Legacy::Broadcast)
        }
        Gemm => form(Role::Node, Legacy::Gemm),
        Cast => form(Role::Node, Legacy::Cast),
        Concat => form(Role::Node, Legacy::Concat),
        BatchNormalization => form(Role::Node, Legacy::BatchNorm),
        Softmax | LogSoftmax | Hardmax => form(Role::Node, Legacy::Rows2d),
        LpPool | GlobalLpPool => form(Role::Node, Legacy::FloatP),
        Resize => form(Role::Node, Legacy::Resize),
        Squeeze | Unsqueeze | ReduceSum => moved(AXES, 13),
        ReduceL1 | ReduceL2 | ReduceLogSum | ReduceLogSumExp | ReduceMax | ReduceMean
        | ReduceMin | ReduceProd | ReduceSumSquare => moved(AXES, 18),
        Split => moved(SPLIT, 13),
        Clip => moved(CLIP, 11),
        Pad => moved(PAD, 11),
        Slice => moved(SLICE, 10),
        Upsample => moved(SCALES, 9),
        TopK => moved(TOPK_K, 10),
        Reshape => moved(SHAPE, 5),
        Dropout => Form {
            legacy: Legacy::Dropout,
            ..moved(RATIO, 12)
        },
        DFT => Form {
            old_operands: 2,
            ..moved(DFT_AXIS, 20)
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_are_the_ops_with_graph_attributes() {
        for &k in onnx::ALL_KINDS.iter() {
            let regions = !onnx::dialect::region_attr_names(k).is_empty();
            assert_eq!(of(k).role == Role::Regions, regions, "{k:?}");
        }
    }

    #[test]
    fn moved_attributes_are_not_attributes_of_the_newest_form() {
        for &k in onnx::ALL_KINDS.iter() {
            for m in of(k).moved {
                for n in m.names {
                    assert!(k.schema().attr(n).is_none(), "{k:?}.{n}");
                }
                assert!(m.index < k.schema().inputs.len(), "{k:?}.{}", m.index);
            }
        }
    }
}
