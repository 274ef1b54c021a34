//! Scatter/gather by index tuples and data-dependent shapes: ScatterND,
//! ScatterElements, GatherND, TopK, OneHot, NonZero, and the block moves
//! DepthToSpace/SpaceToDepth.

use crate::convert::{dims, Lowering};
use crate::kernels::support::checks;
use crate::kernels::support::index::wrap;
use crate::kernels::support::index::{from_index, index_at, to_index};
use crate::kernels::support::scalar;
use crate::kernels::{support::alloc_result, support::elem_of, support::shape_of};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::builder::{Cmp, CmpI};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

/// `old ⊕ new` for a scatter `reduction` ("none": `new`).
fn combine(b: &mut Builder<'_>, how: &str, old: ValueId, new: ValueId) -> ValueId {
    match how {
        "add" => b.add(old, new),
        "mul" => b.mul(old, new),
        "max" => b.max(old, new),
        "min" => b.min(old, new),
        _ => new,
    }
}

fn copy_input(cx: &Lowering, b: &mut Builder<'_>, op: OpId) -> Result<(ValueId, ValueId)> {
    let x = cx.input(b.m, op, 0)?;
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    b.copy(x, out);
    Ok((x, out))
}

/// TensorScatter: the cache with `update` written along `axis` from row
/// `write_indices[batch]` on (wrapping around in `circular` mode).
pub fn tensor_scatter(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let (x, out) = copy_input(cx, b, op)?;
    let upd = cx.input(b.m, op, ops::TensorScatter::UPDATE)?;
    let rank = shape_of(b.m, x).len();
    let view = ops::TensorScatter::of(b.m, op);
    let axis = crate::kernels::support::axis(b.m, op, view.axis(), rank)?;
    if axis == 0 || shape_of(b.m, upd).len() != rank {
        return Err(op_error(
            b.m,
            op,
            "TensorScatter needs an update of the cache's rank and a batch dim before axis",
        ));
    }
    let circular = match view.mode() {
        "linear" => false,
        "circular" => true,
        other => return Err(op_error(b.m, op, format!("unknown mode '{other}'"))),
    };
    let starts = cx.optional_input(b.m, op, ops::TensorScatter::WRITE_INDICES)?;
    let dx = dims(b, x);
    let len = dx[axis];
    let du = dims(b, upd);
    crate::kernels::data::gather::within(b, op, ("update", &du), &dx, Some(axis))?;
    let bounds = Bounds::new(b);
    if starts.is_none() && !circular {
        checks::compare(
            b,
            op,
            CmpI::Sle,
            du[axis],
            len,
            "the update is longer than the cache",
        )?;
    }
    if let Some(w) = starts {
        // Every write stays inside the cache (checked once per batch).
        let last = if circular { bounds.one } else { du[axis] };
        let nw = dims(b, w).first().copied().unwrap_or(bounds.zero);
        checks::compare(
            b,
            op,
            CmpI::Sge,
            nw,
            du[0],
            "write_indices is shorter than the batch",
        )?;
        loop_nest(b, &bounds, &[du[0]], &mut |b, i| {
            let v = b.load(w, i);
            let v = to_index(b, v);
            let lo = b.cmpi(CmpI::Sge, v, bounds.zero);
            let end = b.addi(v, last);
            let hi = b.cmpi(CmpI::Sle, end, len);
            let ok = b.andi(lo, hi);
            checks::assert(b, op, ok, "a write index puts the update outside the cache");
        });
    }
    loop_nest(b, &bounds, &du, &mut |b, ivs| {
        let first = match starts {
            Some(w) => {
                let v = b.load(w, &[ivs[0]]);
                to_index(b, v)
            }
            None => bounds.zero,
        };
        let mut row = b.addi(first, ivs[axis]);
        if circular {
            row = b.remsi(row, len);
        }
        let mut oi = ivs.to_vec();
        oi[axis] = row;
        let u = b.load(upd, ivs);
        b.store(u, out, &oi);
    });
    Ok(vec![out])
}

/// Asserts `got` (an operand's dims) equals `want` dim by dim.
fn same_dims(
    b: &mut Builder<'_>,
    op: OpId,
    (name, got): (&str, &[ValueId]),
    want: &[ValueId],
) -> Result<()> {
    if got.len() != want.len() {
        return Err(op_error(b.m, op, "operand ranks do not match"));
    }
    for (k, (&g, &w)) in got.iter().zip(want).enumerate() {
        let msg = format!("{name} dim {k} differs from the expected size");
        checks::equal(b, op, g, w, &msg)?;
    }
    Ok(())
}

/// Scatter (deprecated): ScatterElements without a reduction.
pub fn scatter(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let axis = ops::Scatter::of(b.m, op).axis();
    scatter_along(cx, b, op, axis, "none")
}

