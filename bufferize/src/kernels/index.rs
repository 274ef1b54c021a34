//! Scatter/gather by index tuples and data-dependent shapes: ScatterND,
//! ScatterElements, GatherND, TopK, OneHot, NonZero, and the block moves
//! DepthToSpace/SpaceToDepth.

use super::build::{from_index, index_at, to_index};
use super::checks;
use super::gather::wrap;
use super::reduce::normalize_axis;
use super::scalar;
use super::{alloc_result, attr_int, attr_str, elem_of, load_at, shape_of, store_at};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, reduce_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};

/// `old ⊕ new` for a scatter `reduction`.
fn combine(b: &mut Builder<'_>, how: &str, old: ValueId, new: ValueId) -> ValueId {
    match how {
        "add" => scalar::add(b, old, new),
        "mul" => scalar::mul(b, old, new),
        "max" => scalar::max(b, old, new),
        "min" => scalar::min(b, old, new),
        _ => new,
    }
}

fn copy_input(cx: &Lowering, b: &mut Builder<'_>, op: OpId) -> Result<(ValueId, ValueId)> {
    let x = cx.input(b.m, op, 0)?;
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    b.op("memref.copy", &[x, out], &[], &[]);
    Ok((x, out))
}

/// TensorScatter: the cache with `update` written along `axis` from row
/// `write_indices[batch]` on (wrapping around in `circular` mode).
pub fn tensor_scatter(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let (x, out) = copy_input(cx, b, op)?;
    let upd = cx.input(b.m, op, 1)?;
    let rank = shape_of(b.m, x).len();
    let axis = normalize_axis(b, op, attr_int(b.m, op, "axis", -2), rank)?;
    if axis == 0 || shape_of(b.m, upd).len() != rank {
        return Err(op_error(
            b.m,
            op,
            "TensorScatter needs an update of the cache's rank and a batch dim before axis",
        ));
    }
    let circular = match attr_str(b.m, op, "mode").unwrap_or("linear") {
        "linear" => false,
        "circular" => true,
        other => return Err(op_error(b.m, op, format!("unknown mode '{other}'"))),
    };
    let starts = cx.optional_input(b.m, op, 2)?;
    let dx = dims(b, x);
    let len = dx[axis];
    let du = dims(b, upd);
    super::gather::within(b, op, ("update", &du), &dx, Some(axis))?;
    let bounds = Bounds::new(b);
    if starts.is_none() && !circular {
        checks::compare(
            b,
            op,
            "sle",
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
            "sge",
            nw,
            du[0],
            "write_indices is shorter than the batch",
        )?;
        loop_nest(b, &bounds, &[du[0]], &mut |b, i| {
            let v = load_at(b, w, i);
            let v = to_index(b, v);
            let lo = loops::cmp(b, "sge", v, bounds.zero);
            let end = loops::add(b, v, last);
            let hi = loops::cmp(b, "sle", end, len);
            let ok = loops::and(b, lo, hi);
            checks::assert(b, op, ok, "a write index puts the update outside the cache");
        });
    }
    loop_nest(b, &bounds, &du, &mut |b, ivs| {
        let first = match starts {
            Some(w) => {
                let v = load_at(b, w, &[ivs[0]]);
                to_index(b, v)
            }
            None => bounds.zero,
        };
        let mut row = loops::add(b, first, ivs[axis]);
        if circular {
            row = b.same("arith.remsi", &[row, len]);
        }
        let mut oi = ivs.to_vec();
        oi[axis] = row;
        let u = load_at(b, upd, ivs);
        store_at(b, u, out, &oi);
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

pub fn scatter_elements(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let (x, out) = copy_input(cx, b, op)?;
    let ind = cx.input(b.m, op, 1)?;
    let upd = cx.input(b.m, op, 2)?;
    let rank = shape_of(b.m, x).len();
    let axis = normalize_axis(b, op, attr_int(b.m, op, "axis", 0), rank)?;
    let how = attr_str(b.m, op, "reduction").unwrap_or("none").to_string();
    let dx = dims(b, x);
    let di = dims(b, ind);
    super::gather::within(b, op, ("indices", &di), &dx, Some(axis))?;
    let du = dims(b, upd);
    same_dims(b, op, ("updates", &du), &di)?;
    let bounds = Bounds::new(b);
    let msg = checks::range_msg(axis);
    loop_nest(b, &bounds, &di, &mut |b, ivs| {
        let i = load_at(b, ind, ivs);
        let i = to_index(b, i);
        let i = checks::index(b, op, i, dx[axis], &msg);
        let mut oi = ivs.to_vec();
        oi[axis] = i;
        let u = load_at(b, upd, ivs);
        let old = load_at(b, out, &oi);
        let r = combine(b, &how, old, u);
        store_at(b, r, out, &oi);
    });
    Ok(vec![out])
}

pub fn scatter_nd(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let (x, out) = copy_input(cx, b, op)?;
    let ind = cx.input(b.m, op, 1)?;
    let upd = cx.input(b.m, op, 2)?;
    let how = attr_str(b.m, op, "reduction").unwrap_or("none").to_string();
    let si = shape_of(b.m, ind);
    let k = si.last().copied().unwrap_or(-1);
    let rank = shape_of(b.m, x).len();
    if k < 0 || k as usize > rank {
        return Err(op_error(b.m, op, "needs indices with a static last dim"));
    }
    let k = k as usize;
    let dx = dims(b, x);
    let di = dims(b, ind);
    let q = di.len() - 1;
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
            let v = load_at(b, ind, &ii);
            let v = to_index(b, v);
            oi.push(checks::index(b, op, v, d, msg));
        }
        oi.extend_from_slice(&ivs[q..]);
        let u = load_at(b, upd, ivs);
        let old = load_at(b, out, &oi);
        let r = combine(b, &how, old, u);
        store_at(b, r, out, &oi);
    });
    Ok(vec![out])
}

