//! QuantizeLinear, DequantizeLinear (per-tensor, per-axis and blocked
//! scales) and DynamicQuantizeLinear.

use crate::convert::{dims, Lowering};
use crate::kernels::support::scalar;
use crate::kernels::{support::alloc_result, support::elem_of, support::finish, support::shape_of};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::builder::is_unsigned;
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

/// The representable range of an integer type, as floats.
fn int_range(t: &Type) -> Option<(f64, f64)> {
    let w = t.int_width()?;
    if w > 32 {
        return None;
    }
    Some(if is_unsigned(t) {
        (0.0, ((1u64 << w) - 1) as f64)
    } else {
        (-((1i64 << (w - 1)) as f64), ((1i64 << (w - 1)) - 1) as f64)
    })
}

/// How a scale/zero-point tensor is indexed from a position of x.
#[derive(Clone, Copy)]
enum ParamIndex {
    Scalar,
    Axis(usize),
    Block(usize, ValueId),
}

/// `axis` and `block_size` are the op's attributes.
fn param_index(
    b: &mut Builder<'_>,
    op: OpId,
    (x, scale): (ValueId, ValueId),
    axis: i64,
    block: i64,
) -> Result<ParamIndex> {
    let rank = shape_of(b.m, x).len();
    let ss = shape_of(b.m, scale);
    if ss.is_empty() || (ss.len() == 1 && block == 0 && ss[0] == 1) {
        return Ok(ParamIndex::Scalar);
    }
    let axis = crate::kernels::support::axis(b.m, op, axis, rank)?;
    Ok(match ss.len() {
        1 if block == 0 => ParamIndex::Axis(axis),
        _ if block > 0 => ParamIndex::Block(axis, b.const_index(block)),
        _ => return Err(op_error(b.m, op, "unsupported scale shape")),
    })
}

/// `x` and `out` (contiguous, of x's dims `dx`) viewed with their dims
/// merged around the parameter's axis: `[before, axis, after]` for a
/// per-axis parameter, one dim for a scalar one. The inner loop then runs
/// over whole contiguous stretches (a 7×7 image's 49 elements, not rows
/// of 7) whether or not the dims are known. Blocked parameters index with
/// every dim and keep them.
fn merged(
    b: &mut Builder<'_>,
    (x, out): (ValueId, ValueId),
    dx: &[ValueId],
    how: ParamIndex,
) -> (ValueId, ValueId, Vec<ValueId>, ParamIndex) {
    // Each merged dim's range of x's dims.
    let groups: Vec<(usize, usize)> = match how {
        ParamIndex::Scalar => vec![(0, dx.len())],
        ParamIndex::Axis(a) => vec![(0, a), (a, a + 1), (a + 1, dx.len())],
        ParamIndex::Block(..) => return (x, out, dx.to_vec(), how),
    };
    // A strided x (a slice) is read where it lies rather than copied.
    if crate::convert::is_strided_view(b.m, x) {
        return (x, out, dx.to_vec(), how);
    }
    let sx = shape_of(b.m, x);
    let merged = crate::kernels::support::views::merged_dims(b, (&sx, dx), &groups);
    let xv = crate::kernels::support::views::merged_view(b, x, &merged);
    let ov = crate::kernels::support::views::merged_view(b, out, &merged);
    let sizes = merged.1;
    let how = match how {
        ParamIndex::Axis(_) => ParamIndex::Axis(1),
        other => other,
    };
    (xv, ov, sizes, how)
}

fn param_at(b: &mut Builder<'_>, p: ValueId, how: ParamIndex, ivs: &[ValueId]) -> ValueId {
    let zero_rank = shape_of(b.m, p).is_empty();
    let idx: Vec<ValueId> = match how {
        ParamIndex::Scalar if zero_rank => vec![],
        ParamIndex::Scalar => vec![b.const_index(0)],
        ParamIndex::Axis(a) => vec![ivs[a]],
        ParamIndex::Block(a, bs) => {
            let mut v = ivs.to_vec();
            v[a] = b.divui(ivs[a], bs);
            v
        }
    };
    b.load(p, &idx)
}

