//! Per-op lowerings of `onnx.*` to memref + scf, sharing a few mechanisms:
//! broadcasting element-wise nests, reduction nests, views for reshapes.

mod control;
pub(crate) mod convolution;
pub(crate) mod data;
pub(crate) mod elementwise;
pub(crate) mod linalg;
pub(crate) mod ml;
pub(crate) mod nn;
pub(crate) mod quantized;
pub(crate) mod signal;
pub(crate) mod support;

use convolution::{causal_conv, conv, conv_transpose, deform_conv, lp_pool, pool};
use data::{build, extra, gather, index, misc, nms, pad, shape, slice, unique};
use linalg::{einsum, matmul};
use ml::{tfidf, trees};
use nn::{attention, linear_attention, loss, norm, rotary};
use quantized::{integer, linear as quant, nbits};
use signal::{dft, grid_sample, resize};

use crate::convert::Lowering;
use convolution::pool::{global_pool, PoolKind as Pool};
use convolution::sliding::pool;
use data::gather::{cumulative, Cumulative as Cum};
use elementwise as ar;
use elementwise::activations as act;
use elementwise::logic as lg;
use elementwise::{cast_like, elementwise as ew};
use ir::dialects::op_error;
use ir::{Builder, Module, OpId, Result, ValueId};
use nn::reduce::{arg, reduce, Arg, Reduce as R};
use nn::rnn::{rnn, Cell};
use nn::softmax::{softmax, Norm};
use onnx::OpKind as K;
use signal::windows::{window, Window as Win};