pub fn gather_nd(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let ind = cx.input(b.m, op, 1)?;
    let nb = usize::try_from(attr_int(b.m, op, "batch_dims", 0)).unwrap_or(usize::MAX);
    let si = shape_of(b.m, ind);
    let rank = shape_of(b.m, x).len();
    let k = si.last().copied().unwrap_or(-1);
    if k < 0 || nb >= si.len() || nb + k as usize > rank {
        return Err(op_error(b.m, op, "needs indices with a static last dim"));
    }
    let k = k as usize;
    let dx = dims(b, x);
    let di = dims(b, ind);
    let q = di.len() - 1;
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
            let v = load_at(b, ind, &ii);
            let v = to_index(b, v);
            xi.push(checks::index(b, op, v, dx[nb + j], msg));
        }
        xi.extend_from_slice(&ivs[q..]);
        let v = load_at(b, x, &xi);
        store_at(b, v, out, ivs);
    });
    Ok(vec![out])
}

/// TopK by repeated selection: round r takes the best element not yet
/// taken (ties: the lower index), so the output is sorted.
pub fn topk(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let kv = cx.input(b.m, op, 1)?;
    let rank = shape_of(b.m, x).len();
    let axis = normalize_axis(b, op, attr_int(b.m, op, "axis", -1), rank)?;
    let largest = attr_int(b.m, op, "largest", 1) != 0;
    let dx = dims(b, x);
    let kr = shape_of(b.m, kv).len();
    let k = index_at(b, kv, (kr == 1).then_some(0));
    checks::non_negative(b, op, k, "k is negative")?;
    checks::compare(b, op, "sle", k, dx[axis], "k exceeds the axis dim")?;
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
    let rel = if largest { "gt" } else { "lt" };
    loop_nest(b, &bounds, &outer, &mut |b, ovs| {
        let fals = b.const_bool(false);
        loop_nest(b, &bounds, &[n], &mut |b, i| store_at(b, fals, taken, i));
        loop_nest(b, &bounds, &[k], &mut |b, r| {
            let none = b.const_index(-1);
            let first = scalar::lowest(b, &elem);
            let l = b.scf_for(bounds.zero, n, bounds.one, &[first, none], |b, i, acc| {
                let mut xi = ovs.to_vec();
                xi[axis] = i;
                let v = load_at(b, x, &xi);
                let t = load_at(b, taken, &[i]);
                let better = scalar::compare(b, rel, v, acc[0]);
                let unset = loops::cmp(b, "eq", acc[1], none);
                let c = b.same("arith.ori", &[better, unset]);
                let tr = b.const_bool(true);
                let free = b.same("arith.xori", &[t, tr]);
                let c = b.same("arith.andi", &[c, free]);
                let bv = scalar::select(b, c, v, acc[0]);
                let bi = loops::select(b, c, i, acc[1]);
                vec![bv, bi]
            });
            let res = b.m.results(l).to_vec();
            let tr = b.const_bool(true);
            store_at(b, tr, taken, &[res[1]]);
            let mut oi = ovs.to_vec();
            oi[axis] = r[0];
            store_at(b, res[0], vals, &oi);
            let i64v = from_index(b, res[1], &Type::i64());
            store_at(b, i64v, idxs, &oi);
        });
    });
    Ok(vec![vals, idxs])
}