/// `v` (a float) quantized to `out`: for integers
/// `clamp(roundeven(v) + zp)`; for the 8-bit floats a cast (saturating
/// when `saturate`; no zero point); for f4E2M1FN `v + zp` cast
/// (saturating).
fn quantize_to(
    b: &mut Builder<'_>,
    op: OpId,
    v: ValueId,
    zp: Option<ValueId>,
    out: &Type,
    saturate: bool,
) -> Result<ValueId> {
    match out {
        Type::Float(k) if k.bits() == 8 => scalar::cast(b, op, v, out, saturate, "up"),
        // f4E2M1FN: the zero point is added (the ONNX reference).
        Type::Float(_) => {
            let f = b.m.value_type(v).clone();
            let v = match zp {
                Some(z) => {
                    let zf = scalar::convert(b, op, z, &f)?;
                    b.add(v, zf)
                }
                None => v,
            };
            scalar::cast(b, op, v, out, true, "up")
        }
        _ => quantize_value(b, op, v, zp, out),
    }
}

/// `saturate(roundeven(v) + zp)` converted to `out` (v, zp as floats).
pub(crate) fn quantize_value(
    b: &mut Builder<'_>,
    op: OpId,
    v: ValueId,
    zp: Option<ValueId>,
    out: &Type,
) -> Result<ValueId> {
    let f = b.m.value_type(v).clone();
    let r = b.roundeven(v);
    let r = match zp {
        Some(z) => {
            let zf = scalar::convert(b, op, z, &f)?;
            b.add(r, zf)
        }
        None => r,
    };
    let Some((lo, hi)) = int_range(out) else {
        return Err(op_error(b.m, op, format!("cannot quantize to {out}")));
    };
    let (l, h) = (b.constant(&f, lo), b.constant(&f, hi));
    let c = b.max(r, l);
    let c = b.min(c, h);
    scalar::convert(b, op, c, out)
}

pub fn quantize(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::QuantizeLinear::X)?;
    let scale = cx.input(b.m, op, ops::QuantizeLinear::Y_SCALE)?;
    let zp = cx.optional_input(b.m, op, ops::QuantizeLinear::Y_ZERO_POINT)?;
    let out_t = crate::kernels::support::result_memref_type(b.m, op, 0)?
        .element_type()
        .clone();
    // The 8-bit float outputs take no zero point (the ONNX reference).
    let zp = zp.filter(|_| !matches!(out_t, Type::Float(k) if k.bits() == 8));
    let view = ops::QuantizeLinear::of(b.m, op);
    let (saturate, precision) = (view.saturate() != 0, view.precision());
    let how = param_index(b, op, (x, scale), view.axis(), view.block_size())?;
    let div_t = division_type(b, op, (x, scale), precision)?;
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let (xv, ov, dv, how) = merged(b, (x, out), &dx, how);
    let bounds = Bounds::new(b);
    let mut err = None;
    loop_nest(b, &bounds, &dv, &mut |b, ivs| {
        let mut body = || -> Result<ValueId> {
            let v = b.load(xv, ivs);
            let v = scalar::convert(b, op, v, &div_t)?;
            let s = param_at(b, scale, how, ivs);
            let s = scalar::convert(b, op, s, &div_t)?;
            let q = b.div(v, s);
            let z = zp.map(|z| param_at(b, z, how, ivs));
            quantize_to(b, op, q, z, &out_t, saturate)
        };
        match body() {
            Ok(r) => b.store(r, ov, ivs),
            Err(e) => err = Some(e),
        }
    });
    finish(err, vec![out])
}

/// The float type `x / scale` is computed in: `precision` when given (an
/// ONNX dtype code), else the wider of the two (numpy's promotion, which
/// the ONNX reference follows).
fn division_type(
    b: &Builder<'_>,
    op: OpId,
    (x, scale): (ValueId, ValueId),
    precision: i64,
) -> Result<Type> {
    use ir::types::FloatKind as F;
    let k = match precision {
        0 => {
            let (tx, ts) = (elem_of(b.m, x), elem_of(b.m, scale));
            let bits = |t: &Type| {
                if t.is_float() {
                    t.bit_width().unwrap_or(0)
                } else {
                    0
                }
            };
            return Ok(if bits(&ts) > bits(&tx) { ts } else { tx });
        }
        1 => F::F32,
        10 => F::F16,
        11 => F::F64,
        16 => F::BF16,
        other => {
            return Err(op_error(
                b.m,
                op,
                format!("precision {other} is not a float type"),
            ))
        }
    };
    Ok(Type::Float(k))
}

