//! MatMulInteger and ConvInteger: 8-bit operands minus their zero points,
//! accumulated in i32.

use crate::convert::{dims, Lowering};
use crate::kernels::convolution::window::Spatial;
use crate::kernels::support::scalar;
use crate::kernels::{support::alloc_result, support::finish, support::shape_of};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::{ops, OpKind};

/// `v - zp` widened to i32; `zp` indexed by `zi` (scalar when empty).
fn centered(
    b: &mut Builder<'_>,
    op: OpId,
    v: ValueId,
    zp: Option<ValueId>,
    zi: ValueId,
) -> Result<ValueId> {
    let i32t = Type::i(32);
    let w = scalar::convert(b, op, v, &i32t)?;
    let Some(z) = zp else { return Ok(w) };
    let zs = shape_of(b.m, z);
    let idx: Vec<ValueId> = match zs.as_slice() {
        [] => vec![],
        [1] => vec![b.const_index(0)],
        _ => vec![zi],
    };
    let zv = b.load(z, &idx);
    let zw = scalar::convert(b, op, zv, &i32t)?;
    Ok(b.sub(w, zw))
}

/// One product's addend of a batched dot: (builder, a value, b value, row
/// index, column index).
pub type DotTerm<'a> =
    dyn FnMut(&mut Builder<'_>, ValueId, ValueId, ValueId, ValueId) -> Result<ValueId> + 'a;
/// Stores one finished sum: (builder, sum, output buffer, output index,
/// the first error).
pub type DotStore<'a> =
    dyn FnMut(&mut Builder<'_>, ValueId, ValueId, &[ValueId], &mut Option<ir::Diagnostic>) + 'a;

/// A batched `[.., M, K] x [.., K, N]` matmul as a scalar loop nest (the
/// quantized ones, which the GEMM kernels do not cover): batch dims
/// broadcast from the right, a size-1 batch dim reads index 0; each output
/// sums `term` over K from `zero` and hands the sum to `store`.
pub fn batched_dot(
    b: &mut Builder<'_>,
    op: OpId,
    (a, bm): (ValueId, ValueId),
    zero: ValueId,
    term: &mut DotTerm<'_>,
    store: &mut DotStore<'_>,
) -> Result<Vec<ValueId>> {
    let (sa, sb) = (shape_of(b.m, a), shape_of(b.m, bm));
    let (ra, rb) = (sa.len(), sb.len());
    if ra < 2 || rb < 2 {
        let name = OpKind::of(b.m, op).map_or("the op", OpKind::name);
        return Err(op_error(
            b.m,
            op,
            format!("{name} needs operands of rank >= 2"),
        ));
    }
    let (da, db) = (dims(b, a), dims(b, bm));
    let rank = crate::kernels::support::result_memref_type(b.m, op, 0)?
        .shape()
        .map_or(0, <[i64]>::len);
    let mut od = Vec::with_capacity(rank);
    for j in 0..rank - 2 {
        let one = b.const_index(1);
        let x = (j + ra).checked_sub(rank).map_or(one, |k| da[k]);
        let y = (j + rb).checked_sub(rank).map_or(one, |k| db[k]);
        od.push(crate::kernels::support::checks::broadcast_dim(b, &[(0, x), (1, y)]).0);
    }
    od.push(da[ra - 2]);
    od.push(db[rb - 1]);
    let out = alloc_result(b, op, 0, &od)?;
    let bounds = Bounds::new(b);
    let k = da[ra - 1];
    let mut err = None;
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let batch = |s: &[i64], r: usize| -> Vec<ValueId> {
            (0..r - 2)
                .map(|q| {
                    if s[q] == 1 {
                        bounds.zero
                    } else {
                        ivs[q + rank - r]
                    }
                })
                .collect()
        };
        let (ba, bb) = (batch(&sa, ra), batch(&sb, rb));
        let (i, jn) = (ivs[rank - 2], ivs[rank - 1]);
        let s = reduce_nest(b, &bounds, &[k], zero, &mut |b, kk, acc| {
            let mut ai = ba.clone();
            ai.extend([i, kk[0]]);
            let mut bi = bb.clone();
            bi.extend([kk[0], jn]);
            let av = b.load(a, &ai);
            let bv = b.load(bm, &bi);
            match term(b, av, bv, i, jn) {
                Ok(p) => b.add(acc, p),
                Err(e) => {
                    err = Some(e);
                    acc
                }
            }
        });
        store(b, s, out, ivs, &mut err);
    });
    finish(err, vec![out])
}

