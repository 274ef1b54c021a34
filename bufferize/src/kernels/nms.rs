//! NonMaxSuppression, greedy as the ONNX reference: per (batch, class) the
//! best remaining candidate (highest score, then lowest index; scores above
//! `score_threshold` when given) is kept unless its IoU with a box already
//! kept for the class exceeds `iou_threshold`, up to
//! `max_output_boxes_per_class`. Rows `(batch, class, box)` are collected in
//! a scratch buffer, counted, then copied to the result.

use super::build::{from_index, to_index};
use super::scalar::{self, constant};
use super::{alloc_result, attr_int, elem_of, load_at, shape_of, store_at};
use crate::convert::{alloc, dims, Lowering};
use crate::loops::{self, loop_nest, reduce_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId, DYN};

/// The scalar in a 0-d or one-element operand `i`, if present.
fn scalar_input(cx: &Lowering, b: &mut Builder<'_>, op: OpId, i: usize) -> Result<Option<ValueId>> {
    let Some(v) = cx.optional_input(b.m, op, i)? else {
        return Ok(None);
    };
    let zero = b.const_index(0);
    let idx = vec![zero; shape_of(b.m, v).len()];
    Ok(Some(load_at(b, v, &idx)))
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
            load_at(b, boxes, &[n, k, iv])
        })
        .collect();
    if center {
        // [x_center, y_center, width, height]
        let t = b.m.value_type(c[0]).clone();
        let two = constant(b, &t, 2.0);
        let hw = scalar::div(b, c[2], two);
        let hh = scalar::div(b, c[3], two);
        [
            scalar::sub(b, c[0], hw),
            scalar::add(b, c[0], hw),
            scalar::sub(b, c[1], hh),
            scalar::add(b, c[1], hh),
        ]
    } else {
        // [y1, x1, y2, x2], corners in either order.
        [
            scalar::min(b, c[1], c[3]),
            scalar::max(b, c[1], c[3]),
            scalar::min(b, c[0], c[2]),
            scalar::max(b, c[0], c[2]),
        ]
    }
}

/// Whether boxes `p` and `q` overlap with IoU above `thr`.
fn suppresses(b: &mut Builder<'_>, p: [ValueId; 4], q: [ValueId; 4], thr: ValueId) -> ValueId {
    let t = b.m.value_type(p[0]).clone();
    let zero = constant(b, &t, 0.0);
    let ix0 = scalar::max(b, p[0], q[0]);
    let ix1 = scalar::min(b, p[1], q[1]);
    let iy0 = scalar::max(b, p[2], q[2]);
    let iy1 = scalar::min(b, p[3], q[3]);
    let wx = scalar::sub(b, ix1, ix0);
    let wy = scalar::sub(b, iy1, iy0);
    let inter = scalar::mul(b, wx, wy);
    let area = |b: &mut Builder<'_>, r: [ValueId; 4]| {
        let w = scalar::sub(b, r[1], r[0]);
        let h = scalar::sub(b, r[3], r[2]);
        scalar::mul(b, w, h)
    };
    let (a1, a2) = (area(b, p), area(b, q));
    let sum = scalar::add(b, a1, a2);
    let union = scalar::sub(b, sum, inter);
    let mut ok = scalar::cmpf(b, "ogt", wx, zero);
    for v in [wy, inter, a1, a2, union] {
        let pos = scalar::cmpf(b, "ogt", v, zero);
        ok = loops::and(b, ok, pos);
    }
    let iou = scalar::div(b, inter, union);
    let over = scalar::cmpf(b, "ogt", iou, thr);
    loops::and(b, ok, over)
}

