//! Folding kernels: an `onnx.*` op whose operands are all constants becomes
//! constants. Views (Transpose, reshapes, Expand) never copy; arithmetic is
//! computed in `WideNum` and stored in the result's dtype.
//!
//! [`fold_op`] dispatches by one exhaustive `match` on the op's kind: every
//! op of the table either has its fold function or is listed as not
//! foldable.

mod attention;
mod conv;
mod data;
mod dense;
pub(crate) mod elementwise;
mod gather;
mod lazy_map;
mod linalg;
mod misc;
mod ml;
mod nn;
mod norm;
mod quant;
mod reduce;
mod rnn;
mod unary;
mod views;

pub use lazy_map::{with_lazy_min, DEFAULT_LAZY_MIN};

use dense::{Dense, T};
use ir::dialects::op_error;
use ir::elements::{DType, Elements};
use ir::{Diagnostic, Module, OpId, Result, Type};
use onnx::{ops, OpKind};

/// Constant value of operand `i`, if it comes from `onnx.Constant`.
pub fn constant_operand(m: &Module, op: OpId, i: usize) -> Option<Elements> {
    let v = m.operand(op, i)?;
    let def = onnx::defined_by(m, v, OpKind::Constant)?;
    ops::Constant::of(m, def).value().cloned()
}

/// True for an operand that is an omitted optional input.
pub fn is_none(m: &Module, op: OpId, i: usize) -> bool {
    m.operand(op, i)
        .is_some_and(|v| *m.value_type(v) == Type::None)
}

/// The dtype of result `i` from its tensor type.
pub fn result_dtype(m: &Module, op: OpId, i: usize) -> Result<DType> {
    let r = m
        .result(op, i)
        .ok_or_else(|| op_error(m, op, format!("missing result #{i}")))?;
    DType::from_type(m.value_type(r).element_type())
        .ok_or_else(|| op_error(m, op, format!("no constant dtype for {}", m.value_type(r))))
}

/// What a fold gives: the results' values, or `None` to leave the op.
pub type Fold = Result<Option<Vec<Elements>>>;

/// The op being folded with its constant operands.
#[derive(Clone, Copy)]
pub(crate) struct Op<'a> {
    pub m: &'a Module,
    pub op: OpId,
    /// Operand values; `None` for an omitted optional operand.
    pub inputs: &'a [Option<Elements>],
}

impl<'a> Op<'a> {
    pub fn err(&self, msg: impl Into<String>) -> Diagnostic {
        op_error(self.m, self.op, msg)
    }
    /// The dtype of result `i`.
    pub fn dtype(&self, i: usize) -> Result<DType> {
        result_dtype(self.m, self.op, i)
    }
    pub fn nres(&self) -> usize {
        self.m.results(self.op).len()
    }
    /// Operand `i` when present.
    pub fn input(&self, i: usize) -> Option<&'a Elements> {
        self.inputs.get(i).and_then(Option::as_ref)
    }
    /// The operands as dense tensors.
    pub fn dense(&self) -> Dense {
        Dense::of(self.inputs)
    }
    /// Dense results packed in their dtypes.
    pub fn packed(&self, ts: Vec<T>) -> Fold {
        dense::packed(self.m, self.op, ts)
    }
}

/// Folds `op` if every non-optional operand is constant and the op is known.
/// `Ok(None)`: nothing to do.
pub fn fold_op(m: &Module, op: OpId) -> Fold {
    let Some(kind) = OpKind::of(m, op) else {
        return Ok(None);
    };
    let n = m.operands(op).len();
    let mut inputs = Vec::with_capacity(n);
    for i in 0..n {
        if is_none(m, op, i) {
            inputs.push(None);
            continue;
        }
        match constant_operand(m, op, i) {
            Some(e) => inputs.push(Some(e)),
            None => return Ok(None),
        }
    }
    fold_kind(
        kind,
        Op {
            m,
            op,
            inputs: &inputs,
        },
    )
}

