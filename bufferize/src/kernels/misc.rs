//! Einsum (explicit or implicit output, `...`), Compress (data-dependent
//! size: count, allocate, fill) and ReverseSequence.

use super::build::to_index;
use super::reduce::normalize_axis;
use super::scalar::{self, constant};
use super::{alloc_result, attr_int, attr_str, elem_of, load_at, shape_of, store_at};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, reduce_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, ValueId};

/// Labels of one einsum term with `...` expanded to `ell` upper-case
/// placeholder labels.
fn expand_term(term: &str, ell: usize) -> Vec<char> {
    let mut out = Vec::new();
    let mut rest = term;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("...") {
            out.extend((0..ell).map(|i| char::from(b'A' + i as u8)));
            rest = r;
        } else {
            let mut cs = rest.chars();
            if let Some(c) = cs.next() {
                out.push(c);
            }
            rest = cs.as_str();
        }
    }
    out
}

pub fn einsum(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let eq: String = attr_str(b.m, op, "equation")
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let n = b.m.operands(op).len();
    let inputs: Vec<ValueId> = (0..n)
        .map(|i| cx.input(b.m, op, i))
        .collect::<Result<_>>()?;
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l.to_string(), Some(r.to_string())),
        None => (eq.clone(), None),
    };
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != n {
        return Err(op_error(b.m, op, "equation does not match the inputs"));
    }
    let mut labels = Vec::new();
    let mut ell = 0;
    for (t, &v) in terms.iter().zip(&inputs) {
        let rank = shape_of(b.m, v).len();
        let named = t.replace("...", "").chars().count();
        if t.contains("...") {
            ell = ell.max(rank.saturating_sub(named));
        }
        let e = rank.saturating_sub(named);
        let l = expand_term(t, if t.contains("...") { e } else { 0 });
        if l.len() != rank || l.iter().any(|c| !c.is_ascii_alphabetic()) {
            return Err(op_error(b.m, op, "equation does not match the input ranks"));
        }
        labels.push(l);
    }
    let out_labels: Vec<char> = match rhs {
        Some(r) => expand_term(&r, ell),
        None => {
            // Implicit: broadcast labels, then labels seen once, sorted.
            let mut v: Vec<char> = (0..ell).map(|i| char::from(b'A' + i as u8)).collect();
            let mut once: Vec<char> = labels
                .iter()
                .flatten()
                .copied()
                .filter(|c| c.is_ascii_lowercase())
                .filter(|c| labels.iter().flatten().filter(|d| *d == c).count() == 1)
                .collect();
            once.sort_unstable();
            v.extend(once);
            v
        }
    };
    // Each label's size, from the first input that has it (not broadcast).
    let mut all: Vec<char> = out_labels.clone();
    for l in labels.iter().flatten() {
        if !all.contains(l) {
            all.push(*l);
        }
    }
    let mut size = Vec::with_capacity(all.len());
    for c in &all {
        let mut found = None;
        for (l, &v) in labels.iter().zip(&inputs) {
            if let Some(k) = l.iter().position(|x| x == c) {
                let d = dims(b, v)[k];
                found = Some(d);
                if shape_of(b.m, v)[k] != 1 {
                    break;
                }
            }
        }
        match found {
            Some(d) => size.push(d),
            None => {
                return Err(op_error(
                    b.m,
                    op,
                    format!("label '{c}' is not in any input"),
                ))
            }
        }
    }
    let no = out_labels.len();
    let out = alloc_result(b, op, 0, &size[..no])?;
    let elem = elem_of(b.m, inputs[0]);
    let bounds = Bounds::new(b);
    let shapes: Vec<Vec<i64>> = inputs.iter().map(|&v| shape_of(b.m, v)).collect();
    loop_nest(b, &bounds, &size[..no], &mut |b, ovs| {
        let zero = constant(b, &elem, 0.0);
        let s = reduce_nest(b, &bounds, &size[no..], zero, &mut |b, rvs, acc| {
            let at = |c: char| -> ValueId {
                let k = all.iter().position(|x| *x == c).unwrap_or(0);
                if k < no {
                    ovs[k]
                } else {
                    rvs[k - no]
                }
            };
            let mut prod = None;
            for ((l, &v), s) in labels.iter().zip(&inputs).zip(&shapes) {
                let idx: Vec<ValueId> = l
                    .iter()
                    .zip(s)
                    .map(|(&c, &d)| if d == 1 { bounds.zero } else { at(c) })
                    .collect();
                let x = load_at(b, v, &idx);
                prod = Some(match prod {
                    Some(p) => scalar::mul(b, p, x),
                    None => x,
                });
            }
            match prod {
                Some(p) => scalar::add(b, acc, p),
                None => acc,
            }
        });
        store_at(b, s, out, ovs);
    });
    Ok(vec![out])
}