pub fn scatter_elements(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let view = ops::ScatterElements::of(b.m, op);
    let (axis, how) = (view.axis(), view.reduction().to_string());
    scatter_along(cx, b, op, axis, &how)
}

/// Each update written at its index along `axis`, combined by `how`.
fn scatter_along(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    axis: i64,
    how: &str,
) -> Result<Vec<ValueId>> {
    let how = how.to_string();
    let (x, out) = copy_input(cx, b, op)?;
    // indices and updates of Scatter and ScatterElements
    let ind = cx.input(b.m, op, ops::ScatterElements::INDICES)?;
    let upd = cx.input(b.m, op, ops::ScatterElements::UPDATES)?;
    let rank = shape_of(b.m, x).len();
    let axis = crate::kernels::support::axis(b.m, op, axis, rank)?;
    let dx = dims(b, x);
    let di = dims(b, ind);
    crate::kernels::data::gather::within(b, op, ("indices", &di), &dx, Some(axis))?;
    let du = dims(b, upd);
    same_dims(b, op, ("updates", &du), &di)?;
    let bounds = Bounds::new(b);
    let msg = checks::range_msg(axis);
    loop_nest(b, &bounds, &di, &mut |b, ivs| {
        let i = b.load(ind, ivs);
        let i = to_index(b, i);
        let i = checks::index(b, op, i, dx[axis], &msg);
        let mut oi = ivs.to_vec();
        oi[axis] = i;
        let u = b.load(upd, ivs);
        let old = b.load(out, &oi);
        let r = combine(b, &how, old, u);
        b.store(r, out, &oi);
    });
    Ok(vec![out])
}

pub fn scatter_nd(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let (x, out) = copy_input(cx, b, op)?;
    let ind = cx.input(b.m, op, ops::ScatterND::INDICES)?;
    let upd = cx.input(b.m, op, ops::ScatterND::UPDATES)?;
    let how = ops::ScatterND::of(b.m, op).reduction().to_string();
    let rank = shape_of(b.m, x).len();
    // updates = indices[:-1] + data[k:]: their ranks give k.
    let (ri, ru) = (shape_of(b.m, ind).len(), shape_of(b.m, upd).len());
    let k = (ri + rank)
        .checked_sub(ru + 1)
        .filter(|&k| ri >= 1 && k <= rank)
        .ok_or_else(|| op_error(b.m, op, "the ranks of data, indices and updates do not fit"))?;
    let dx = dims(b, x);
    let di = dims(b, ind);
    let q = di.len() - 1;
    let kv = b.const_index(k as i64);
    let msg = "the last dim of indices does not fit the ranks of data and updates";
    checks::equal(b, op, di[q], kv, msg)?;
    let mut ubs = di[..q].to_vec();
    ubs.extend_from_slice(&dx[k..]);
    let du = dims(b, upd);
    same_dims(b, op, ("updates", &du), &ubs)?;
    let bounds = Bounds::new(b);
    let msgs: Vec<String> = (0..k).map(checks::range_msg).collect();
    loop_nest(b, &bounds, &ubs, &mut |b, ivs| {
        let mut oi = Vec::with_capacity(rank);
        for (j, (&d, msg)) in dx.iter().zip(&msgs).enumerate() {
            let mut ii = ivs[..q].to_vec();
            ii.push(b.const_index(j as i64));
            let v = b.load(ind, &ii);
            let v = to_index(b, v);
            oi.push(checks::index(b, op, v, d, msg));
        }
        oi.extend_from_slice(&ivs[q..]);
        let u = b.load(upd, ivs);
        let old = b.load(out, &oi);
        let r = combine(b, &how, old, u);
        b.store(r, out, &oi);
    });
    Ok(vec![out])
}

pub fn gather_nd(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::GatherND::DATA)?;
    let ind = cx.input(b.m, op, ops::GatherND::INDICES)?;
    let nb = usize::try_from(ops::GatherND::of(b.m, op).batch_dims()).unwrap_or(usize::MAX);
    let ri = shape_of(b.m, ind).len();
    let rank = shape_of(b.m, x).len();
    let what = "the last dim of indices";
    let ro = crate::kernels::support::ranked_result(b.m, op, 0, what)?.len();
    // result = indices[:-1] + data[batch_dims + k:]: the ranks give k.
    let k = (ri + rank)
        .checked_sub(nb.saturating_add(ro).saturating_add(1))
        .filter(|&k| nb < ri && nb + k <= rank)
        .ok_or_else(|| {
            op_error(
                b.m,
                op,
                "the ranks of data, indices and the result do not fit",
            )
        })?;
    let dx = dims(b, x);
    let di = dims(b, ind);
    let q = di.len() - 1;
    let kv = b.const_index(k as i64);
    let msg = "the last dim of indices does not fit the ranks of data and the result";
    checks::equal(b, op, di[q], kv, msg)?;
    let mut out_dims = di[..q].to_vec();
    out_dims.extend_from_slice(&dx[nb + k..]);
    same_dims(b, op, ("indices", &di[..nb]), &dx[..nb])?;
    let out = alloc_result(b, op, 0, &out_dims)?;
    let bounds = Bounds::new(b);
    let msgs: Vec<String> = (nb..nb + k).map(checks::range_msg).collect();
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        let mut xi = ivs[..nb].to_vec();
        for (j, msg) in msgs.iter().enumerate() {
            let mut ii = ivs[..q].to_vec();
            ii.push(b.const_index(j as i64));
            let v = b.load(ind, &ii);
            let v = to_index(b, v);
            xi.push(checks::index(b, op, v, dx[nb + j], msg));
        }
        xi.extend_from_slice(&ivs[q..]);
        let v = b.load(x, &xi);
        b.store(v, out, ivs);
    });
    Ok(vec![out])
}