pub fn matmul_integer(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    if let Some(r) = crate::kernels::quantized::qgemm::ops::matmul_integer(cx, b, op)? {
        return Ok(r);
    }
    let a = cx.input(b.m, op, ops::MatMulInteger::A)?;
    let bm = cx.input(b.m, op, ops::MatMulInteger::B)?;
    let (az, bz) = (
        cx.optional_input(b.m, op, ops::MatMulInteger::A_ZERO_POINT)?,
        cx.optional_input(b.m, op, ops::MatMulInteger::B_ZERO_POINT)?,
    );
    let zero = b.const_int(0, Type::i(32));
    batched_dot(
        b,
        op,
        (a, bm),
        zero,
        &mut |b, av, bv, i, j| {
            let x = centered(b, op, av, az, i)?;
            let y = centered(b, op, bv, bz, j)?;
            Ok(b.mul(x, y))
        },
        &mut |b, s, out, ivs, _| b.store(s, out, ivs),
    )
}

pub fn conv_integer(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    if let Some(r) = crate::kernels::quantized::qgemm::conv::conv_integer(cx, b, op)? {
        return Ok(r);
    }
    let o = IntConv {
        x: cx.input(b.m, op, ops::ConvInteger::X)?,
        w: cx.input(b.m, op, ops::ConvInteger::W)?,
        xz: cx.optional_input(b.m, op, ops::ConvInteger::X_ZERO_POINT)?,
        wz: cx.optional_input(b.m, op, ops::ConvInteger::W_ZERO_POINT)?,
    };
    let a = ops::ConvInteger::of(b.m, op);
    let (group, given) = (a.group(), a.kernel_shape());
    let win = window(b.m, op, o.x, given.clone(), a.into())?;
    integer_conv_nest(b, op, &o, (win, given, group), &mut |b, s, out, ivs| {
        b.store(s, out, ivs);
        Ok(())
    })
}

/// The operands of an integer convolution's loop nest.
struct IntConv {
    x: ValueId,
    w: ValueId,
    xz: Option<ValueId>,
    wz: Option<ValueId>,
}

/// The window of a conv whose kernel extents are `kernel_shape`, else the
/// weight's (runtime) dims.
fn window(
    m: &ir::Module,
    op: OpId,
    x: ValueId,
    given: Option<Vec<i64>>,
    attrs: crate::kernels::convolution::window::WindowAttrs<'_>,
) -> Result<Spatial> {
    let sp = shape_of(m, x).len().saturating_sub(2);
    let kernel = given
        .filter(|k| k.len() == sp)
        .unwrap_or_else(|| vec![ir::DYN; sp]);
    Spatial::new(m, op, kernel, attrs)
}

/// Stores one output element: (builder, i32 sum, output, indices).
type ConvStore<'a> = dyn FnMut(&mut Builder<'_>, ValueId, ValueId, &[ValueId]) -> Result<()> + 'a;

