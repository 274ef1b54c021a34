//! Per-op lowerings of `onnx.*` to memref + scf, sharing a few mechanisms:
//! broadcasting element-wise nests, reduction nests, views for reshapes.

mod activations;
mod build;
mod control;
mod conv;
mod conv_transpose;
mod elementwise;
mod extra;
mod gather;
mod grid_sample;
mod index;
mod integer;
mod logic;
mod loss;
mod lp_pool;
mod matmul;
mod misc;
mod norm;
mod pad;
mod pool;
mod quant;
mod reduce;
mod resize;
mod rnn;
pub mod scalar;
mod shape;
mod softmax;
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
        "MaxPool" | "AveragePool" => pool::pool(cx, b, op, kind),
        "GlobalAveragePool" | "GlobalMaxPool" => pool::global_pool(cx, b, op, kind),
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
        "GatherND" => index::gather_nd(cx, b, op),
        "TopK" => index::topk(cx, b, op),
        "OneHot" => index::one_hot(cx, b, op),
        "NonZero" => index::non_zero(cx, b, op),
        "DepthToSpace" | "SpaceToDepth" => index::depth_space(cx, b, op, kind),
        "Gather" => gather::gather(cx, b, op),
        "GatherElements" => gather::gather_elements(cx, b, op),
        "Slice" => gather::slice(cx, b, op),
        "CumSum" | "CumProd" => gather::cumulative(cx, b, op, kind),
        "RNN" | "GRU" | "LSTM" => rnn::rnn(cx, b, op, kind),
        "Einsum" => misc::einsum(cx, b, op),
        "BitCast" => extra::bitcast(cx, b, op),
        "HannWindow" | "HammingWindow" | "BlackmanWindow" => extra::window(cx, b, op, kind),
        "QLinearMatMul" => extra::qlinear_matmul(cx, b, op),
        "CenterCropPad" => extra::center_crop_pad(cx, b, op),
        "GridSample" => grid_sample::grid_sample(cx, b, op),
        "Compress" => misc::compress(cx, b, op),
        "ReverseSequence" => misc::reverse_sequence(cx, b, op),
        "MatMulInteger" => integer::matmul_integer(cx, b, op),
        "ConvInteger" => integer::conv_integer(cx, b, op),
        "ConvTranspose" => conv_transpose::conv_transpose(cx, b, op),
        "LpPool" => lp_pool::lp_pool(cx, b, op),
        "If" => control::if_op(cx, b, op),
        "Loop" => control::loop_op(cx, b, op),
        "Scan" => control::scan_op(cx, b, op),
        "Pad" => pad::pad(cx, b, op),
        "Resize" => resize::resize(cx, b, op),
        "NegativeLogLikelihoodLoss" => loss::nll_loss(cx, b, op),
        "SoftmaxCrossEntropyLoss" => loss::softmax_cross_entropy(cx, b, op),
        "Trilu" => gather::trilu(cx, b, op),
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