/// TopK by repeated selection: round r takes the best element not yet
/// taken (ties: the lower index), so the output is sorted.
pub fn topk(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::TopK::X)?;
    let kv = cx.input(b.m, op, ops::TopK::K)?;
    let rank = shape_of(b.m, x).len();
    let view = ops::TopK::of(b.m, op);
    let axis = crate::kernels::support::axis(b.m, op, view.axis(), rank)?;
    let largest = view.largest() != 0;
    let dx = dims(b, x);
    let kr = shape_of(b.m, kv).len();
    let k = index_at(b, kv, (kr == 1).then_some(0));
    checks::non_negative(b, op, k, "k is negative")?;
    checks::compare(b, op, CmpI::Sle, k, dx[axis], "k exceeds the axis dim")?;
    let mut od = dx.clone();
    od[axis] = k;
    let vals = alloc_result(b, op, 0, &od)?;
    let idxs = alloc_result(b, op, 1, &od)?;
    let n = dx[axis];
    let taken = crate::convert::alloc(b, &Type::memref(vec![ir::DYN], Type::i1()), &[n]);
    let bounds = Bounds::new(b);
    let mut outer = dx.clone();
    outer[axis] = bounds.one;
    let elem = elem_of(b.m, x);
    let rel = if largest { Cmp::Gt } else { Cmp::Lt };
    loop_nest(b, &bounds, &outer, &mut |b, ovs| {
        let fals = b.const_bool(false);
        loop_nest(b, &bounds, &[n], &mut |b, i| b.store(fals, taken, i));
        loop_nest(b, &bounds, &[k], &mut |b, r| {
            let none = b.const_index(-1);
            let first = scalar::lowest(b, &elem);
            let l = b.scf_for(bounds.zero, n, bounds.one, &[first, none], |b, i, acc| {
                let mut xi = ovs.to_vec();
                xi[axis] = i;
                let v = b.load(x, &xi);
                let t = b.load(taken, &[i]);
                let better = b.cmp(rel, v, acc[0]);
                let unset = b.cmpi(CmpI::Eq, acc[1], none);
                let c = b.ori(better, unset);
                let tr = b.const_bool(true);
                let free = b.xori(t, tr);
                let c = b.andi(c, free);
                let bv = b.select(c, v, acc[0]);
                let bi = b.select(c, i, acc[1]);
                vec![bv, bi]
            });
            let res = b.m.results(l).to_vec();
            let tr = b.const_bool(true);
            b.store(tr, taken, &[res[1]]);
            let mut oi = ovs.to_vec();
            oi[axis] = r[0];
            b.store(res[0], vals, &oi);
            let i64v = from_index(b, res[1], &Type::i64());
            b.store(i64v, idxs, &oi);
        });
    });
    Ok(vec![vals, idxs])
}

pub fn one_hot(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let ind = cx.input(b.m, op, ops::OneHot::INDICES)?;
    let depth = cx.input(b.m, op, ops::OneHot::DEPTH)?;
    let values = cx.input(b.m, op, ops::OneHot::VALUES)?;
    let r = shape_of(b.m, ind).len();
    let axis = crate::kernels::support::axis(b.m, op, ops::OneHot::of(b.m, op).axis(), r + 1)?;
    let di = dims(b, ind);
    let dr = shape_of(b.m, depth).len();
    let d = index_at(b, depth, (dr == 1).then_some(0));
    checks::non_negative(b, op, d, "depth is negative")?;
    let mut od = di.clone();
    od.insert(axis, d);
    let out = alloc_result(b, op, 0, &od)?;
    let bounds = Bounds::new(b);
    let off_i = bounds.zero;
    let on_i = bounds.one;
    let off = b.load(values, &[off_i]);
    let on = b.load(values, &[on_i]);
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let mut ii = ivs.to_vec();
        let j = ii.remove(axis);
        let v = b.load(ind, &ii);
        let v = to_index(b, v);
        let v = wrap(b, v, d, bounds.zero);
        let hit = b.cmpi(CmpI::Eq, v, j);
        let r = b.select(hit, on, off);
        b.store(r, out, ivs);
    });
    Ok(vec![out])
}

