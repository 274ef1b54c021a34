//! MatMulInteger and ConvInteger: 8-bit operands minus their zero points,
//! accumulated in i32.

use super::scalar;
use super::window::Spatial;
use super::{alloc_result, finish, shape_of};
use crate::convert::{dims, Lowering};
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
    let rank = super::result_memref_type(b.m, op, 0)?
        .shape()
        .map_or(0, <[i64]>::len);
    let mut od = Vec::with_capacity(rank);
    for j in 0..rank - 2 {
        let one = b.const_index(1);
        let x = (j + ra).checked_sub(rank).map_or(one, |k| da[k]);
        let y = (j + rb).checked_sub(rank).map_or(one, |k| db[k]);
        od.push(b.maxsi(x, y));
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
    let a = cx.input(b.m, op, 0)?;
    let bm = cx.input(b.m, op, 1)?;
    let (az, bz) = (
        cx.optional_input(b.m, op, 2)?,
        cx.optional_input(b.m, op, 3)?,
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
    let x = cx.input(b.m, op, 0)?;
    let w = cx.input(b.m, op, 1)?;
    let (xz, wz) = (
        cx.optional_input(b.m, op, 2)?,
        cx.optional_input(b.m, op, 3)?,
    );
    let (dx, dw) = (dims(b, x), dims(b, w));
    let sp = dx.len().saturating_sub(2);
    if sp == 0 || dw.len() != dx.len() {
        return Err(op_error(b.m, op, "x and w must have the same rank >= 3"));
    }
    let attrs = ops::ConvInteger::of(b.m, op);
    if attrs.group() != 1 {
        return Err(op_error(b.m, op, "grouped ConvInteger is not supported"));
    }
    // The kernel's extents: kernel_shape, else w's (runtime) dims.
    let given = attrs.kernel_shape().filter(|k| k.len() == sp);
    let kernel = given.clone().unwrap_or_else(|| vec![ir::DYN; sp]);
    let win = Spatial::new(b.m, op, kernel, attrs.into())?;
    let ks: Vec<ValueId> = match given {
        Some(k) => k.iter().map(|&k| b.const_index(k)).collect(),
        None => dw[2..].to_vec(),
    };
    let msg = "the input's channels differ from the weight's";
    super::checks::equal(b, op, dx[1], dw[1], msg)?;
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
        let s = reduce_nest(b, &bounds, &red, zero, &mut |b, r, acc| {
            let (pos, inside) = win.input_indices(b, &place, &ivs[2..], &r[1..]);
            let mut xi = vec![ivs[0], r[0]];
            xi.extend(pos);
            let mut wi = vec![ivs[1]];
            wi.extend_from_slice(r);
            let xv = b.load(x, &xi);
            let wv = b.load(w, &wi);
            let (xc, wc) = match (
                centered(b, op, xv, xz, r[0]),
                centered(b, op, wv, wz, ivs[1]),
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
        b.store(s, out, ivs);
    });
    finish(err, vec![out])
}
