//! QuantizeLinear, DequantizeLinear (per-tensor, per-axis and blocked
//! scales) and DynamicQuantizeLinear.

use super::scalar;
use super::{alloc_result, elem_of, finish, shape_of};
use crate::convert::{dims, Lowering};
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
    let axis = super::axis(b.m, op, axis, rank)?;
    Ok(match ss.len() {
        1 if block == 0 => ParamIndex::Axis(axis),
        _ if block > 0 => ParamIndex::Block(axis, b.const_index(block)),
        _ => return Err(op_error(b.m, op, "unsupported scale shape")),
    })
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

/// `saturate(roundeven(v) + zp)` converted to `out` (v, zp as floats).
fn quantize_value(
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
    let x = cx.input(b.m, op, 0)?;
    let scale = cx.input(b.m, op, 1)?;
    let zp = cx.optional_input(b.m, op, 2)?;
    let out_t = super::result_memref_type(b.m, op, 0)?
        .element_type()
        .clone();
    let view = ops::QuantizeLinear::of(b.m, op);
    let how = param_index(b, op, (x, scale), view.axis(), view.block_size())?;
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let bounds = Bounds::new(b);
    let mut err = None;
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let v = b.load(x, ivs);
        let s = param_at(b, scale, how, ivs);
        // Divide in the wider of the two float types.
        let s = match scalar::convert(b, op, s, &elem_of(b.m, x)) {
            Ok(s) => s,
            Err(e) => return err = Some(e),
        };
        let q = b.div(v, s);
        let z = zp.map(|z| param_at(b, z, how, ivs));
        match quantize_value(b, op, q, z, &out_t) {
            Ok(r) => b.store(r, out, ivs),
            Err(e) => err = Some(e),
        }
    });
    finish(err, vec![out])
}

pub fn dequantize(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let scale = cx.input(b.m, op, 1)?;
    let zp = cx.optional_input(b.m, op, 2)?;
    let out_t = super::result_memref_type(b.m, op, 0)?
        .element_type()
        .clone();
    if !elem_of(b.m, x).is_int() {
        return Err(op_error(b.m, op, "expects an integer input"));
    }
    let view = ops::DequantizeLinear::of(b.m, op);
    let how = param_index(b, op, (x, scale), view.axis(), view.block_size())?;
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let bounds = Bounds::new(b);
    let mut err = None;
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let mut body = || -> Result<ValueId> {
            let v = b.load(x, ivs);
            // The difference in f64 (exact for all 32-bit ints).
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
            Ok(r) => b.store(r, out, ivs),
            Err(e) => err = Some(e),
        }
    });
    finish(err, vec![out])
}

pub fn dynamic_quantize(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
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
