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
use ir::dialects::op_error;
use ir::{Attribute, Builder, Module, OpId, Result, Type, ValueId, DYN};

/// Lowers one op at `b` and returns the memrefs of its results.
pub fn lower_op(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let name = b.m.name(op).as_str();
    let kind = name.strip_prefix("onnx.").unwrap_or(name);
    if let Some(r) = elementwise::lower(cx, b, op, kind)? {
        return Ok(r);
    }
    match kind {
        "Constant" => shape::constant(cx, b, op),
        // An omitted optional input stays `none`; kernels skip it.
        "NoValue" => Ok(b.m.results(op).to_vec()),
        "Identity" | "Dropout" => shape::identity(cx, b, op),
        "Flatten" | "Reshape" | "Squeeze" | "Unsqueeze" => shape::reshape(cx, b, op),
        "Transpose" => shape::transpose(cx, b, op),
        "MatMul" => matmul::matmul(cx, b, op),
        "Gemm" => matmul::gemm(cx, b, op),
        "Conv" => conv::conv(cx, b, op),
        "DeformConv" => deform_conv::deform_conv(cx, b, op),
        "MaxPool" => pool::pool(cx, b, op, pool::PoolKind::Max),
        "AveragePool" => pool::pool(cx, b, op, pool::PoolKind::Average),
        "GlobalMaxPool" => pool::global_pool(cx, b, op, pool::PoolKind::Max),
        "GlobalAveragePool" => pool::global_pool(cx, b, op, pool::PoolKind::Average),
        "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceProd" | "ReduceL1"
        | "ReduceL2" | "ReduceLogSum" | "ReduceLogSumExp" | "ReduceSumSquare" => {
            reduce::reduce(cx, b, op, kind)
        }
        "ArgMax" | "ArgMin" => reduce::arg(cx, b, op, kind),
        "Softmax" | "LogSoftmax" | "Hardmax" => softmax::softmax(cx, b, op, kind),
        "Concat" => build::concat(cx, b, op),
        "Split" => build::split(cx, b, op),
        "Shape" => build::shape(cx, b, op),
        "Size" => build::size(cx, b, op),
        "Range" => build::range(cx, b, op),
        "Tile" => build::tile(cx, b, op),
        "Expand" => build::expand(cx, b, op),
        "ConstantOfShape" => build::constant_of_shape(cx, b, op),
        "EyeLike" => build::eye_like(cx, b, op),
        "BatchNormalization" => norm::batch_norm(cx, b, op),
        "InstanceNormalization" => norm::instance_norm(cx, b, op),
        "LayerNormalization" | "RMSNormalization" => norm::layer_norm(cx, b, op, kind),
        "GroupNormalization" => norm::group_norm(cx, b, op),
        "MeanVarianceNormalization" => norm::mvn(cx, b, op),
        "LpNormalization" => norm::lp_norm(cx, b, op),
        "LRN" => norm::lrn(cx, b, op),
        "QuantizeLinear" => quant::quantize(cx, b, op),
        "DequantizeLinear" => quant::dequantize(cx, b, op),
        "DynamicQuantizeLinear" => quant::dynamic_quantize(cx, b, op),
        "ScatterElements" | "Scatter" => index::scatter_elements(cx, b, op),
        "ScatterND" => index::scatter_nd(cx, b, op),
        "TensorScatter" => index::tensor_scatter(cx, b, op),
        "GatherND" => index::gather_nd(cx, b, op),
        "TopK" => index::topk(cx, b, op),
        "OneHot" => index::one_hot(cx, b, op),
        "NonZero" => index::non_zero(cx, b, op),
        "NonMaxSuppression" => nms::non_max_suppression(cx, b, op),
        "Unique" => unique::unique(cx, b, op),
        "TfIdfVectorizer" => tfidf::tfidf(cx, b, op),
        "DepthToSpace" | "SpaceToDepth" => index::depth_space(cx, b, op, kind),
        "Gather" => gather::gather(cx, b, op),
        "GatherElements" => gather::gather_elements(cx, b, op),
        "Slice" => slice::slice(cx, b, op),
        "CumSum" | "CumProd" => gather::cumulative(cx, b, op, kind),
        "RNN" => rnn::rnn(cx, b, op, rnn::Cell::Rnn),
        "GRU" => rnn::rnn(cx, b, op, rnn::Cell::Gru),
        "LSTM" => rnn::rnn(cx, b, op, rnn::Cell::Lstm),
        "Einsum" => misc::einsum(cx, b, op),
        "BitCast" => extra::bitcast(cx, b, op),
        "HannWindow" | "HammingWindow" | "BlackmanWindow" => extra::window(cx, b, op, kind),
        "QLinearMatMul" => extra::qlinear_matmul(cx, b, op),
        "CenterCropPad" => extra::center_crop_pad(cx, b, op),
        "GridSample" => grid_sample::grid_sample(cx, b, op),
        "AffineGrid" => grid_sample::affine_grid(cx, b, op),
        "RoiAlign" => grid_sample::roi_align(cx, b, op),
        "Compress" => misc::compress(cx, b, op),
        "ReverseSequence" => misc::reverse_sequence(cx, b, op),
        "MatMulInteger" => integer::matmul_integer(cx, b, op),
        "ConvInteger" => integer::conv_integer(cx, b, op),
        "ConvTranspose" => conv_transpose::conv_transpose(cx, b, op),
        "Col2Im" => conv_transpose::col2im(cx, b, op),
        "DFT" => dft::dft(cx, b, op),
        "STFT" => dft::stft(cx, b, op),
        "LpPool" => lp_pool::lp_pool(cx, b, op),
        "MaxUnpool" => pool::max_unpool(cx, b, op),
        "Attention" => attention::attention(cx, b, op),
        "CausalConvWithState" => causal_conv::causal_conv(cx, b, op),
        "RotaryEmbedding" => rotary::rotary(cx, b, op),
        "LinearAttention" => linear_attention::linear_attention(cx, b, op),
        "If" => control::if_op(cx, b, op),
        "Loop" => control::loop_op(cx, b, op),
        "Scan" => control::scan_op(cx, b, op),
        "Pad" => pad::pad(cx, b, op),
        "Resize" => resize::resize(cx, b, op),
        "NegativeLogLikelihoodLoss" => loss::nll_loss(cx, b, op),
        "SoftmaxCrossEntropyLoss" => loss::softmax_cross_entropy(cx, b, op),
        "Trilu" => gather::trilu(cx, b, op),
        "onnx_ml.ArrayFeatureExtractor" => gather::array_feature_extractor(cx, b, op),
        "Det" => misc::det(cx, b, op),
        _ => Err(op_error(b.m, op, "no bufferization for this op yet")),
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

pub fn attr_int(m: &Module, op: OpId, name: &str, default: i64) -> i64 {
    m.attr(op, name)
        .and_then(Attribute::as_int)
        .unwrap_or(default)
}

pub fn attr_float(m: &Module, op: OpId, name: &str, default: f64) -> f64 {
    m.attr(op, name)
        .and_then(Attribute::as_float)
        .unwrap_or(default)
}

pub fn attr_ints(m: &Module, op: OpId, name: &str) -> Option<Vec<i64>> {
    m.attr(op, name).and_then(Attribute::as_i64_list)
}

pub fn attr_str<'m>(m: &'m Module, op: OpId, name: &str) -> Option<&'m str> {
    m.attr(op, name).and_then(Attribute::as_str)
}

/// Constant integer values of operand `i` when it comes from `onnx.Constant`.
pub fn constant_ints(m: &Module, op: OpId, i: usize) -> Option<Vec<i64>> {
    let v = m.operand(op, i)?;
    let def = m.defining_op(v)?;
    if !m.is(def, "onnx.Constant") {
        return None;
    }
    let e = m.attr(def, "value")?.as_elements()?;
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
        Ok(r) => store_at(b, r, dst, idx),
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

/// `memref.load m[idx]`.
pub fn load_at(b: &mut Builder<'_>, m: ValueId, idx: &[ValueId]) -> ValueId {
    let elem = elem_of(b.m, m);
    let mut operands = vec![m];
    operands.extend_from_slice(idx);
    b.op1("memref.load", &operands, elem, &[])
}

/// `memref.store v, m[idx]`.
pub fn store_at(b: &mut Builder<'_>, v: ValueId, m: ValueId, idx: &[ValueId]) {
    let mut operands = vec![v, m];
    operands.extend_from_slice(idx);
    b.op("memref.store", &operands, &[], &[]);
}