/// How bufferization lowers an op: the one per-op dispatch, exhaustive,
/// so a new op in `onnx/ops.table` does not build until it is placed.
#[derive(Clone, Copy)]
pub enum Lower {
    /// One broadcasting nest around the scalar body (fusable).
    Elementwise(elementwise::Body),
    /// A kernel of its own.
    Kernel(Kernel),
    /// Not compiled, and why.
    Refused(&'static str),
}

/// A kernel: lowers `op` at the builder, returns its results' memrefs.
pub type Kernel = fn(&mut Lowering, &mut Builder<'_>, OpId) -> Result<Vec<ValueId>>;

/// The lowering of each op kind.
#[rustfmt::skip]
pub fn lowering(kind: K) -> Lower {
    use Lower::{Elementwise as Ew, Kernel as Kn, Refused};
    match kind {
        // Element-wise: the scalar body of each op.
        K::Add | K::Sum => Ew(ar::add),                            K::Sub => Ew(ar::sub),
        K::Mul => Ew(ar::mul),       K::Div => Ew(ar::div),       K::Max => Ew(ar::max),
        K::Min => Ew(ar::min),       K::Neg => Ew(ar::neg),       K::Abs => Ew(ar::abs),
        K::Reciprocal => Ew(ar::reciprocal),                       K::Cast => Ew(ar::cast),
        K::Exp => Ew(ar::exp),       K::Log => Ew(ar::log),
        K::Sqrt => Ew(ar::sqrt),     K::Erf => Ew(ar::erf),       K::Floor => Ew(ar::floor),
        K::Ceil => Ew(ar::ceil),     K::Round => Ew(ar::round),   K::Sin => Ew(ar::sin),
        K::Cos => Ew(ar::cos),       K::Tan => Ew(ar::tan),       K::Asin => Ew(ar::asin),
        K::Acos => Ew(ar::acos),     K::Atan => Ew(ar::atan),     K::Sinh => Ew(ar::sinh),
        K::Cosh => Ew(ar::cosh),     K::Tanh => Ew(ar::tanh),     K::Asinh => Ew(ar::asinh),
        K::Acosh => Ew(ar::acosh),   K::Atanh => Ew(ar::atanh),   K::Relu => Ew(act::relu),
        K::Sigmoid => Ew(act::sigmoid),
        K::LeakyRelu => Ew(act::leaky_relu),                       K::Elu => Ew(act::elu),
        K::Selu => Ew(act::selu),    K::Celu => Ew(act::celu),
        K::HardSigmoid => Ew(act::hard_sigmoid),
        K::HardSwish => Ew(act::hard_swish),
        K::Softplus => Ew(act::softplus),
        K::Softsign => Ew(act::softsign),                          K::Mish => Ew(act::mish),
        K::Swish => Ew(act::swish),  K::SwiGLU => Ew(act::swiglu),
        K::Gelu => Ew(act::gelu),    K::ThresholdedRelu => Ew(act::thresholded_relu),
        K::Shrink => Ew(act::shrink),                              K::PRelu => Ew(act::prelu),
        K::Sign => Ew(act::sign),    K::IsNaN => Ew(act::is_nan), K::IsInf => Ew(act::is_inf),
        K::Binarizer => Ew(act::binarizer),                        K::Equal => Ew(lg::equal),
        K::Greater => Ew(lg::greater),
        K::GreaterOrEqual => Ew(lg::greater_or_equal),             K::Less => Ew(lg::less),
        K::LessOrEqual => Ew(lg::less_or_equal),
        K::And | K::BitwiseAnd => Ew(lg::and),
        K::Or | K::BitwiseOr => Ew(lg::or),
        K::Xor | K::BitwiseXor => Ew(lg::xor),
        K::Not | K::BitwiseNot => Ew(lg::not),
        K::BitShift => Ew(lg::bit_shift),                          K::Where => Ew(lg::where_),
        K::Clip => Ew(lg::clip),     K::Mod => Ew(lg::modulo),    K::Pow => Ew(lg::pow),
        K::Mean => Ew(lg::mean),
        K::CastLike => Kn(cast_like),
        // Constants, views and copies.
        K::Constant => Kn(shape::constant),
        // An omitted optional input stays `none`; kernels skip it.
        K::NoValue => Kn(|_, b, op| Ok(b.m.results(op).to_vec())),
        K::Identity | K::Dropout => Kn(shape::identity),
        K::Flatten => Kn(shape::flatten),             K::Reshape => Kn(shape::reshape),
        K::Squeeze => Kn(shape::squeeze),             K::Unsqueeze => Kn(shape::unsqueeze),
        K::Transpose => Kn(shape::transpose),         K::Concat => Kn(build::concat),
        K::Split => Kn(build::split),                 K::Shape => Kn(build::shape),
        K::Size => Kn(build::size),                   K::Range => Kn(build::range),
        K::Tile => Kn(build::tile),                   K::Expand => Kn(build::expand),
        K::ConstantOfShape => Kn(build::constant_of_shape),
        K::EyeLike => Kn(build::eye_like),            K::Slice => Kn(slice::slice),
        K::Pad => Kn(pad::pad),
        K::CenterCropPad => Kn(extra::center_crop_pad),
        K::BitCast => Kn(extra::bitcast),
        // Reductions and normalizations.
        K::ReduceSum => Kn(|cx, b, op| reduce(cx, b, op, R::Sum)),
        K::ReduceMean => Kn(|cx, b, op| reduce(cx, b, op, R::Mean)),
        K::ReduceMax => Kn(|cx, b, op| reduce(cx, b, op, R::Max)),
        K::ReduceMin => Kn(|cx, b, op| reduce(cx, b, op, R::Min)),
        K::ReduceProd => Kn(|cx, b, op| reduce(cx, b, op, R::Prod)),
        K::ReduceL1 => Kn(|cx, b, op| reduce(cx, b, op, R::L1)),
        K::ReduceL2 => Kn(|cx, b, op| reduce(cx, b, op, R::L2)),
        K::ReduceLogSum => Kn(|cx, b, op| reduce(cx, b, op, R::LogSum)),
        K::ReduceLogSumExp => Kn(|cx, b, op| reduce(cx, b, op, R::LogSumExp)),
        K::ReduceSumSquare => Kn(|cx, b, op| reduce(cx, b, op, R::SumSquare)),
        K::ArgMax => Kn(|cx, b, op| arg(cx, b, op, Arg::Max)),
        K::ArgMin => Kn(|cx, b, op| arg(cx, b, op, Arg::Min)),
        K::Softmax => Kn(|cx, b, op| softmax(cx, b, op, Norm::Softmax)),
        K::LogSoftmax => Kn(|cx, b, op| softmax(cx, b, op, Norm::LogSoftmax)),
        K::Hardmax => Kn(|cx, b, op| softmax(cx, b, op, Norm::Hardmax)),
        K::BatchNormalization => Kn(norm::batch_norm),
        K::InstanceNormalization => Kn(norm::instance_norm),
        K::LayerNormalization => Kn(norm::layer_norm),
        K::RMSNormalization => Kn(norm::rms_norm),
        K::GroupNormalization => Kn(norm::group_norm),
        K::MeanVarianceNormalization => Kn(norm::mvn),
        K::LpNormalization => Kn(norm::lp_norm),      K::LRN => Kn(norm::lrn),
        K::CumSum => Kn(|cx, b, op| cumulative(cx, b, op, Cum::Sum)),
        K::CumProd => Kn(|cx, b, op| cumulative(cx, b, op, Cum::Prod)),
        // Indexing, scatter and data-dependent shapes.
        K::Gather => Kn(gather::gather),
        K::GatherElements => Kn(gather::gather_elements),
        K::GatherND => Kn(index::gather_nd),          K::Trilu => Kn(gather::trilu),
        K::ArrayFeatureExtractor => Kn(gather::array_feature_extractor),
        K::Scatter => Kn(index::scatter),
        K::ScatterElements => Kn(index::scatter_elements),
        K::ScatterND => Kn(index::scatter_nd),
        K::TensorScatter => Kn(index::tensor_scatter),
        K::TopK => Kn(index::topk),                   K::OneHot => Kn(index::one_hot),
        K::NonZero => Kn(index::non_zero),            K::DepthToSpace => Kn(index::depth_to_space),
        K::SpaceToDepth => Kn(index::space_to_depth), K::Compress => Kn(misc::compress),
        K::ReverseSequence => Kn(misc::reverse_sequence),
        K::Unique => Kn(unique::unique),
        K::NonMaxSuppression => Kn(nms::non_max_suppression),
        K::TfIdfVectorizer => Kn(tfidf::tfidf),
        // ai.onnx.ml models over rows of features.
        K::Scaler => Kn(ml::scaler),                  K::Normalizer => Kn(ml::normalizer),
        K::Imputer => Kn(ml::imputer),                K::LabelEncoder => Kn(ml::label_encoder),
        K::LinearRegressor => Kn(ml::linear_regressor),
        K::LinearClassifier => Kn(ml::linear_classifier),
        K::TreeEnsembleRegressor => Kn(trees::regressor),
        K::TreeEnsembleClassifier => Kn(trees::classifier),
        K::TreeEnsemble => Kn(trees::tree_ensemble),
        // Quantization, losses, windows and the rest.
        K::QuantizeLinear => Kn(quant::quantize),     K::DequantizeLinear => Kn(quant::dequantize),
        K::DynamicQuantizeLinear => Kn(quant::dynamic_quantize),
        K::QLinearMatMul => Kn(quantized::qlinear_matmul::qlinear_matmul),
        K::NegativeLogLikelihoodLoss => Kn(loss::nll_loss),
        K::SoftmaxCrossEntropyLoss => Kn(loss::softmax_cross_entropy),
        K::HannWindow => Kn(|cx, b, op| window(cx, b, op, Win::Hann)),
        K::HammingWindow => Kn(|cx, b, op| window(cx, b, op, Win::Hamming)),
        K::BlackmanWindow => Kn(|cx, b, op| window(cx, b, op, Win::Blackman)),
        K::Einsum => Kn(einsum::einsum),                K::Det => Kn(misc::det),
        // Control flow.
        K::If => Kn(control::if_op),                  K::Loop => Kn(control::loop_op),
        K::Scan => Kn(control::scan_op),
        // Kernels of bufferize B (linear algebra, convolution, pooling,
        // sequence models, signal and sampling).
        K::MatMul => Kn(matmul::matmul),              K::Gemm => Kn(matmul::gemm),
        K::MatMulInteger => Kn(integer::matmul_integer),
        K::ConvInteger => Kn(integer::conv_integer),
        K::QLinearConv => Kn(integer::qlinear_conv),  K::Conv => Kn(conv::conv),
        K::ConvTranspose => Kn(conv_transpose::conv_transpose),
        K::Col2Im => Kn(conv_transpose::col2im),
        K::DeformConv => Kn(deform_conv::deform_conv),
        K::MaxPool => Kn(|cx, b, op| pool(cx, b, op, Pool::Max)),
        K::AveragePool => Kn(|cx, b, op| pool(cx, b, op, Pool::Average)),
        K::GlobalMaxPool => Kn(|cx, b, op| global_pool(cx, b, op, Pool::Max)),
        K::GlobalAveragePool => Kn(|cx, b, op| global_pool(cx, b, op, Pool::Average)),
        K::LpPool => Kn(lp_pool::lp_pool),            K::MaxUnpool => Kn(pool::max_unpool),
        K::RNN => Kn(|cx, b, op| rnn(cx, b, op, Cell::Rnn)),
        K::GRU => Kn(|cx, b, op| rnn(cx, b, op, Cell::Gru)),
        K::LSTM => Kn(|cx, b, op| rnn(cx, b, op, Cell::Lstm)),
        K::Attention => Kn(attention::attention),
        K::LinearAttention => Kn(linear_attention::linear_attention),
        K::CausalConvWithState => Kn(causal_conv::causal_conv),
        K::RotaryEmbedding => Kn(rotary::rotary),     K::DFT => Kn(dft::dft),
        K::MatMulNBits => Kn(nbits::matmul_nbits),
        K::STFT => Kn(dft::stft),                     K::Resize => Kn(resize::resize),
        K::GridSample => Kn(grid_sample::grid_sample),
        K::AffineGrid => Kn(grid_sample::affine_grid),
        K::RoiAlign => Kn(grid_sample::roi_align),
        // No kernel (yet): random, string, optional and most ML ops.
        K::Yield | K::Bernoulli | K::GlobalLpPool | K::ImageDecoder | K::MaxRoiPool
        | K::MelWeightMatrix | K::Multinomial | K::OptionalGetElement | K::OptionalHasElement
        | K::RandomNormal | K::RandomNormalLike | K::RandomUniform
        | K::RandomUniformLike | K::RegexFullMatch | K::StringConcat | K::StringNormalizer
        | K::StringSplit | K::Upsample | K::CastMap | K::CategoryMapper | K::DictVectorizer
        | K::FeatureVectorizer | K::OneHotEncoder | K::SVMClassifier
        | K::SVMRegressor | K::ZipMap
            => Refused("no bufferization for this op yet"),
        K::Foreign => Refused(
            "an operator onnxc does not know (kept only by a fold) cannot be compiled",
        ),
    }
}

/// The scalar body of an element-wise op, `None` for every other op.
pub fn ew_body(kind: K) -> Option<elementwise::Body> {
    match lowering(kind) {
        Lower::Elementwise(body) => Some(body),
        Lower::Kernel(_) | Lower::Refused(_) => None,
    }
}

/// The op that computes `op` in its own loops, when `op` need not be
/// lowered where it stands, and the length of the deferred chain `op`
/// then ends: an element-wise op inside its consumer's loop
/// (`elementwise::fusion`), a Transpose read through strides by the MatMuls that
/// use it.
pub fn deferrable(cx: &Lowering, m: &Module, op: OpId) -> Option<(OpId, u32)> {
    elementwise::fusion::deferrable(cx, m, op).or_else(|| matmul::transpose_deferrable(cx, m, op))
}

/// Lowers one op at `b` and returns the memrefs of its results.
pub fn lower_op(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let Some(kind) = K::of(b.m, op) else {
        return Err(op_error(b.m, op, "no bufferization for this op yet"));
    };
    match lowering(kind) {
        Lower::Elementwise(body) => ew(cx, b, op, body),
        Lower::Kernel(kernel) => kernel(cx, b, op),
        Lower::Refused(why) => Err(op_error(b.m, op, why)),
    }
}