/// NonZero: count first, allocate `[rank, count]`, then fill.
pub fn non_zero(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::NonZero::X)?;
    let dx = dims(b, x);
    let rank = dx.len();
    let elem = elem_of(b.m, x);
    let bounds = Bounds::new(b);
    let nz = |b: &mut Builder<'_>, ivs: &[ValueId]| {
        let v = b.load(x, ivs);
        let zero = if elem == Type::i1() {
            b.const_bool(false)
        } else {
            b.constant(&elem, 0.0)
        };
        b.cmp(Cmp::Ne, v, zero)
    };
    let count = reduce_nest(b, &bounds, &dx, bounds.zero, &mut |b, ivs, acc| {
        let c = nz(b, ivs);
        let inc = b.addi(acc, bounds.one);
        b.select(c, inc, acc)
    });
    let rv = b.const_index(rank as i64);
    let out = alloc_result(b, op, 0, &[rv, count])?;
    reduce_nest(b, &bounds, &dx, bounds.zero, &mut |b, ivs, acc| {
        let c = nz(b, ivs);
        let ivs = ivs.to_vec();
        b.scf_if(
            c,
            &[],
            &mut |inner| {
                for (d, &iv) in ivs.iter().enumerate() {
                    let v = from_index(inner, iv, &Type::i64());
                    let dv = inner.const_index(d as i64);
                    inner.store(v, out, &[dv, acc]);
                }
                Vec::new()
            },
            None,
        );
        let inc = b.addi(acc, bounds.one);
        b.select(c, inc, acc)
    });
    Ok(vec![out])
}

pub fn depth_to_space(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let view = ops::DepthToSpace::of(b.m, op);
    let crd = view.mode() == "CRD";
    move_blocks(cx, b, op, true, view.blocksize(), crd)
}

pub fn space_to_depth(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let view = ops::SpaceToDepth::of(b.m, op);
    let crd = view.mode() == "CRD";
    move_blocks(cx, b, op, false, view.blocksize(), crd)
}

/// DepthToSpace (`to_space`) or SpaceToDepth with `bs`×`bs` blocks, the
/// channel split column-row-depth (`crd`) or depth-column-row.
fn move_blocks(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    to_space: bool,
    bs: i64,
    crd: bool,
) -> Result<Vec<ValueId>> {
    // input of DepthToSpace and SpaceToDepth
    let x = cx.input(b.m, op, ops::DepthToSpace::INPUT)?;
    let dx = dims(b, x);
    if dx.len() != 4 || bs < 1 {
        return Err(op_error(b.m, op, "expects a 4-D input and blocksize >= 1"));
    }
    let bv = b.const_index(bs);
    let bb = b.const_index(bs * bs);
    let od: Vec<ValueId> = if to_space {
        let c = b.divui(dx[1], bb);
        let h = b.muli(dx[2], bv);
        let w = b.muli(dx[3], bv);
        vec![dx[0], c, h, w]
    } else {
        let c = b.muli(dx[1], bb);
        let h = b.divui(dx[2], bv);
        let w = b.divui(dx[3], bv);
        vec![dx[0], c, h, w]
    };
    let out = alloc_result(b, op, 0, &od)?;
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let (n, c, h, w) = (ivs[0], ivs[1], ivs[2], ivs[3]);
        let xi = if to_space {
            let bh = b.remui(h, bv);
            let bw = b.remui(w, bv);
            let ih = b.divui(h, bv);
            let iw = b.divui(w, bv);
            let blk = b.muli(bh, bv);
            let blk = b.addi(blk, bw);
            let ic = if crd {
                let cb = b.muli(c, bb);
                b.addi(cb, blk)
            } else {
                let bc = b.muli(blk, od[1]);
                b.addi(bc, c)
            };
            vec![n, ic, ih, iw]
        } else {
            let (cin, off) = if crd {
                (b.divui(c, bb), b.remui(c, bb))
            } else {
                (b.remui(c, dx[1]), b.divui(c, dx[1]))
            };
            let bh = b.divui(off, bv);
            let bw = b.remui(off, bv);
            let hh = b.muli(h, bv);
            let ih = b.addi(hh, bh);
            let ww = b.muli(w, bv);
            let iw = b.addi(ww, bw);
            vec![n, cin, ih, iw]
        };
        let v = b.load(x, &xi);
        b.store(v, out, ivs);
    });
    Ok(vec![out])
}
