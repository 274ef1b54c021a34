//! MatMulInteger and ConvInteger: 8-bit operands minus their zero points,
//! accumulated in i32.

use super::scalar;
use super::window::Window;
use super::{alloc_result, attr_int, finish, load_at, shape_of, store_at};
use crate::convert::{dims, Lowering};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};

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
    let zv = load_at(b, z, &idx);
    let zw = scalar::convert(b, op, zv, &i32t)?;
    Ok(scalar::sub(b, w, zw))
}

pub fn matmul_integer(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let a = cx.input(b.m, op, 0)?;
    let bm = cx.input(b.m, op, 1)?;
    let (az, bz) = (
        cx.optional_input(b.m, op, 2)?,
        cx.optional_input(b.m, op, 3)?,
    );
    let (ra, rb) = (shape_of(b.m, a).len(), shape_of(b.m, bm).len());
    if ra < 2 || rb < 2 {
        return Err(op_error(
            b.m,
            op,
            "MatMulInteger needs operands of rank >= 2",
        ));
    }
    let (da, db) = (dims(b, a), dims(b, bm));
    let out_ty = super::result_memref_type(b.m, op, 0)?;
    let rank = out_ty.shape().map_or(0, <[i64]>::len);
    // Batch dims broadcast from the right; a size-1 batch dim reads index 0.
    let mut od = Vec::with_capacity(rank);
    for j in 0..rank - 2 {
        let pick = |d: &[ValueId], r: usize, b: &mut Builder<'_>| {
            (j + r)
                .checked_sub(rank)
                .map_or_else(|| b.const_index(1), |k| d[k])
        };
        let x = pick(&da, ra, b);
        let y = pick(&db, rb, b);
        od.push(b.same("arith.maxsi", &[x, y]));
    }
    od.push(da[ra - 2]);
    od.push(db[rb - 1]);
    let out = alloc_result(b, op, 0, &od)?;
    let bounds = Bounds::new(b);
    let k = da[ra - 1];
    let (sa, sb) = (shape_of(b.m, a), shape_of(b.m, bm));
    let mut err = None;
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let batch = |s: &[i64], r: usize| -> Vec<ValueId> {
            (0..r - 2)
                .map(|q| {
                    let j = q + rank - r;
                    if s[q] == 1 {
                        bounds.zero
                    } else {
                        ivs[j]
                    }
                })
                .collect()
        };
        let (ba, bb) = (batch(&sa, ra), batch(&sb, rb));
        let (i, jn) = (ivs[rank - 2], ivs[rank - 1]);
        let zero = b.const_int(0, Type::i(32));
        let s = reduce_nest(b, &bounds, &[k], zero, &mut |b, kk, acc| {
            let mut ai = ba.clone();
            ai.extend([i, kk[0]]);
            let mut bi = bb.clone();
            bi.extend([kk[0], jn]);
            let av = load_at(b, a, &ai);
            let bv = load_at(b, bm, &bi);
            let (x, y) = match (centered(b, op, av, az, i), centered(b, op, bv, bz, jn)) {
                (Ok(x), Ok(y)) => (x, y),
                (Err(e), _) | (_, Err(e)) => {
                    err = Some(e);
                    return acc;
                }
            };
            let p = scalar::mul(b, x, y);
            scalar::add(b, acc, p)
        });
        store_at(b, s, out, ivs);
    });
    finish(err, vec![out])
}

pub fn conv_integer(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let w = cx.input(b.m, op, 1)?;
    let (xz, wz) = (
        cx.optional_input(b.m, op, 2)?,
        cx.optional_input(b.m, op, 3)?,
    );
    let xs = shape_of(b.m, x);
    let ws = shape_of(b.m, w);
    let os = super::result_memref_type(b.m, op, 0)?
        .shape()
        .map(<[i64]>::to_vec)
        .unwrap_or_default();
    let sp = xs.len().saturating_sub(2);
    if sp == 0
        || ws.len() != xs.len()
        || os.len() != xs.len()
        || os.iter().chain(&ws).any(|&d| d < 0)
    {
        return Err(op_error(b.m, op, "ConvInteger needs static shapes"));
    }
    if attr_int(b.m, op, "group", 1) != 1 {
        return Err(op_error(b.m, op, "grouped ConvInteger is not supported"));
    }
    let win = Window::new(b.m, op, ws[2..].to_vec(), &xs, &os)?;
    let dx = dims(b, x);
    let od: Vec<ValueId> = os.iter().map(|&d| b.const_index(d)).collect();
    let out = alloc_result(b, op, 0, &od)?;
    let bounds = Bounds::new(b);
    let mut red = vec![b.const_index(ws[1])];
    red.extend(ws[2..].iter().map(|&k| b.const_index(k)));
    let mut err = None;
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let zero = b.const_int(0, Type::i(32));
        let s = reduce_nest(b, &bounds, &red, zero, &mut |b, r, acc| {
            let (pos, inside) = win.input_indices(b, &ivs[2..], &r[1..], &dx[2..], bounds.zero);
            let mut xi = vec![ivs[0], r[0]];
            xi.extend(pos);
            let mut wi = vec![ivs[1]];
            wi.extend_from_slice(r);
            let xv = load_at(b, x, &xi);
            let wv = load_at(b, w, &wi);
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
            let p = scalar::mul(b, xc, wc);
            let sum = scalar::add(b, acc, p);
            scalar::select(b, inside, sum, acc)
        });
        store_at(b, s, out, ivs);
    });
    finish(err, vec![out])
}