pub fn dequantize(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::DequantizeLinear::X)?;
    let scale = cx.input(b.m, op, ops::DequantizeLinear::X_SCALE)?;
    let zp = cx.optional_input(b.m, op, ops::DequantizeLinear::X_ZERO_POINT)?;
    let out_t = crate::kernels::support::result_memref_type(b.m, op, 0)?
        .element_type()
        .clone();
    // Float inputs (the 8- and 4-bit formats) have no zero point (the
    // ONNX reference ignores it).
    let zp = zp.filter(|_| elem_of(b.m, x).is_int());
    let view = ops::DequantizeLinear::of(b.m, op);
    let how = param_index(b, op, (x, scale), view.axis(), view.block_size())?;
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let (xv, ov, dv, how) = merged(b, (x, out), &dx, how);
    let bounds = Bounds::new(b);
    let mut err = None;
    loop_nest(b, &bounds, &dv, &mut |b, ivs| {
        let mut body = || -> Result<ValueId> {
            let v = b.load(xv, ivs);
            // The difference in f64 (exact for all 32-bit ints and small
            // floats).
            let f = Type::f64();
            let mut d = scalar::convert(b, op, v, &f)?;
            if let Some(z) = zp {
                let zv = param_at(b, z, how, ivs);
                let zf = scalar::convert(b, op, zv, &f)?;
                d = b.sub(d, zf);
            }
            let s = param_at(b, scale, how, ivs);
            let s = scalar::convert(b, op, s, &f)?;
            let r = b.mul(d, s);
            scalar::convert(b, op, r, &out_t)
        };
        match body() {
            Ok(r) => b.store(r, ov, ivs),
            Err(e) => err = Some(e),
        }
    });
    finish(err, vec![out])
}

pub fn dynamic_quantize(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::DynamicQuantizeLinear::X)?;
    let f = elem_of(b.m, x);
    if !f.is_float() {
        return Err(op_error(b.m, op, "expects a floating-point input"));
    }
    let dx = dims(b, x);
    let bounds = Bounds::new(b);
    let zero = b.constant(&f, 0.0);
    let hi = reduce_nest(b, &bounds, &dx, zero, &mut |b, ivs, acc| {
        let v = b.load(x, ivs);
        b.max(acc, v)
    });
    let lo = reduce_nest(b, &bounds, &dx, zero, &mut |b, ivs, acc| {
        let v = b.load(x, ivs);
        b.min(acc, v)
    });
    let range = b.sub(hi, lo);
    let k = b.constant(&f, 255.0);
    let scale = b.div(range, k);
    // All zeros: scale 1, as onnxruntime (the spec's formula gives 0).
    let one = b.constant(&f, 1.0);
    let empty = b.cmpf(ir::builder::CmpF::Oeq, range, zero);
    let scale = b.select(empty, one, scale);
    let u8t = Type::ui(8);
    let neg = b.sub(zero, lo);
    let zq = b.div(neg, scale);
    let zp = quantize_value(b, op, zq, None, &u8t)?;
    let out = alloc_result(b, op, 0, &dx)?;
    let zpf = scalar::convert(b, op, zp, &f)?;
    let mut err = None;
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let v = b.load(x, ivs);
        let q = b.div(v, scale);
        match quantize_value(b, op, q, Some(zpf), &u8t) {
            Ok(r) => b.store(r, out, ivs),
            Err(e) => err = Some(e),
        }
    });
    if let Some(e) = err {
        return Err(e);
    }
    let s_out = alloc_result(b, op, 1, &[])?;
    b.store(scale, s_out, &[]);
    let z_out = alloc_result(b, op, 2, &[])?;
    b.store(zp, z_out, &[]);
    Ok(vec![out, s_out, z_out])
}