/// `Σ (x - xz)(w - wz)` in i32 per output element as a scalar loop nest
/// (weights that are not constant, which the int8 kernel needs), groups
/// included; `store` writes each sum.
fn integer_conv_nest(
    b: &mut Builder<'_>,
    op: OpId,
    o: &IntConv,
    (win, given, group): (Spatial, Option<Vec<i64>>, i64),
    store: &mut ConvStore<'_>,
) -> Result<Vec<ValueId>> {
    let (dx, dw) = (dims(b, o.x), dims(b, o.w));
    let sp = dx.len().saturating_sub(2);
    if sp == 0 || dw.len() != dx.len() || group < 1 {
        return Err(op_error(b.m, op, "x and w must have the same rank >= 3"));
    }
    let ks: Vec<ValueId> = match given.filter(|k| k.len() == sp) {
        Some(k) => k.iter().map(|&k| b.const_index(k)).collect(),
        None => dw[2..].to_vec(),
    };
    let groups = b.const_index(group);
    let channels = b.muli(dw[1], groups);
    let msg = "the input's channels differ from the weight's";
    crate::kernels::support::checks::equal(b, op, dx[1], channels, msg)?;
    let per_group = b.divui(dw[0], groups);
    let place = win.placement(b, &dx[2..], Some(&ks));
    let mut od = vec![dx[0], dw[0]];
    od.extend(&place.outs);
    let out = alloc_result(b, op, 0, &od)?;
    let bounds = Bounds::new(b);
    let mut red = vec![dw[1]];
    red.extend_from_slice(&ks);
    let mut err = None;
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let zero = b.const_int(0, Type::i(32));
        let g = b.divui(ivs[1], per_group);
        let first = b.muli(g, dw[1]);
        let s = reduce_nest(b, &bounds, &red, zero, &mut |b, r, acc| {
            let (pos, inside) = win.input_indices(b, &place, &ivs[2..], &r[1..]);
            let c = b.addi(first, r[0]);
            let mut xi = vec![ivs[0], c];
            xi.extend(pos);
            let mut wi = vec![ivs[1]];
            wi.extend_from_slice(r);
            let xv = b.load(o.x, &xi);
            let wv = b.load(o.w, &wi);
            let (xc, wc) = match (
                centered(b, op, xv, o.xz, c),
                centered(b, op, wv, o.wz, ivs[1]),
            ) {
                (Ok(x), Ok(y)) => (x, y),
                (Err(e), _) | (_, Err(e)) => {
                    err = Some(e);
                    return acc;
                }
            };
            let p = b.mul(xc, wc);
            let sum = b.add(acc, p);
            b.select(inside, sum, acc)
        });
        if let Err(e) = store(b, s, out, ivs) {
            err = Some(e);
        }
    });
    finish(err, vec![out])
}

/// QLinearConv: the int8 convolution kernel for constant 8-bit weights,
/// else the loop nest, requantized per output channel.
pub fn qlinear_conv(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    if let Some(r) = crate::kernels::quantized::qgemm::conv::qlinear_conv(cx, b, op)? {
        return Ok(r);
    }
    let ins: Vec<Option<ValueId>> = (0..9)
        .map(|i| cx.optional_input(b.m, op, i))
        .collect::<Result<_>>()?;
    let need = |i: usize| ins[i].ok_or_else(|| op_error(b.m, op, format!("missing input {i}")));
    let o = IntConv {
        x: need(ops::QLinearConv::X)?,
        w: need(ops::QLinearConv::W)?,
        xz: ins[ops::QLinearConv::X_ZERO_POINT],
        wz: ins[ops::QLinearConv::W_ZERO_POINT],
    };
    let (xs, ws, ys, yz) = (
        need(ops::QLinearConv::X_SCALE)?,
        need(ops::QLinearConv::W_SCALE)?,
        need(ops::QLinearConv::Y_SCALE)?,
        need(ops::QLinearConv::Y_ZERO_POINT)?,
    );
    let elem = crate::kernels::support::result_memref_type(b.m, op, 0)?
        .element_type()
        .clone();
    let a = ops::QLinearConv::of(b.m, op);
    let (group, given) = (a.group(), a.kernel_shape());
    let win = window(b.m, op, o.x, given.clone(), a.into())?;
    let f = Type::f32();
    let x_scale = crate::kernels::support::scalar_at(b, op, xs, None, &f)?;
    let y_scale = crate::kernels::support::scalar_at(b, op, ys, None, &f)?;
    let y_zero = crate::kernels::support::scalar_at(b, op, yz, None, &f)?;
    let bias = ins[ops::QLinearConv::B];
    integer_conv_nest(b, op, &o, (win, given, group), &mut |b, s, out, ivs| {
        let s = match bias {
            Some(bias) => {
                let x = b.load(bias, &[ivs[1]]);
                b.addi(s, x)
            }
            None => s,
        };
        let w_scale = crate::kernels::support::scalar_at(b, op, ws, Some(ivs[1]), &f)?;
        let scale = b.mulf(x_scale, w_scale);
        let scale = b.divf(scale, y_scale);
        let v = b.sitofp(s, f.clone());
        let v = b.mulf(v, scale);
        let v = crate::kernels::quantized::linear::quantize_value(b, op, v, Some(y_zero), &elem)?;
        b.store(v, out, ivs);
        Ok(())
    })
}
