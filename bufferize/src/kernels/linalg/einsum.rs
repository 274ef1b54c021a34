//! Einsum (explicit or implicit output, `...`). A contraction of two
//! float operands whose labels each play one role (batch: both inputs
//! and the output; rows: A and the output; columns: B and the output;
//! depth: both inputs only), at most one label per role besides batch,
//! is a batched GEMM reading both operands and writing the output
//! through strides: no transposes are copied. Other equations are loop
//! nests.

use crate::convert::{contiguous, dims, Lowering};
use crate::kernels::linalg::matmul::{einsum_product, gemm_elem, View};
use crate::kernels::{support::alloc_result, support::elem_of, support::shape_of};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, ValueId};
use onnx::ops;

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

/// The parsed equation: each input's labels, the output's, every label
/// (output first) and its size.
struct Spec {
    inputs: Vec<ValueId>,
    labels: Vec<Vec<char>>,
    out: Vec<char>,
    all: Vec<char>,
    size: Vec<ValueId>,
}

fn parse(cx: &Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Spec> {
    let eq: String = ops::Einsum::of(b.m, op)
        .equation()
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
        let e = rank.saturating_sub(named);
        if t.contains("...") {
            ell = ell.max(e);
        }
        let l = expand_term(t, if t.contains("...") { e } else { 0 });
        if l.len() != rank || l.iter().any(|c| !c.is_ascii_alphabetic()) {
            return Err(op_error(b.m, op, "equation does not match the input ranks"));
        }
        labels.push(l);
    }
    let out = match rhs {
        Some(r) => expand_term(&r, ell),
        None => implicit_output(&labels, ell),
    };
    let mut all: Vec<char> = out.clone();
    for l in labels.iter().flatten() {
        if !all.contains(l) {
            all.push(*l);
        }
    }
    let mut size = Vec::with_capacity(all.len());
    for c in &all {
        // From the first input that has it, not broadcast if one does.
        let mut found = None;
        for (l, &v) in labels.iter().zip(&inputs) {
            if let Some(k) = l.iter().position(|x| x == c) {
                found = Some(dims(b, v)[k]);
                if shape_of(b.m, v)[k] != 1 {
                    break;
                }
            }
        }
        let d =
            found.ok_or_else(|| op_error(b.m, op, format!("label '{c}' is not in any input")))?;
        size.push(d);
    }
    Ok(Spec {
        inputs,
        labels,
        out,
        all,
        size,
    })
}