pub fn one_hot(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let ind = cx.input(b.m, op, 0)?;
    let depth = cx.input(b.m, op, 1)?;
    let values = cx.input(b.m, op, 2)?;
    let r = shape_of(b.m, ind).len();
    let axis = normalize_axis(b, op, attr_int(b.m, op, "axis", -1), r + 1)?;
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
    let off = load_at(b, values, &[off_i]);
    let on = load_at(b, values, &[on_i]);
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let mut ii = ivs.to_vec();
        let j = ii.remove(axis);
        let v = load_at(b, ind, &ii);
        let v = to_index(b, v);
        let v = wrap(b, v, d, bounds.zero);
        let hit = loops::cmp(b, "eq", v, j);
        let r = scalar::select(b, hit, on, off);
        store_at(b, r, out, ivs);
    });
    Ok(vec![out])
}

/// NonZero: count first, allocate `[rank, count]`, then fill.
pub fn non_zero(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let dx = dims(b, x);
    let rank = dx.len();
    let elem = elem_of(b.m, x);
    let bounds = Bounds::new(b);
    let nz = |b: &mut Builder<'_>, ivs: &[ValueId]| {
        let v = load_at(b, x, ivs);
        let zero = if elem == Type::i1() {
            b.const_bool(false)
        } else {
            scalar::constant(b, &elem, 0.0)
        };
        scalar::compare(b, "ne", v, zero)
    };
    let count = reduce_nest(b, &bounds, &dx, bounds.zero, &mut |b, ivs, acc| {
        let c = nz(b, ivs);
        let inc = loops::add(b, acc, bounds.one);
        loops::select(b, c, inc, acc)
    });
    let rv = b.const_index(rank as i64);
    let out = alloc_result(b, op, 0, &[rv, count])?;
    reduce_nest(b, &bounds, &dx, bounds.zero, &mut |b, ivs, acc| {
        let c = nz(b, ivs);
        let ivs = ivs.to_vec();
        loops::if_then_else(
            b,
            c,
            &[],
            &mut |inner| {
                for (d, &iv) in ivs.iter().enumerate() {
                    let v = from_index(inner, iv, &Type::i64());
                    let dv = inner.const_index(d as i64);
                    store_at(inner, v, out, &[dv, acc]);
                }
                Vec::new()
            },
            None,
        );
        let inc = loops::add(b, acc, bounds.one);
        loops::select(b, c, inc, acc)
    });
    Ok(vec![out])
}

pub fn depth_space(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kind: &str,
) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let bs = attr_int(b.m, op, "blocksize", 1);
    let crd = attr_str(b.m, op, "mode") == Some("CRD");
    let dx = dims(b, x);
    if dx.len() != 4 || bs < 1 {
        return Err(op_error(b.m, op, "expects a 4-D input and blocksize >= 1"));
    }
    let bv = b.const_index(bs);
    let bb = b.const_index(bs * bs);
    let od: Vec<ValueId> = if kind == "DepthToSpace" {
        let c = b.same("arith.divui", &[dx[1], bb]);
        let h = loops::mul(b, dx[2], bv);
        let w = loops::mul(b, dx[3], bv);
        vec![dx[0], c, h, w]
    } else {
        let c = loops::mul(b, dx[1], bb);
        let h = b.same("arith.divui", &[dx[2], bv]);
        let w = b.same("arith.divui", &[dx[3], bv]);
        vec![dx[0], c, h, w]
    };
    let out = alloc_result(b, op, 0, &od)?;
    let bounds = Bounds::new(b);
    let depth = kind == "DepthToSpace";
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let (n, c, h, w) = (ivs[0], ivs[1], ivs[2], ivs[3]);
        let xi = if depth {
            let bh = b.same("arith.remui", &[h, bv]);
            let bw = b.same("arith.remui", &[w, bv]);
            let ih = b.same("arith.divui", &[h, bv]);
            let iw = b.same("arith.divui", &[w, bv]);
            let blk = loops::mul(b, bh, bv);
            let blk = loops::add(b, blk, bw);
            let ic = if crd {
                let cb = loops::mul(b, c, bb);
                loops::add(b, cb, blk)
            } else {
                let bc = loops::mul(b, blk, od[1]);
                loops::add(b, bc, c)
            };
            vec![n, ic, ih, iw]
        } else {
            let (cin, off) = if crd {
                (
                    b.same("arith.divui", &[c, bb]),
                    b.same("arith.remui", &[c, bb]),
                )
            } else {
                (
                    b.same("arith.remui", &[c, dx[1]]),
                    b.same("arith.divui", &[c, dx[1]]),
                )
            };
            let bh = b.same("arith.divui", &[off, bv]);
            let bw = b.same("arith.remui", &[off, bv]);
            let hh = loops::mul(b, h, bv);
            let ih = loops::add(b, hh, bh);
            let ww = loops::mul(b, w, bv);
            let iw = loops::add(b, ww, bw);
            vec![n, cin, ih, iw]
        };
        let v = load_at(b, x, &xi);
        store_at(b, v, out, ivs);
    });
    Ok(vec![out])
}
