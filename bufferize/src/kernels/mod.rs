//! Per-op lowerings of `onnx.*` to memref + scf, sharing a few mechanisms:
//! broadcasting element-wise nests, reduction nests, views for reshapes.

mod activations;
mod attention;
mod build;
mod causal_conv;
mod checks;
mod control;
mod conv;
mod conv_transpose;
mod deform_conv;
mod dft;
mod elementwise;
mod extra;
mod gather;
mod grid_sample;
mod index;
mod integer;
mod interp;
mod linear_attention;
mod logic;
mod loss;
mod lp_pool;
mod matmul;
mod misc;
mod nms;
mod norm;
mod pad;
mod pool;
mod quant;
mod reduce;
mod resize;
mod rnn;
mod rotary;
pub mod scalar;
mod shape;
mod slice;
mod softmax;
mod tfidf;
mod unique;
mod window;

use crate::convert::{alloc, memref_type, Lowering};
use activations as act;
use elementwise as ar;
use elementwise::{cast_like, elementwise as ew};
use ir::dialects::op_error;
use ir::{Attribute, Builder, Module, OpId, Result, Type, ValueId, DYN};
use logic as lg;
use onnx::{ops, OpKind as K};

/// Lowers one op at `b` and returns the memrefs of its results.
pub fn lower_op(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let Some(kind) = K::of(b.m, op) else {
        return Err(op_error(b.m, op, "no bufferization for this op yet"));
    };
    match kind {
        // Element-wise: one broadcasting nest, a scalar body per op.
        K::Add | K::Sum => ew(cx, b, op, ar::add),
        K::Sub => ew(cx, b, op, ar::sub),
        K::Mul => ew(cx, b, op, ar::mul),
        K::Div => ew(cx, b, op, ar::div),
        K::Max => ew(cx, b, op, ar::max),
        K::Min => ew(cx, b, op, ar::min),
        K::Neg => ew(cx, b, op, ar::neg),
        K::Abs => ew(cx, b, op, ar::abs),
        K::Reciprocal => ew(cx, b, op, ar::reciprocal),
        K::Cast => ew(cx, b, op, ar::cast),
        K::CastLike => cast_like(cx, b, op),
        K::Exp => ew(cx, b, op, ar::exp),
        K::Log => ew(cx, b, op, ar::log),
        K::Sqrt => ew(cx, b, op, ar::sqrt),
        K::Erf => ew(cx, b, op, ar::erf),
        K::Floor => ew(cx, b, op, ar::floor),
        K::Ceil => ew(cx, b, op, ar::ceil),
        K::Round => ew(cx, b, op, ar::round),
        K::Sin => ew(cx, b, op, ar::sin),
        K::Cos => ew(cx, b, op, ar::cos),
        K::Tan => ew(cx, b, op, ar::tan),
        K::Asin => ew(cx, b, op, ar::asin),
        K::Acos => ew(cx, b, op, ar::acos),
        K::Atan => ew(cx, b, op, ar::atan),
        K::Sinh => ew(cx, b, op, ar::sinh),
        K::Cosh => ew(cx, b, op, ar::cosh),
        K::Tanh => ew(cx, b, op, ar::tanh),
        K::Asinh => ew(cx, b, op, ar::asinh),
        K::Acosh => ew(cx, b, op, ar::acosh),
        K::Atanh => ew(cx, b, op, ar::atanh),
        K::Relu => ew(cx, b, op, act::relu),
        K::Sigmoid => ew(cx, b, op, act::sigmoid),
        K::LeakyRelu => ew(cx, b, op, act::leaky_relu),
        K::Elu => ew(cx, b, op, act::elu),
        K::Selu => ew(cx, b, op, act::selu),
        K::Celu => ew(cx, b, op, act::celu),
        K::HardSigmoid => ew(cx, b, op, act::hard_sigmoid),
        K::HardSwish => ew(cx, b, op, act::hard_swish),
        K::Softplus => ew(cx, b, op, act::softplus),
        K::Softsign => ew(cx, b, op, act::softsign),
        K::Mish => ew(cx, b, op, act::mish),
        K::Swish => ew(cx, b, op, act::swish),
        K::SwiGLU => ew(cx, b, op, act::swiglu),
        K::Gelu => ew(cx, b, op, act::gelu),
        K::ThresholdedRelu => ew(cx, b, op, act::thresholded_relu),
        K::Shrink => ew(cx, b, op, act::shrink),
        K::PRelu => ew(cx, b, op, act::prelu),
        K::Sign => ew(cx, b, op, act::sign),
        K::IsNaN => ew(cx, b, op, act::is_nan),
        K::IsInf => ew(cx, b, op, act::is_inf),
        K::Binarizer => ew(cx, b, op, act::binarizer),
        K::Equal => ew(cx, b, op, lg::equal),
        K::Greater => ew(cx, b, op, lg::greater),
        K::GreaterOrEqual => ew(cx, b, op, lg::greater_or_equal),
        K::Less => ew(cx, b, op, lg::less),
        K::LessOrEqual => ew(cx, b, op, lg::less_or_equal),
        K::And | K::BitwiseAnd => ew(cx, b, op, lg::and),
        K::Or | K::BitwiseOr => ew(cx, b, op, lg::or),
        K::Xor | K::BitwiseXor => ew(cx, b, op, lg::xor),
        K::Not | K::BitwiseNot => ew(cx, b, op, lg::not),
        K::BitShift => ew(cx, b, op, lg::bit_shift),
        K::Where => ew(cx, b, op, lg::where_),
        K::Clip => ew(cx, b, op, lg::clip),
        K::Mod => ew(cx, b, op, lg::modulo),
        K::Pow => ew(cx, b, op, lg::pow),
        K::Mean => ew(cx, b, op, lg::mean),
        // Constants, views and copies.
        K::Constant => shape::constant(cx, b, op),
        // An omitted optional input stays `none`; kernels skip it.
        K::NoValue => Ok(b.m.results(op).to_vec()),
        K::Identity | K::Dropout => shape::identity(cx, b, op),
        K::Flatten => shape::flatten(cx, b, op),
        K::Reshape => shape::reshape(cx, b, op),
        K::Squeeze => shape::squeeze(cx, b, op),
        K::Unsqueeze => shape::unsqueeze(cx, b, op),
        K::Transpose => shape::transpose(cx, b, op),
        K::Concat => build::concat(cx, b, op),
        K::Split => build::split(cx, b, op),
        K::Shape => build::shape(cx, b, op),
        K::Size => build::size(cx, b, op),
        K::Range => build::range(cx, b, op),
        K::Tile => build::tile(cx, b, op),
        K::Expand => build::expand(cx, b, op),
        K::ConstantOfShape => build::constant_of_shape(cx, b, op),
        K::EyeLike => build::eye_like(cx, b, op),
        K::Slice => slice::slice(cx, b, op),
        K::Pad => pad::pad(cx, b, op),
        K::CenterCropPad => extra::center_crop_pad(cx, b, op),
        K::BitCast => extra::bitcast(cx, b, op),
        // Reductions and normalizations.
        K::ReduceSum => reduce::reduce(cx, b, op, reduce::Reduce::Sum),
        K::ReduceMean => reduce::reduce(cx, b, op, reduce::Reduce::Mean),
        K::ReduceMax => reduce::reduce(cx, b, op, reduce::Reduce::Max),
        K::ReduceMin => reduce::reduce(cx, b, op, reduce::Reduce::Min),
        K::ReduceProd => reduce::reduce(cx, b, op, reduce::Reduce::Prod),
        K::ReduceL1 => reduce::reduce(cx, b, op, reduce::Reduce::L1),
        K::ReduceL2 => reduce::reduce(cx, b, op, reduce::Reduce::L2),
        K::ReduceLogSum => reduce::reduce(cx, b, op, reduce::Reduce::LogSum),
        K::ReduceLogSumExp => reduce::reduce(cx, b, op, reduce::Reduce::LogSumExp),
        K::ReduceSumSquare => reduce::reduce(cx, b, op, reduce::Reduce::SumSquare),
        K::ArgMax => reduce::arg(cx, b, op, reduce::Arg::Max),
        K::ArgMin => reduce::arg(cx, b, op, reduce::Arg::Min),
        K::Softmax => softmax::softmax(cx, b, op, softmax::Norm::Softmax),
        K::LogSoftmax => softmax::softmax(cx, b, op, softmax::Norm::LogSoftmax),
        K::Hardmax => softmax::softmax(cx, b, op, softmax::Norm::Hardmax),
        K::BatchNormalization => norm::batch_norm(cx, b, op),
        K::InstanceNormalization => norm::instance_norm(cx, b, op),
        K::LayerNormalization => norm::layer_norm(cx, b, op),
        K::RMSNormalization => norm::rms_norm(cx, b, op),
        K::GroupNormalization => norm::group_norm(cx, b, op),
        K::MeanVarianceNormalization => norm::mvn(cx, b, op),
        K::LpNormalization => norm::lp_norm(cx, b, op),
        K::LRN => norm::lrn(cx, b, op),
        K::CumSum => gather::cumulative(cx, b, op, gather::Cumulative::Sum),
        K::CumProd => gather::cumulative(cx, b, op, gather::Cumulative::Prod),
        // Indexing, scatter and data-dependent shapes.
        K::Gather => gather::gather(cx, b, op),
        K::GatherElements => gather::gather_elements(cx, b, op),
        K::GatherND => index::gather_nd(cx, b, op),
        K::Trilu => gather::trilu(cx, b, op),
        K::ArrayFeatureExtractor => gather::array_feature_extractor(cx, b, op),
        K::Scatter => index::scatter(cx, b, op),
        K::ScatterElements => index::scatter_elements(cx, b, op),
        K::ScatterND => index::scatter_nd(cx, b, op),
        K::TensorScatter => index::tensor_scatter(cx, b, op),
        K::TopK => index::topk(cx, b, op),
        K::OneHot => index::one_hot(cx, b, op),
        K::NonZero => index::non_zero(cx, b, op),
        K::DepthToSpace => index::depth_to_space(cx, b, op),
        K::SpaceToDepth => index::space_to_depth(cx, b, op),
        K::Compress => misc::compress(cx, b, op),
        K::ReverseSequence => misc::reverse_sequence(cx, b, op),
        K::Unique => unique::unique(cx, b, op),
        K::NonMaxSuppression => nms::non_max_suppression(cx, b, op),
        K::TfIdfVectorizer => tfidf::tfidf(cx, b, op),
        // Quantization, losses, windows and the rest.
        K::QuantizeLinear => quant::quantize(cx, b, op),
        K::DequantizeLinear => quant::dequantize(cx, b, op),
        K::DynamicQuantizeLinear => quant::dynamic_quantize(cx, b, op),
        K::QLinearMatMul => extra::qlinear_matmul(cx, b, op),
        K::NegativeLogLikelihoodLoss => loss::nll_loss(cx, b, op),
        K::SoftmaxCrossEntropyLoss => loss::softmax_cross_entropy(cx, b, op),
        K::HannWindow => extra::window(cx, b, op, extra::Window::Hann),
        K::HammingWindow => extra::window(cx, b, op, extra::Window::Hamming),
        K::BlackmanWindow => extra::window(cx, b, op, extra::Window::Blackman),
        K::Einsum => misc::einsum(cx, b, op),
        K::Det => misc::det(cx, b, op),
        // Control flow.
        K::If => control::if_op(cx, b, op),
        K::Loop => control::loop_op(cx, b, op),
        K::Scan => control::scan_op(cx, b, op),
        // Kernels of bufferize B (linear algebra, convolution, pooling,
        // sequence models, signal and sampling).
        K::MatMul => matmul::matmul(cx, b, op),
        K::Gemm => matmul::gemm(cx, b, op),
        K::MatMulInteger => integer::matmul_integer(cx, b, op),
        K::ConvInteger => integer::conv_integer(cx, b, op),
        K::Conv => conv::conv(cx, b, op),
        K::ConvTranspose => conv_transpose::conv_transpose(cx, b, op),
        K::Col2Im => conv_transpose::col2im(cx, b, op),
        K::DeformConv => deform_conv::deform_conv(cx, b, op),
        K::MaxPool => pool::pool(cx, b, op, pool::PoolKind::Max),
        K::AveragePool => pool::pool(cx, b, op, pool::PoolKind::Average),
        K::GlobalMaxPool => pool::global_pool(cx, b, op, pool::PoolKind::Max),
        K::GlobalAveragePool => pool::global_pool(cx, b, op, pool::PoolKind::Average),
        K::LpPool => lp_pool::lp_pool(cx, b, op),
        K::MaxUnpool => pool::max_unpool(cx, b, op),
        K::RNN => rnn::rnn(cx, b, op, rnn::Cell::Rnn),
        K::GRU => rnn::rnn(cx, b, op, rnn::Cell::Gru),
        K::LSTM => rnn::rnn(cx, b, op, rnn::Cell::Lstm),
        K::Attention => attention::attention(cx, b, op),
        K::LinearAttention => linear_attention::linear_attention(cx, b, op),
        K::CausalConvWithState => causal_conv::causal_conv(cx, b, op),
        K::RotaryEmbedding => rotary::rotary(cx, b, op),
        K::DFT => dft::dft(cx, b, op),
        K::STFT => dft::stft(cx, b, op),
        K::Resize => resize::resize(cx, b, op),
        K::GridSample => grid_sample::grid_sample(cx, b, op),
        K::AffineGrid => grid_sample::affine_grid(cx, b, op),
        K::RoiAlign => grid_sample::roi_align(cx, b, op),
        // No kernel (yet): random, string, optional and most ML ops.
        K::Yield
        | K::Bernoulli
        | K::GlobalLpPool
        | K::ImageDecoder
        | K::MaxRoiPool
        | K::MelWeightMatrix
        | K::Multinomial
        | K::OptionalGetElement
        | K::OptionalHasElement
        | K::QLinearConv
        | K::RandomNormal
        | K::RandomNormalLike
        | K::RandomUniform
        | K::RandomUniformLike
        | K::RegexFullMatch
        | K::StringConcat
        | K::StringNormalizer
        | K::StringSplit
        | K::Upsample
        | K::CastMap
        | K::CategoryMapper
        | K::DictVectorizer
        | K::FeatureVectorizer
        | K::Imputer
        | K::LabelEncoder
        | K::LinearClassifier
        | K::LinearRegressor
        | K::Normalizer
        | K::OneHotEncoder
        | K::SVMClassifier
        | K::SVMRegressor
        | K::Scaler
        | K::TreeEnsemble
        | K::TreeEnsembleClassifier
        | K::TreeEnsembleRegressor
        | K::ZipMap => Err(op_error(b.m, op, "no bufferization for this op yet")),
    }
}

