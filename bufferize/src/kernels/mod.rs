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
mod einsum;
mod elementwise;
pub mod epilogue;
mod ew_fusion;
mod extra;
mod gather;
pub mod gemm;
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
mod ml;
mod nbits;
mod nms;
mod norm;
mod pad;
mod pool;
mod qgemm;
mod quant;
mod reduce;
mod resize;
mod rnn;
mod rotary;
pub mod scalar;
mod scan_rows;
mod shape;
mod slice;
mod sliding;
mod softmax;
mod tfidf;
mod trees;
mod unique;
mod window;
mod winograd;

use crate::convert::{memref_type, Lowering};
use activations as act;
use elementwise as ar;
use elementwise::{cast_like, elementwise as ew};
use extra::{window, Window as Win};
use gather::{cumulative, Cumulative as Cum};
use ir::dialects::op_error;
use ir::{Attribute, Builder, Module, OpId, Result, Type, ValueId, DYN};
use logic as lg;
use onnx::{ops, OpKind as K};
use pool::{global_pool, PoolKind as Pool};
use reduce::{arg, reduce, Arg, Reduce as R};
use rnn::{rnn, Cell};
use sliding::pool;
use softmax::{softmax, Norm};

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
        K::QLinearMatMul => Kn(extra::qlinear_matmul),
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
/// (`ew_fusion`), a Transpose read through strides by the MatMuls that
/// use it.
pub fn deferrable(cx: &Lowering, m: &Module, op: OpId) -> Option<(OpId, u32)> {
    ew_fusion::deferrable(cx, m, op).or_else(|| matmul::transpose_deferrable(cx, m, op))
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

/// The memref type of result `i`.
pub fn result_memref_type(m: &Module, op: OpId, i: usize) -> Result<Type> {
    let r = m
        .result(op, i)
        .ok_or_else(|| op_error(m, op, format!("missing result #{i}")))?;
    memref_type(m, op, m.value_type(r))
}

/// The static shape (`DYN` for dynamic dims) of result `i`, which must be
/// ranked: when it is not, `what` (an operand's length, say) decides the
/// rank at run time, which a memref cannot express.
pub fn ranked_result(m: &Module, op: OpId, i: usize, what: &str) -> Result<Vec<i64>> {
    let r = m
        .result(op, i)
        .ok_or_else(|| op_error(m, op, format!("missing result #{i}")))?;
    match m.value_type(r).shape() {
        Some(s) => Ok(s.to_vec()),
        None => Err(op_error(
            m,
            op,
            format!("{what} determines the result rank and must be known at compile time"),
        )),
    }
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
    Ok(crate::convert::alloc_dims(b, &ty, dims))
}

/// A fresh buffer of `elem` with dims `sizes`: the ones that are constants
/// are static in its type.
pub fn alloc_sized(b: &mut Builder<'_>, elem: &Type, sizes: &[ValueId]) -> ValueId {
    let shape: Vec<i64> = sizes
        .iter()
        .map(|&v| b.index_value(v).filter(|&d| d >= 0).unwrap_or(DYN))
        .collect();
    crate::convert::alloc_dims(b, &Type::memref(shape, elem.clone()), sizes)
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

/// The elements of operand `i` when it comes from `onnx.Constant`.
pub fn constant_elements(m: &Module, op: OpId, i: usize) -> Option<ir::elements::Elements> {
    let def = onnx::defined_by(m, m.operand(op, i)?, K::Constant)?;
    ops::Constant::of(m, def).value().cloned()
}

/// Constant `weights` in the layout a kernel reads, as a new 1-D global
/// of `len` elements of their dtype. `pack` appends them, given the
/// weights' bytes, when the global is written out: the packed copy is not
/// held while the module is compiled.
pub fn packed_global(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    (weights, len): (ir::elements::Elements, usize),
    pack: impl Fn(&[u8], &mut Vec<u8>) + Send + Sync + 'static,
) -> Option<(ValueId, i64)> {
    let len = i64::try_from(len).ok()?;
    let dtype = weights.dtype();
    let fill: ir::elements::FillFn =
        std::sync::Arc::new(move |out| pack(&weights.to_contiguous_bytes(), out));
    let e = ir::elements::Elements::generated(dtype, vec![len], fill).ok()?;
    Some((cx.global(b, &e), len))
}

/// Constant integer values of operand `i` when it comes from `onnx.Constant`.
pub fn constant_ints(m: &Module, op: OpId, i: usize) -> Option<Vec<i64>> {
    let e = constant_elements(m, op, i)?;
    Some(e.iter().map(|w| w.i64()).collect())
}

/// Constant float values of operand `i` when it comes from `onnx.Constant`.
pub fn constant_floats(m: &Module, op: OpId, i: usize) -> Option<Vec<f64>> {
    let e = constant_elements(m, op, i)?;
    Some(e.iter().map(|w| w.f64()).collect())
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

/// Calls a kernel built once per level of `levels` (widest first; the
/// last is taken whatever the level): on first use `NAME_vL` for each,
/// its body written by `body(builder, params, level)` for that level's
/// vector width and built for its CPU (`func::TARGET_CPU`, so that
/// `multiversion` leaves it alone), then the call of the one the running
/// CPU has.
pub fn call_per_level(
    b: &mut Builder<'_>,
    (name, args): (&str, &[ValueId]),
    levels: &[ir::dialects::func::X86Level],
    body: &dyn Fn(&mut Builder<'_>, Vec<ValueId>, &ir::dialects::func::X86Level),
) {
    use ir::dialects::func;
    let types: Vec<Type> = args.iter().map(|&a| b.m.value_type(a).clone()).collect();
    let mut variants = Vec::new();
    // The baseline first, so the module reads from the plain code up.
    for l in levels.iter().rev() {
        let variant = func::level_variant(name, l.level);
        if b.m.lookup_symbol(&variant).is_none() {
            let (mut fb, params) = private_func(b.m, &variant, types.clone());
            if let Some(f) = fb.m.lookup_symbol(&variant) {
                fb.m.set_attr(f, func::TARGET_CPU, Attribute::string(l.cpu));
            }
            body(&mut fb, params, l);
            fb.ret(&[]);
        }
        variants.insert(0, (l.level, variant));
    }
    b.call_for_cpu_level(&variants, args);
}

/// The type of a view like `t` at any offset and outer strides (the last
/// stays 1; `t` itself when not a memref).
pub fn any_layout_type(t: &Type) -> Type {
    let Some(mt) = t.as_memref() else {
        return t.clone();
    };
    let rank = mt.shape.len();
    let strides: Vec<i64> = (0..rank)
        .map(|d| if d + 1 == rank { 1 } else { ir::DYN })
        .collect();
    Type::memref_strided(mt.shape.clone(), mt.elem.clone(), ir::DYN, strides)
}

/// `v` as a view of any offset and outer strides: the output a kernel
/// function takes (the GEMM's flat C, a window kernel's image), so that
/// the deallocation stage may pass a slot of a larger buffer (a Concat's
/// input written in place).
pub fn any_layout(b: &mut Builder<'_>, v: ValueId) -> ValueId {
    let ty = any_layout_type(b.m.value_type(v));
    if ty == *b.m.value_type(v) {
        return v;
    }
    b.memref_cast(v, ty)
}

/// `__onnxc_PREFIX_HASH`: a kernel's symbol from what its body depends
/// on (`key`) and its arguments' types.
pub fn kernel_symbol(b: &Builder<'_>, prefix: &str, key: &str, args: &[ValueId]) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    for &a in args {
        b.m.value_type(a).to_string().hash(&mut h);
    }
    format!("__onnxc_{prefix}_{:016x}", h.finish())
}

/// A symbol-name fragment: the type with every non-alphanumeric character
/// as `_`.
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

/// Lanes of `at + offsets[l]` (`lanes` of `i64`) inside `[0, len)`.
pub(crate) fn lanes_inside(
    b: &mut Builder<'_>,
    at: ValueId,
    offsets: ValueId,
    len: ValueId,
    lanes: i64,
) -> ValueId {
    let at = b.index_cast(at, Type::i64());
    let at = b.broadcast(at, lanes);
    let pos = b.addi(at, offsets);
    let len = b.index_cast(len, Type::i64());
    let len = b.broadcast(len, lanes);
    let zero = b.constant_like(pos, 0.0);
    let lo = b.cmp(ir::builder::Cmp::Ge, pos, zero);
    let hi = b.cmp(ir::builder::Cmp::Lt, pos, len);
    b.andi(lo, hi)
}

/// `x[start..start + n]` folded in vectors of `lanes`: each vector mapped
/// by `f`, combined into a vector accumulator by `step` from `init` (a
/// scalar; the masked tail's off lanes take it too), and the lanes then
/// combined by `lanes_kind`. A sum carried from element to element would
/// be one add per element in a dependency chain; a vector of partial
/// results is `lanes` independent ones.
pub(crate) fn vector_fold(
    b: &mut Builder<'_>,
    (x, start, n): (ValueId, ValueId, ValueId),
    (lanes, init): (i64, ValueId),
    f: &dyn Fn(&mut Builder<'_>, ValueId) -> ValueId,
    step: &dyn Fn(&mut Builder<'_>, ValueId, ValueId) -> ValueId,
    lanes_kind: ir::builder::Reduce,
) -> ValueId {
    let (zero, l) = (b.const_index(0), b.const_index(lanes));
    let whole = b.floordivsi(n, l);
    let whole = b.muli(whole, l);
    let vinit = b.broadcast(init, lanes);
    let lp = b.scf_for(zero, whole, l, &[vinit], |b, j, acc| {
        let at = b.addi(start, j);
        let v = b.vload(x, &[at], lanes);
        let y = f(b, v);
        vec![step(b, acc[0], y)]
    });
    let left = b.subi(n, whole);
    let mask = b.create_mask(left, lanes);
    let at = b.addi(start, whole);
    let v = b.masked_load(x, &[at], mask, vinit);
    let y = f(b, v);
    let y = b.select(mask, y, vinit);
    let acc = step(b, b.m.results(lp)[0], y);
    b.reduction(lanes_kind, acc)
}

/// Lanes of a vector of `elem` in `bits`, for the element types whose
/// vector max/add/div the target does natively.
pub(crate) fn vector_lanes(elem: &Type, bits: u32) -> i64 {
    match elem.bit_width() {
        Some(w @ (32 | 64)) if elem.is_float() => i64::from(bits / w),
        _ => 0,
    }
}

/// The element of a scalar (or one-element) parameter, or element `i` of
/// a per-channel one, converted to `to`.
pub(crate) fn scalar_at(
    b: &mut Builder<'_>,
    op: OpId,
    p: ValueId,
    i: Option<ValueId>,
    to: &Type,
) -> Result<ValueId> {
    let shape = shape_of(b.m, p);
    let idx: Vec<ValueId> = match (shape.as_slice(), i) {
        ([n], Some(i)) if *n != 1 => vec![i],
        _ => shape.iter().map(|_| b.const_index(0)).collect(),
    };
    let v = b.load(p, &idx);
    scalar::convert(b, op, v, to)
}
