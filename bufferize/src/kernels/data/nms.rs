//! NonMaxSuppression, greedy as the ONNX reference: per (batch, class) the
//! best remaining candidate (highest score, then lowest index; scores above
//! `score_threshold` when given) is kept unless its IoU with a box already
//! kept for the class exceeds `iou_threshold`, up to
//! `max_output_boxes_per_class`. Rows `(batch, class, box)` are collected in
//! a scratch buffer, counted, then copied to the result.

use crate::convert::{alloc, dims, Lowering};
use crate::kernels::support::index::{from_index, to_index};
use crate::kernels::support::scalar;
use crate::kernels::{support::alloc_result, support::elem_of, support::shape_of};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::builder::{CmpF, CmpI};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId, DYN};
use onnx::ops;

/// The scalar in a 0-d or one-element operand `i`, if present.
fn scalar_input(cx: &Lowering, b: &mut Builder<'_>, op: OpId, i: usize) -> Result<Option<ValueId>> {
    let Some(v) = cx.optional_input(b.m, op, i)? else {
        return Ok(None);
    };
    let zero = b.const_index(0);
    let idx = vec![zero; shape_of(b.m, v).len()];
    Ok(Some(b.load(v, &idx)))
}

/// Box `k` of batch `n` as (x_min, x_max, y_min, y_max).
fn corners(
    b: &mut Builder<'_>,
    boxes: ValueId,
    n: ValueId,
    k: ValueId,
    center: bool,
) -> [ValueId; 4] {
    let c: Vec<ValueId> = (0..4)
        .map(|i| {
            let iv = b.const_index(i);
            b.load(boxes, &[n, k, iv])
        })
        .collect();
    if center {
        // [x_center, y_center, width, height]
        let t = b.m.value_type(c[0]).clone();
        let two = b.constant(&t, 2.0);
        let hw = b.div(c[2], two);
        let hh = b.div(c[3], two);
        [
            b.sub(c[0], hw),
            b.add(c[0], hw),
            b.sub(c[1], hh),
            b.add(c[1], hh),
        ]
    } else {
        // [y1, x1, y2, x2], corners in either order.
        [
            b.min(c[1], c[3]),
            b.max(c[1], c[3]),
            b.min(c[0], c[2]),
            b.max(c[0], c[2]),
        ]
    }
}

/// Whether boxes `p` and `q` overlap with IoU above `thr`.
fn suppresses(b: &mut Builder<'_>, p: [ValueId; 4], q: [ValueId; 4], thr: ValueId) -> ValueId {
    let t = b.m.value_type(p[0]).clone();
    let zero = b.constant(&t, 0.0);
    let ix0 = b.max(p[0], q[0]);
    let ix1 = b.min(p[1], q[1]);
    let iy0 = b.max(p[2], q[2]);
    let iy1 = b.min(p[3], q[3]);
    let wx = b.sub(ix1, ix0);
    let wy = b.sub(iy1, iy0);
    let inter = b.mul(wx, wy);
    let area = |b: &mut Builder<'_>, r: [ValueId; 4]| {
        let w = b.sub(r[1], r[0]);
        let h = b.sub(r[3], r[2]);
        b.mul(w, h)
    };
    let (a1, a2) = (area(b, p), area(b, q));
    let sum = b.add(a1, a2);
    let union = b.sub(sum, inter);
    let mut ok = b.cmpf(CmpF::Ogt, wx, zero);
    for v in [wy, inter, a1, a2, union] {
        let pos = b.cmpf(CmpF::Ogt, v, zero);
        ok = b.andi(ok, pos);
    }
    let iou = b.div(inter, union);
    let over = b.cmpf(CmpF::Ogt, iou, thr);
    b.andi(ok, over)
}