/// The memref type of result `i`.
pub fn result_memref_type(m: &Module, op: OpId, i: usize) -> Result<Type> {
    let r = m
        .result(op, i)
        .ok_or_else(|| op_error(m, op, format!("missing result #{i}")))?;
    memref_type(m, op, m.value_type(r))
}

/// Allocates the buffer of result `i` given every dim's size.
pub fn alloc_result(b: &mut Builder<'_>, op: OpId, i: usize, dims: &[ValueId]) -> Result<ValueId> {
    let ty = result_memref_type(b.m, op, i)?;
    let shape = ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    if shape.len() != dims.len() {
        return Err(op_error(
            b.m,
            op,
            "result rank differs from the computed shape",
        ));
    }
    let dynamic: Vec<ValueId> = shape
        .iter()
        .zip(dims)
        .filter(|(&d, _)| d == DYN)
        .map(|(_, &v)| v)
        .collect();
    Ok(alloc(b, &ty, &dynamic))
}

/// Static shape of a memref value (`DYN` for dynamic dims).
pub fn shape_of(m: &Module, v: ValueId) -> Vec<i64> {
    m.value_type(v)
        .shape()
        .map(<[i64]>::to_vec)
        .unwrap_or_default()
}

pub fn elem_of(m: &Module, v: ValueId) -> Type {
    m.value_type(v).element_type().clone()
}