/// The fold of each kind of op: one arm per op. A table, so it is laid
/// out as one (several short arms a line).
#[rustfmt::skip]
fn fold_kind(kind: OpKind, o: Op) -> Fold {
    use elementwise::{Arith as A, Binary as B, Cmp as C, Variadic as V};
    use misc::Window as W;
    use reduce::Reduction as R;
    use unary::Unary as U;
    use OpKind as K;
    let bin = |b: B| elementwise::binary(o, b);
    let cmp = |c: C| elementwise::binary(o, B::Cmp(c));
    let un = |u: U| elementwise::unary(o, u);
    let red = |r: R| reduce::reduce(o, r);
    let var = |v: V| elementwise::variadic(o, v);
    match kind {
        // Views of the operand, shapes and data movement.
        K::Identity => views::identity(o),          K::Transpose => views::transpose(o),
        K::Reshape => views::reshape(o),            K::Flatten => views::flatten(o),
        K::Squeeze => views::squeeze(o),            K::Unsqueeze => views::unsqueeze(o),
        K::Expand => views::expand(o),
        K::Shape => data::shape(o),                 K::Size => data::size(o),
        K::Concat => data::concat(o),               K::Split => data::split(o),
        K::Slice => data::slice(o),                 K::Tile => data::tile(o),
        K::Pad => data::pad(o),                     K::Range => data::range(o),
        K::NonZero => data::non_zero(o),            K::EyeLike => data::eye_like(o),
        K::Trilu => data::trilu(o),                 K::OneHot => data::one_hot(o),
        K::Compress => data::compress(o),           K::ReverseSequence => data::reverse_sequence(o),
        K::DepthToSpace => data::depth_to_space(o), K::SpaceToDepth => data::space_to_depth(o),
        K::ConstantOfShape => data::constant_of_shape(o),
        K::Gather => gather::gather(o),             K::GatherElements => gather::gather_elements(o),
        K::GatherND => gather::gather_nd(o),        K::ScatterND => gather::scatter_nd(o),
        K::Scatter => gather::scatter(o),
        K::ScatterElements => gather::scatter_elements(o),
        // Reductions and axis-wise ops.
        K::ReduceSum => red(R::Sum),                K::ReduceProd => red(R::Prod),
        K::ReduceMean => red(R::Mean),              K::ReduceMax => red(R::Max),
        K::ReduceMin => red(R::Min),                K::ReduceSumSquare => red(R::SumSquare),
        K::ReduceL1 => red(R::L1),                  K::ReduceL2 => red(R::L2),
        K::ReduceLogSum => red(R::LogSum),          K::ReduceLogSumExp => red(R::LogSumExp),
        K::ArgMax => reduce::arg_max(o),            K::ArgMin => reduce::arg_min(o),
        K::Softmax => reduce::softmax(o),           K::LogSoftmax => reduce::log_softmax(o),
        K::Hardmax => reduce::hardmax(o),           K::TopK => reduce::top_k(o),
        K::CumSum => reduce::cum_sum(o),            K::CumProd => reduce::cum_prod(o),
        K::GlobalMaxPool => reduce::global_max_pool(o),
        K::GlobalAveragePool => reduce::global_average_pool(o),
        // Normalizations.
        K::LayerNormalization => norm::layer(o),    K::RMSNormalization => norm::rms(o),
        K::BatchNormalization => norm::batch(o),    K::InstanceNormalization => norm::instance(o),
        K::LpNormalization => norm::lp(o),          K::MeanVarianceNormalization => norm::mvn(o),
        K::GroupNormalization => norm::group(o),    K::LRN => norm::lrn(o),
        // Contractions and windows.
        K::MatMul => linalg::matmul(o),             K::MatMulInteger => linalg::matmul_integer(o),
        K::Gemm => linalg::gemm(o),                 K::Einsum => linalg::einsum(o),
        K::Det => linalg::det(o),                   K::Conv => conv::conv(o),
        K::ConvInteger => conv::conv_integer(o),    K::ConvTranspose => conv::conv_transpose(o),
        K::MaxPool => conv::max_pool(o),            K::AveragePool => conv::average_pool(o),
        K::LpPool => conv::lp_pool(o),
        // Neural-network ops.
        K::Resize => nn::resize(o),                 K::GridSample => nn::grid_sample(o),
        K::NegativeLogLikelihoodLoss => nn::nll_loss(o),
        K::SoftmaxCrossEntropyLoss => nn::softmax_cross_entropy_loss(o),
        K::Attention => attention::attention(o),    K::RotaryEmbedding => attention::rotary(o),
        K::RNN => rnn::rnn(o),                      K::GRU => rnn::gru(o),
        K::LSTM => rnn::lstm(o),
        K::QuantizeLinear => quant::quantize(o),    K::DequantizeLinear => quant::dequantize(o),
        K::QLinearMatMul => quant::qlinear_matmul(o),
        K::DynamicQuantizeLinear => quant::dynamic_quantize(o),
        // Less common deterministic ops.
        K::Dropout => misc::dropout(o),             K::BitCast => misc::bit_cast(o),
        K::HannWindow => misc::window(o, W::Hann),  K::HammingWindow => misc::window(o, W::Hamming),
        K::BlackmanWindow => misc::window(o, W::Blackman),
        K::CenterCropPad => misc::center_crop_pad(o),
        K::SwiGLU => misc::swiglu(o),               K::TensorScatter => misc::tensor_scatter(o),
        K::Unique => misc::unique(o),               K::CausalConvWithState => misc::causal_conv(o),
        // Element-wise with broadcasting.
        K::Add => bin(B::Arith(A::Add)),            K::Sub => bin(B::Arith(A::Sub)),
        K::Mul => bin(B::Arith(A::Mul)),            K::Div => bin(B::Arith(A::Div)),
        K::Mod => bin(B::Mod),                      K::Pow => bin(B::Pow),
        K::BitShift => bin(B::BitShift),            K::PRelu => bin(B::PRelu),
        K::And | K::BitwiseAnd => bin(B::And),      K::Or | K::BitwiseOr => bin(B::Or),
        K::Xor | K::BitwiseXor => bin(B::Xor),      K::Equal => bin(B::Cmp(C::Equal)),
        K::Less => cmp(C::Less),                    K::LessOrEqual => cmp(C::LessOrEqual),
        K::Greater => cmp(C::Greater),              K::GreaterOrEqual => cmp(C::GreaterOrEqual),
        K::Sum => var(V::Sum),                      K::Mean => var(V::Mean),
        K::Max => var(V::Max),                      K::Min => var(V::Min),
        K::Cast => elementwise::cast(o),            K::CastLike => elementwise::cast_like(o),
        K::Where => elementwise::select(o),         K::Clip => elementwise::clip(o),
        K::Relu => un(U::Relu),     K::Neg => un(U::Neg),       K::Abs => un(U::Abs),
        K::Sign => un(U::Sign),     K::Sqrt => un(U::Sqrt),     K::Exp => un(U::Exp),
        K::Log => un(U::Log),       K::Tanh => un(U::Tanh),     K::Sigmoid => un(U::Sigmoid),
        K::Floor => un(U::Floor),   K::Ceil => un(U::Ceil),     K::Round => un(U::Round),
        K::Sin => un(U::Sin),       K::Cos => un(U::Cos),       K::Tan => un(U::Tan),
        K::Asin => un(U::Asin),     K::Acos => un(U::Acos),     K::Atan => un(U::Atan),
        K::Sinh => un(U::Sinh),     K::Cosh => un(U::Cosh),     K::Asinh => un(U::Asinh),
        K::Acosh => un(U::Acosh),   K::Atanh => un(U::Atanh),   K::Erf => un(U::Erf),
        K::Elu => un(U::Elu),       K::Celu => un(U::Celu),     K::Selu => un(U::Selu),
        K::Mish => un(U::Mish),     K::Swish => un(U::Swish),   K::Gelu => un(U::Gelu),
        K::Not => un(U::Not),       K::IsNaN => un(U::IsNaN),   K::IsInf => un(U::IsInf),
        K::Shrink => un(U::Shrink),                 K::Reciprocal => un(U::Reciprocal),
        K::Softsign => un(U::Softsign),             K::Softplus => un(U::Softplus),
        K::LeakyRelu => un(U::LeakyRelu),           K::ThresholdedRelu => un(U::ThresholdedRelu),
        K::HardSigmoid => un(U::HardSigmoid),       K::HardSwish => un(U::HardSwish),
        K::BitwiseNot => un(U::BitwiseNot),
        // Not foldable: constants and internal ops; random ops and control flow
        // have effects (a constant If is a canonicalization).
        K::Constant | K::NoValue | K::Yield | K::Foreign => Ok(None),
        K::Bernoulli | K::Multinomial | K::RandomNormal | K::RandomNormalLike
        | K::RandomUniform | K::RandomUniformLike | K::If | K::Loop | K::Scan => Ok(None),
        // ai.onnx.ml models over rows of features.
        K::Scaler => ml::scaler(o),                 K::Normalizer => ml::normalizer(o),
        K::Binarizer => ml::binarizer(o),           K::Imputer => ml::imputer(o),
        K::ArrayFeatureExtractor => ml::array_feature_extractor(o),
        K::LinearRegressor => ml::linear_regressor(o),
        K::LinearClassifier => ml::linear_classifier(o),
        K::TreeEnsembleRegressor => ml::tree_regressor(o),
        K::TreeEnsembleClassifier => ml::tree_classifier(o),
        K::TreeEnsemble => ml::tree_ensemble(o),   K::LabelEncoder => ml::label_encoder(o),
        // Strings, maps, optionals and the rest of the ML domain hold no
        // numeric constants.
        K::StringConcat | K::StringNormalizer | K::StringSplit | K::RegexFullMatch
        | K::ImageDecoder | K::OptionalGetElement | K::OptionalHasElement
        | K::CastMap | K::CategoryMapper | K::DictVectorizer | K::FeatureVectorizer
        | K::OneHotEncoder | K::SVMClassifier | K::SVMRegressor
        | K::ZipMap => Ok(None),
        // No fold kernel: left to the generated code.
        K::AffineGrid | K::Col2Im | K::DFT | K::DeformConv | K::GlobalLpPool
        | K::LinearAttention | K::MatMulNBits | K::MaxRoiPool | K::MaxUnpool | K::MelWeightMatrix
        | K::NonMaxSuppression | K::QLinearConv | K::RoiAlign | K::STFT
        | K::TfIdfVectorizer | K::Upsample => Ok(None),
    }
}