/// Implicit output: the broadcast labels, then the labels seen once, sorted.
fn implicit_output(labels: &[Vec<char>], ell: usize) -> Vec<char> {
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

pub fn einsum(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let spec = parse(cx, b, op)?;
    let no = spec.out.len();
    let out = alloc_result(b, op, 0, &spec.size[..no])?;
    if gemm_elem(&elem_of(b.m, out)) {
        if let Some(roles) = contraction(&spec) {
            gemm(cx, b, op, &spec, &roles, out)?;
            return Ok(vec![out]);
        }
    }
    nest(b, &spec, out);
    Ok(vec![out])
}

/// The labels of a two-operand contraction by role; `swap`: A and B trade
/// places (the output's last label is a row of the original A), so that
/// the GEMM's columns are the output's contiguous dim.
struct Roles {
    batch: Vec<char>,
    m: Option<char>,
    n: Option<char>,
    k: Option<char>,
    swap: bool,
}

fn contraction(s: &Spec) -> Option<Roles> {
    let [la, lb] = &s.labels[..] else { return None };
    let distinct = |l: &[char]| l.iter().enumerate().all(|(i, c)| !l[..i].contains(c));
    if !distinct(la) || !distinct(lb) || !distinct(&s.out) {
        return None;
    }
    let (mut batch, mut m, mut n, mut k) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for &c in &s.all {
        match (la.contains(&c), lb.contains(&c), s.out.contains(&c)) {
            (true, true, true) => batch.push(c),
            (true, false, true) => m.push(c),
            (false, true, true) => n.push(c),
            (true, true, false) => k.push(c),
            // A label summed within one input only.
            _ => return None,
        }
    }
    if m.len() > 1 || n.len() > 1 || k.len() > 1 {
        return None;
    }
    let (m, n, k) = (m.first().copied(), n.first().copied(), k.first().copied());
    let last = s.out.last().copied();
    let swap = last.is_some() && last == m;
    let (m, n) = if swap { (n, m) } else { (m, n) };
    // The GEMM writes a row's columns at unit stride: the output's last
    // label (when there are columns).
    if n.is_some() && last != n {
        return None;
    }
    Some(Roles {
        batch,
        m,
        n,
        k,
        swap,
    })
}

/// The contraction on the batched GEMM: A as [batch…, m, k], B as
/// [batch…, k, n], the output as [batch…, m, n], each through strides
/// (a missing role is a dim of 1).
fn gemm(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    s: &Spec,
    r: &Roles,
    out: ValueId,
) -> Result<()> {
    let (ia, ib) = if r.swap { (1, 0) } else { (0, 1) };
    let order = |labels: &[char], roles: [Option<char>; 2]| -> Vec<Option<usize>> {
        let pos = |c: char| labels.iter().position(|&x| x == c);
        let mut o: Vec<Option<usize>> = r.batch.iter().map(|&c| pos(c)).collect();
        o.extend(roles.iter().map(|c| c.and_then(pos)));
        o
    };
    // The views' strides are those of row-major buffers.
    let (ba, bb) = (contiguous(b, s.inputs[ia]), contiguous(b, s.inputs[ib]));
    let a = View {
        buf: ba,
        order: order(&s.labels[ia], [r.m, r.k]),
    };
    let w = View {
        buf: bb,
        order: order(&s.labels[ib], [r.k, r.n]),
    };
    let c = View {
        buf: out,
        order: order(&s.out, [r.m, r.n]),
    };
    let label_size = |c: Option<char>| {
        c.and_then(|c| s.all.iter().position(|&x| x == c))
            .map(|i| s.size[i])
    };
    let mut out_dims = r
        .batch
        .iter()
        .map(|&c| label_size(Some(c)))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| op_error(b.m, op, "a batch label has no size"))?;
    let one = b.const_index(1);
    out_dims.push(label_size(r.m).unwrap_or(one));
    out_dims.push(label_size(r.n).unwrap_or(one));
    einsum_product(cx, b, op, [&a, &w, &c], &out_dims)
}

/// Every output element as a sum of products over the other labels.
fn nest(b: &mut Builder<'_>, s: &Spec, out: ValueId) {
    let no = s.out.len();
    let elem = elem_of(b.m, s.inputs[0]);
    let bounds = Bounds::new(b);
    let shapes: Vec<Vec<i64>> = s.inputs.iter().map(|&v| shape_of(b.m, v)).collect();
    loop_nest(b, &bounds, &s.size[..no], &mut |b, ovs| {
        let zero = b.constant(&elem, 0.0);
        let sum = reduce_nest(b, &bounds, &s.size[no..], zero, &mut |b, rvs, acc| {
            let at = |c: char| -> ValueId {
                let k = s.all.iter().position(|x| *x == c).unwrap_or(0);
                if k < no {
                    ovs[k]
                } else {
                    rvs[k - no]
                }
            };
            let mut prod = None;
            for ((l, &v), sh) in s.labels.iter().zip(&s.inputs).zip(&shapes) {
                let idx: Vec<ValueId> = l
                    .iter()
                    .zip(sh)
                    .map(|(&c, &d)| if d == 1 { bounds.zero } else { at(c) })
                    .collect();
                let x = b.load(v, &idx);
                prod = Some(match prod {
                    Some(p) => b.mul(p, x),
                    None => x,
                });
            }
            match prod {
                Some(p) => b.add(acc, p),
                None => acc,
            }
        });
        b.store(sum, out, ovs);
    });
}