pub fn non_max_suppression(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
) -> Result<Vec<ValueId>> {
    let boxes = cx.input(b.m, op, ops::NonMaxSuppression::BOXES)?;
    let scores = cx.input(b.m, op, ops::NonMaxSuppression::SCORES)?;
    if shape_of(b.m, boxes).len() != 3 || shape_of(b.m, scores).len() != 3 {
        return Err(op_error(
            b.m,
            op,
            "expects boxes [B, S, 4] and scores [B, C, S]",
        ));
    }
    let rt = crate::kernels::support::result_memref_type(b.m, op, 0)?;
    if !matches!(rt.shape(), Some([_, 3 | DYN])) {
        return Err(op_error(b.m, op, "expects a [n, 3] result"));
    }
    let center = ops::NonMaxSuppression::of(b.m, op).center_point_box() != 0;
    let elem = elem_of(b.m, boxes);
    let bounds = Bounds::new(b);
    let (zero, one) = (bounds.zero, bounds.one);
    let max_out = match scalar_input(
        cx,
        b,
        op,
        ops::NonMaxSuppression::MAX_OUTPUT_BOXES_PER_CLASS,
    )? {
        Some(v) => to_index(b, v),
        None => zero,
    };
    let iou = match scalar_input(cx, b, op, ops::NonMaxSuppression::IOU_THRESHOLD)? {
        Some(v) => scalar::convert(b, op, v, &elem)?,
        None => b.constant(&elem, 0.0),
    };
    let score_thr = scalar_input(cx, b, op, ops::NonMaxSuppression::SCORE_THRESHOLD)?;
    let (db, ds) = (dims(b, boxes), dims(b, scores));
    let (nb, ns, nc) = (db[0], db[1], ds[1]);
    let popped = alloc(b, &Type::memref(vec![DYN], Type::i1()), &[ns]);
    let chosen = alloc(b, &Type::memref(vec![DYN], Type::Index), &[ns]);
    let bc = b.muli(nb, nc);
    let cap = b.muli(bc, ns);
    let rows = alloc(b, &Type::memref(vec![DYN, 3], Type::i64()), &[cap]);
    let i64t = Type::i64();
    let total = reduce_nest(b, &bounds, &[nb, nc], zero, &mut |b, bcv, total| {
        let (n, c) = (bcv[0], bcv[1]);
        let fals = b.const_bool(false);
        loop_nest(b, &bounds, &[ns], &mut |b, s| b.store(fals, popped, s));
        let f = b.scf_for(zero, ns, one, &[zero, total], |b, _, carried| {
            let (count, total) = (carried[0], carried[1]);
            // The best remaining candidate: ascending scan, strict > keeps
            // the lowest index among equal scores.
            let none = b.const_index(-1);
            let lo = scalar::lowest(b, &elem);
            let best = b.scf_for(zero, ns, one, &[none, lo], |b, s, acc| {
                let sc = b.load(scores, &[n, c, s]);
                let t = b.const_bool(true);
                let was = b.load(popped, &[s]);
                let mut cand = b.xori(was, t);
                if let Some(thr) = score_thr {
                    let above = b.cmpf(CmpF::Ogt, sc, thr);
                    cand = b.andi(cand, above);
                }
                let unset = b.cmpi(CmpI::Slt, acc[0], zero);
                let higher = b.cmpf(CmpF::Ogt, sc, acc[1]);
                let better = b.ori(unset, higher);
                let take = b.andi(cand, better);
                vec![b.select(take, s, acc[0]), b.select(take, sc, acc[1])]
            });
            let bi = b.m.results(best)[0];
            let found = b.cmpi(CmpI::Sge, bi, zero);
            let bi = b.select(found, bi, zero);
            let was = b.load(popped, &[bi]);
            let now = b.ori(was, found);
            b.store(now, popped, &[bi]);
            let room = b.cmpi(CmpI::Slt, count, max_out);
            let active = b.andi(found, room);
            let p = corners(b, boxes, n, bi, center);
            let fals = b.const_bool(false);
            let sup = reduce_nest(b, &bounds, &[count], fals, &mut |b, k, acc| {
                let other = b.load(chosen, k);
                let q = corners(b, boxes, n, other, center);
                let s = suppresses(b, p, q, iou);
                b.ori(acc, s)
            });
            let t = b.const_bool(true);
            let free = b.xori(sup, t);
            let keep = b.andi(active, free);
            // Written unconditionally, counted only when kept.
            b.store(bi, chosen, &[count]);
            for (col, v) in [n, c, bi].into_iter().enumerate() {
                let cv = b.const_index(col as i64);
                let v = from_index(b, v, &i64t);
                b.store(v, rows, &[total, cv]);
            }
            let inc = b.select(keep, one, zero);
            vec![b.addi(count, inc), b.addi(total, inc)]
        });
        b.m.results(f)[1]
    });
    let three = b.const_index(3);
    let out = alloc_result(b, op, 0, &[total, three])?;
    // A static result length (from the model) bounds the copy too.
    let n_out = dims(b, out)[0];
    let n_out = b.minsi(n_out, total);
    loop_nest(b, &bounds, &[n_out, three], &mut |b, ivs| {
        let v = b.load(rows, ivs);
        b.store(v, out, ivs);
    });
    Ok(vec![out])
}