pub fn non_max_suppression(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
) -> Result<Vec<ValueId>> {
    let boxes = cx.input(b.m, op, 0)?;
    let scores = cx.input(b.m, op, 1)?;
    if shape_of(b.m, boxes).len() != 3 || shape_of(b.m, scores).len() != 3 {
        return Err(op_error(
            b.m,
            op,
            "expects boxes [B, S, 4] and scores [B, C, S]",
        ));
    }
    let rt = super::result_memref_type(b.m, op, 0)?;
    if !matches!(rt.shape(), Some([_, 3 | DYN])) {
        return Err(op_error(b.m, op, "expects a [n, 3] result"));
    }
    let center = attr_int(b.m, op, "center_point_box", 0) != 0;
    let elem = elem_of(b.m, boxes);
    let bounds = Bounds::new(b);
    let (zero, one) = (bounds.zero, bounds.one);
    let max_out = match scalar_input(cx, b, op, 2)? {
        Some(v) => to_index(b, v),
        None => zero,
    };
    let iou = match scalar_input(cx, b, op, 3)? {
        Some(v) => scalar::convert(b, op, v, &elem)?,
        None => constant(b, &elem, 0.0),
    };
    let score_thr = scalar_input(cx, b, op, 4)?;
    let (db, ds) = (dims(b, boxes), dims(b, scores));
    let (nb, ns, nc) = (db[0], db[1], ds[1]);
    let popped = alloc(b, &Type::memref(vec![DYN], Type::i1()), &[ns]);
    let chosen = alloc(b, &Type::memref(vec![DYN], Type::Index), &[ns]);
    let bc = loops::mul(b, nb, nc);
    let cap = loops::mul(b, bc, ns);
    let rows = alloc(b, &Type::memref(vec![DYN, 3], Type::i64()), &[cap]);
    let i64t = Type::i64();
    let total = reduce_nest(b, &bounds, &[nb, nc], zero, &mut |b, bcv, total| {
        let (n, c) = (bcv[0], bcv[1]);
        let fals = b.const_bool(false);
        loop_nest(b, &bounds, &[ns], &mut |b, s| store_at(b, fals, popped, s));
        let f = b.scf_for(zero, ns, one, &[zero, total], |b, _, carried| {
            let (count, total) = (carried[0], carried[1]);
            // The best remaining candidate: ascending scan, strict > keeps
            // the lowest index among equal scores.
            let none = b.const_index(-1);
            let lo = scalar::lowest(b, &elem);
            let best = b.scf_for(zero, ns, one, &[none, lo], |b, s, acc| {
                let sc = load_at(b, scores, &[n, c, s]);
                let t = b.const_bool(true);
                let was = load_at(b, popped, &[s]);
                let mut cand = b.same("arith.xori", &[was, t]);
                if let Some(thr) = score_thr {
                    let above = scalar::cmpf(b, "ogt", sc, thr);
                    cand = loops::and(b, cand, above);
                }
                let unset = loops::cmp(b, "slt", acc[0], zero);
                let higher = scalar::cmpf(b, "ogt", sc, acc[1]);
                let better = b.same("arith.ori", &[unset, higher]);
                let take = loops::and(b, cand, better);
                vec![
                    loops::select(b, take, s, acc[0]),
                    scalar::select(b, take, sc, acc[1]),
                ]
            });
            let bi = b.m.results(best)[0];
            let found = loops::cmp(b, "sge", bi, zero);
            let bi = loops::select(b, found, bi, zero);
            let was = load_at(b, popped, &[bi]);
            let now = b.same("arith.ori", &[was, found]);
            store_at(b, now, popped, &[bi]);
            let room = loops::cmp(b, "slt", count, max_out);
            let active = loops::and(b, found, room);
            let p = corners(b, boxes, n, bi, center);
            let fals = b.const_bool(false);
            let sup = reduce_nest(b, &bounds, &[count], fals, &mut |b, k, acc| {
                let other = load_at(b, chosen, k);
                let q = corners(b, boxes, n, other, center);
                let s = suppresses(b, p, q, iou);
                b.same("arith.ori", &[acc, s])
            });
            let t = b.const_bool(true);
            let free = b.same("arith.xori", &[sup, t]);
            let keep = loops::and(b, active, free);
            // Written unconditionally, counted only when kept.
            store_at(b, bi, chosen, &[count]);
            for (col, v) in [n, c, bi].into_iter().enumerate() {
                let cv = b.const_index(col as i64);
                let v = from_index(b, v, &i64t);
                store_at(b, v, rows, &[total, cv]);
            }
            let inc = loops::select(b, keep, one, zero);
            vec![loops::add(b, count, inc), loops::add(b, total, inc)]
        });
        b.m.results(f)[1]
    });
    let three = b.const_index(3);
    let out = alloc_result(b, op, 0, &[total, three])?;
    // A static result length (from the model) bounds the copy too.
    let n_out = dims(b, out)[0];
    let n_out = b.same("arith.minsi", &[n_out, total]);
    loop_nest(b, &bounds, &[n_out, three], &mut |b, ivs| {
        let v = load_at(b, rows, ivs);
        store_at(b, v, out, ivs);
    });
    Ok(vec![out])
}