/// Compress: the selected slices along `axis` (or of the flattened input).
pub fn compress(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let cond = cx.input(b.m, op, 1)?;
    let rank = shape_of(b.m, x).len();
    let axis = match b.m.attr(op, "axis").and_then(ir::Attribute::as_int) {
        Some(a) => Some(normalize_axis(b, op, a, rank)?),
        None => None,
    };
    let bounds = Bounds::new(b);
    // Flattened: view x as 1-D.
    let (x, axis) = match axis {
        Some(a) => (x, a),
        None => {
            let dx = dims(b, x);
            let mut n = bounds.one;
            for d in dx {
                n = loops::mul(b, n, d);
            }
            let elem = elem_of(b.m, x);
            let ty = ir::Type::memref(vec![ir::DYN], elem);
            (super::shape::reinterpret(b, x, &ty, &[ir::DYN], &[n]), 0)
        }
    };
    let dx = dims(b, x);
    let nc = dims(b, cond)[0];
    let len = b.same("arith.minsi", &[nc, dx[axis]]);
    let count = reduce_nest(b, &bounds, &[len], bounds.zero, &mut |b, i, acc| {
        let c = load_at(b, cond, i);
        let inc = loops::add(b, acc, bounds.one);
        loops::select(b, c, inc, acc)
    });
    let mut od = dx.clone();
    od[axis] = count;
    let out = alloc_result(b, op, 0, &od)?;
    let mut outer = dx.clone();
    outer[axis] = bounds.one;
    loop_nest(b, &bounds, &outer, &mut |b, ovs| {
        reduce_nest(b, &bounds, &[len], bounds.zero, &mut |b, i, pos| {
            let c = load_at(b, cond, i);
            let mut xi = ovs.to_vec();
            xi[axis] = i[0];
            let mut oi = ovs.to_vec();
            oi[axis] = pos;
            let xi2 = xi.clone();
            let oi2 = oi.clone();
            loops::if_then_else(
                b,
                c,
                &[],
                &mut |b| {
                    let v = load_at(b, x, &xi2);
                    store_at(b, v, out, &oi2);
                    Vec::new()
                },
                None,
            );
            let inc = loops::add(b, pos, bounds.one);
            loops::select(b, c, inc, pos)
        });
    });
    Ok(vec![out])
}

pub fn reverse_sequence(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let lens = cx.input(b.m, op, 1)?;
    let rank = shape_of(b.m, x).len();
    let bax = normalize_axis(b, op, attr_int(b.m, op, "batch_axis", 1), rank)?;
    let tax = normalize_axis(b, op, attr_int(b.m, op, "time_axis", 0), rank)?;
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let l = load_at(b, lens, &[ivs[bax]]);
        let l = to_index(b, l);
        let t = ivs[tax];
        let inside = loops::cmp(b, "slt", t, l);
        let last = loops::sub(b, l, bounds.one);
        let rt = loops::sub(b, last, t);
        let mut xi = ivs.to_vec();
        xi[tax] = loops::select(b, inside, rt, t);
        let v = load_at(b, x, &xi);
        store_at(b, v, out, ivs);
    });
    Ok(vec![out])
}