/// Axis `a` of a rank-`rank` value, an error when out of range.
pub fn axis(m: &Module, op: OpId, a: i64, rank: usize) -> Result<usize> {
    onnx::axis::normalize(a, rank)
        .ok_or_else(|| op_error(m, op, format!("axis {a} out of range for rank {rank}")))
}

/// Constant integer values of operand `i` when it comes from `onnx.Constant`.
pub fn constant_ints(m: &Module, op: OpId, i: usize) -> Option<Vec<i64>> {
    let def = onnx::defined_by(m, m.operand(op, i)?, K::Constant)?;
    let e = ops::Constant::of(m, def).value()?;
    Some(e.iter().map(|w| w.i64()).collect())
}

/// A private function `name(inputs)` without results at the end of the
/// module (shared kernels such as the GEMM): a builder at its entry block
/// and its arguments.
pub fn private_func<'a>(
    m: &'a mut Module,
    name: &str,
    inputs: Vec<Type>,
) -> (Builder<'a>, Vec<ValueId>) {
    let body = m.body();
    let mut fb = Builder::new(m, ir::InsertPoint::End(body));
    let (f, entry) = fb.func(name, inputs, vec![]);
    fb.m.set_attr(f, "sym_visibility", Attribute::string("private"));
    let args = fb.m.block_args(entry).to_vec();
    (Builder::at_end(fb.m, entry), args)
}

/// Symbol-name fragments: a static shape as `2x3x4` (`-` as `m`), a type
/// with every non-alphanumeric character as `_`.
pub fn shape_tag(s: &[i64]) -> String {
    s.iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join("x")
        .replace('-', "m")
}
pub fn type_tag(t: &Type) -> String {
    t.to_string()
        .replace(|c: char| !c.is_ascii_alphanumeric(), "_")
}

/// `v` converted to `to` and stored at `dst[idx]`; a failed conversion is
/// kept in `err` (loop bodies are closures that cannot return one).
#[allow(clippy::too_many_arguments)]
pub fn store_converted(
    b: &mut Builder<'_>,
    op: OpId,
    v: ValueId,
    to: &Type,
    dst: ValueId,
    idx: &[ValueId],
    err: &mut Option<ir::Diagnostic>,
) {
    match scalar::convert(b, op, v, to) {
        Ok(r) => b.store(r, dst, idx),
        Err(e) => *err = Some(e),
    }
}

/// The results, or the first error a loop body recorded.
pub fn finish(err: Option<ir::Diagnostic>, out: Vec<ValueId>) -> Result<Vec<ValueId>> {
    match err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}
