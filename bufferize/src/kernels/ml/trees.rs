//! Tree ensembles (TreeEnsembleRegressor, TreeEnsembleClassifier,
//! TreeEnsemble) as one interpreter over the forest in constant tables:
//! per row, each tree is walked from its root by an `scf.while` (load the
//! node's feature, compare with its threshold, take the yes or no child)
//! until a leaf (feature -1), whose votes are combined into a score row;
//! the row then goes through the shared last step of `ml.rs`. Node tests
//! the forest does not use are not emitted: one compare when every branch
//! has the same mode, a select over the modes otherwise.

use crate::convert::{alloc, Lowering};
use crate::kernels::ml::{floats, global, ints, model_error, store_row, Outputs, Rows};
use crate::kernels::support::checks;
use crate::kernels::{support::alloc_result, support::elem_of, support::scalar};
use crate::loops::{loop_nest, Bounds};
use ir::builder::{CmpF, CmpI};
use ir::dialects::op_error;
use ir::elements::{DType, Elements};
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ml::{Aggregate, Forest, Mode};
use onnx::ops;

pub fn regressor(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let f = Forest::regressor(b.m, op).map_err(model_error(b, op))?;
    let x = cx.input(b.m, op, ops::TreeEnsembleRegressor::X)?;
    let acc_t = if f.double { Type::f64() } else { Type::f32() };
    let rows = Rows::of(b, op, x)?;
    let t = b.const_index(f.targets as i64);
    let out = alloc_result(b, op, 0, &[rows.n, t])?;
    let post = f.post;
    walk_rows(cx, b, op, &f, &rows, &acc_t, &mut |b, acc, r| {
        store_row(b, acc, f.targets, post, out, r);
    })?;
    Ok(vec![out])
}

/// TreeEnsemble (opset 5): the output has the input's element type.
pub fn tree_ensemble(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let f = Forest::tree_ensemble(b.m, op).map_err(model_error(b, op))?;
    let x = cx.input(b.m, op, ops::TreeEnsemble::X)?;
    let xt = elem_of(b.m, x);
    let acc_t = if xt == Type::f64() {
        Type::f64()
    } else {
        Type::f32()
    };
    let rows = Rows::of(b, op, x)?;
    let t = b.const_index(f.targets as i64);
    let out = alloc_result(b, op, 0, &[rows.n, t])?;
    let post = f.post;
    walk_rows(cx, b, op, &f, &rows, &acc_t, &mut |b, acc, r| {
        store_row(b, acc, f.targets, post, out, r);
    })?;
    Ok(vec![out])
}

pub fn classifier(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let (f, classify) = Forest::classifier(b.m, op).map_err(model_error(b, op))?;
    let x = cx.input(b.m, op, ops::TreeEnsembleClassifier::X)?;
    let acc_t = if f.double { Type::f64() } else { Type::f32() };
    let rows = Rows::of(b, op, x)?;
    let out = Outputs::new(cx, b, op, rows.n, &classify, f.targets)?;
    let post = f.post;
    walk_rows(cx, b, op, &f, &rows, &acc_t, &mut |b, acc, r| {
        out.finish_row(b, acc, f.targets, &classify, post, r);
    })?;
    Ok(vec![out.labels, out.probs])
}

/// The forest's constant tables, nodes renumbered in depth-first order
/// from the roots so a walk reads nearby records.
struct Tables {
    /// `[nodes, 4] x i32`, one record per node: feature (-1 at a leaf),
    /// the f32 threshold's bits (a leaf: its first vote), the yes child
    /// (a leaf: its vote end), the no child.
    nodes: ValueId,
    /// Double thresholds, when the forest has them.
    threshold64: Option<ValueId>,
    /// Only when the branches use more than one mode.
    mode: Option<ValueId>,
    /// Only when some node sends missing values to `yes`.
    missing: Option<ValueId>,
    /// Member ranges and values, only with BRANCH_MEMBER nodes.
    members: Option<(ValueId, ValueId, ValueId)>,
    /// Vote targets and weights, `None` when no leaf votes.
    votes: Option<(ValueId, ValueId)>,
    roots: ValueId,
    base: Option<ValueId>,
    /// The branch modes in use.
    modes: Vec<Mode>,
}

fn mode_code(m: Mode) -> i64 {
    m as i64
}

/// The nodes in depth-first order from the roots (yes before no), then any
/// unreachable ones: `order[new] = old`, `at[old] = new`.
fn layout(f: &Forest) -> (Vec<usize>, Vec<usize>) {
    let mut at = vec![usize::MAX; f.nodes.len()];
    let mut order = Vec::with_capacity(f.nodes.len());
    for &root in &f.roots {
        let mut stack = vec![root];
        while let Some(i) = stack.pop() {
            if at[i] != usize::MAX {
                continue;
            }
            at[i] = order.len();
            order.push(i);
            let n = &f.nodes[i];
            if n.mode != Mode::Leaf {
                stack.extend([n.no, n.yes]);
            }
        }
    }
    for (i, a) in at.iter_mut().enumerate() {
        if *a == usize::MAX {
            *a = order.len();
            order.push(i);
        }
    }
    (order, at)
}

/// One node's record (see [`Tables::nodes`]).
fn record(n: &onnx::ml::Node, at: &[usize]) -> [i64; 4] {
    if n.mode == Mode::Leaf {
        return [-1, n.leaf.0 as i64, n.leaf.1 as i64, 0];
    }
    let bits = i64::from((n.threshold as f32).to_bits() as i32);
    [n.feature as i64, bits, at[n.yes] as i64, at[n.no] as i64]
}

fn tables(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    f: &Forest,
    ct: &Type,
    at_t: &Type,
) -> Result<Tables> {
    let i32t = Type::i(32);
    let (order, at) = layout(f);
    let recs: Vec<i64> = order
        .iter()
        .flat_map(|&i| record(&f.nodes[i], &at))
        .collect();
    let e = Elements::from_wide(DType::I32, vec![order.len() as i64, 4], &ints(recs))
        .map_err(|e| op_error(b.m, op, e.to_string()))?;
    let nodes = cx.global(b, &e);
    let col = |g: &dyn Fn(&onnx::ml::Node) -> i64| -> Vec<i64> {
        order.iter().map(|&i| g(&f.nodes[i])).collect()
    };
    let mut g = |b: &mut Builder<'_>, v: Vec<i64>| global(cx, b, op, &ints(v), &i32t);
    let roots = g(b, f.roots.iter().map(|&r| at[r] as i64).collect())?;
    let mut modes: Vec<Mode> = Vec::new();
    for n in f.nodes.iter().filter(|n| n.mode != Mode::Leaf) {
        if !modes.contains(&n.mode) {
            modes.push(n.mode);
        }
    }
    let mode = if modes.len() > 1 {
        Some(g(b, col(&|n| mode_code(n.mode)))?)
    } else {
        None
    };
    let missing = if f.nodes.iter().any(|n| n.missing_yes) {
        Some(g(b, col(&|n| i64::from(n.missing_yes)))?)
    } else {
        None
    };
    let members = if modes.contains(&Mode::Member) && !f.members.is_empty() {
        let lo = g(b, col(&|n| n.members.0 as i64))?;
        let hi = g(b, col(&|n| n.members.1 as i64))?;
        let vals = global(cx, b, op, &floats(&f.members), ct)?;
        Some((lo, hi, vals))
    } else {
        None
    };
    let votes = if f.votes.is_empty() {
        None
    } else {
        let targets = ints(f.votes.iter().map(|v| v.target as i64));
        let targets = global(cx, b, op, &targets, &i32t)?;
        let weights: Vec<f64> = f.votes.iter().map(|v| v.weight).collect();
        Some((targets, global(cx, b, op, &floats(&weights), at_t)?))
    };
    let threshold64 = if f.double {
        let t: Vec<f64> = order.iter().map(|&i| f.nodes[i].threshold).collect();
        Some(global(cx, b, op, &floats(&t), &Type::f64())?)
    } else {
        None
    };
    let base = if f.base.is_empty() {
        None
    } else {
        Some(global(cx, b, op, &floats(&f.base), at_t)?)
    };
    Ok(Tables {
        nodes,
        threshold64,
        mode,
        missing,
        members,
        votes,
        roots,
        base,
        modes,
    })
}

impl Tables {
    /// Column `c` of node `i`'s record.
    fn field(&self, b: &mut Builder<'_>, i: ValueId, c: i64) -> ValueId {
        let c = b.const_index(c);
        b.load(self.nodes, &[i, c])
    }
    /// Column `c` of node `i`'s record as an index.
    fn index(&self, b: &mut Builder<'_>, i: ValueId, c: i64) -> ValueId {
        let v = self.field(b, i, c);
        b.index_cast(v, Type::Index)
    }
    /// Node `i`'s threshold as `ct`.
    fn threshold(&self, b: &mut Builder<'_>, i: ValueId, ct: &Type) -> ValueId {
        if let Some(t) = self.threshold64 {
            return b.load(t, &[i]);
        }
        let bits = self.field(b, i, 1);
        let t = b.bitcast(bits, Type::f32());
        scalar::fcast(b, t, ct)
    }
}

/// Every row's aggregated scores (base values added) in a scratch row of
/// `acc_t`, handed to `row` with the row index.
#[allow(clippy::too_many_arguments)]
fn walk_rows(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    f: &Forest,
    rows: &Rows,
    acc_t: &Type,
    row: &mut dyn FnMut(&mut Builder<'_>, ValueId, ValueId),
) -> Result<()> {
    let xt = elem_of(b.m, rows.x);
    if !(xt.is_float() || xt.is_int()) {
        return Err(op_error(
            b.m,
            op,
            format!("cannot read features of type {xt}"),
        ));
    }
    // Compare in the precision of the input or of the thresholds.
    let ct = if f.double || xt == Type::f64() {
        Type::f64()
    } else {
        Type::f32()
    };
    if let Some(max) = f.max_feature() {
        let m = b.const_index(max as i64);
        let msg = format!("feature {max} is out of range of the input's features");
        checks::compare(b, op, CmpI::Slt, m, rows.f, &msg)?;
    }
    let tb = tables(cx, b, op, f, &ct, acc_t)?;
    let always = f.always_voted();
    let flags_needed = (matches!(f.aggregate, Aggregate::Min | Aggregate::Max)
        || (!f.base.is_empty() && f.base_if_voted))
        && !always.iter().all(|&a| a);
    let acc = alloc(b, &Type::memref(vec![f.targets as i64], acc_t.clone()), &[]);
    let voted =
        flags_needed.then(|| alloc(b, &Type::memref(vec![f.targets as i64], Type::i1()), &[]));
    let bounds = Bounds::new(b);
    let tv = b.const_index(f.targets as i64);
    let trees = b.const_index(f.roots.len() as i64);
    let mut err = None;
    loop_nest(b, &bounds, &[rows.n], &mut |b, r| {
        let r = r[0];
        init_row(b, &bounds, f, acc, voted, tv);
        loop_nest(b, &bounds, &[trees], &mut |b, t| {
            let root = b.load(tb.roots, t);
            let root = b.index_cast(root, Type::Index);
            match walk(b, op, rows, &tb, &ct, r, root) {
                Ok(leaf) => add_votes(b, f, &tb, acc, voted, leaf),
                Err(e) => err = Some(e),
            }
        });
        finish_scores(b, &bounds, f, &tb, acc, voted, tv);
        row(b, acc, r);
    });
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Scores start at the identity of the aggregate; nothing voted yet.
fn init_row(
    b: &mut Builder<'_>,
    bounds: &Bounds,
    f: &Forest,
    acc: ValueId,
    voted: Option<ValueId>,
    tv: ValueId,
) {
    let t = elem_of(b.m, acc);
    loop_nest(b, bounds, &[tv], &mut |b, k| {
        let v = match f.aggregate {
            Aggregate::Min => scalar::highest(b, &t),
            Aggregate::Max => scalar::lowest(b, &t),
            Aggregate::Sum | Aggregate::Average => b.zero(&t),
        };
        b.store(v, acc, k);
        if let Some(vd) = voted {
            let no = b.const_bool(false);
            b.store(no, vd, k);
        }
    });
}

/// The leaf reached from `root` for row `r`.
fn walk(
    b: &mut Builder<'_>,
    op: OpId,
    rows: &Rows,
    tb: &Tables,
    ct: &Type,
    r: ValueId,
    root: ValueId,
) -> Result<ValueId> {
    let mut err = None;
    // Carries (node, its feature); the feature is read where the loop
    // tests for a leaf.
    let unread = b.const_int(0, Type::i(32));
    let w = b.scf_while(
        &[root, unread],
        &mut |b, args| {
            let fi = tb.field(b, args[0], 0);
            let zero = b.const_int(0, Type::i(32));
            let branch = b.cmpi(CmpI::Sge, fi, zero);
            (branch, vec![args[0], fi])
        },
        &mut |b, args| {
            let (i, fi) = (args[0], args[1]);
            let c = b.index_cast(fi, Type::Index);
            let x = match rows.load(b, op, r, c, ct) {
                Ok(x) => x,
                Err(e) => {
                    err = Some(e);
                    return vec![i, fi];
                }
            };
            let yes = test(b, tb, x, ct, i);
            let y = tb.field(b, i, 2);
            let n = tb.field(b, i, 3);
            let next = b.select(yes, y, n);
            vec![b.index_cast(next, Type::Index), fi]
        },
    );
    match err {
        Some(e) => Err(e),
        None => Ok(b.m.results(w)[0]),
    }
}

/// Whether node `i` sends the feature value `x` to its yes child.
fn test(b: &mut Builder<'_>, tb: &Tables, x: ValueId, ct: &Type, i: ValueId) -> ValueId {
    let th = tb.threshold(b, i, ct);
    let mut yes = None;
    let code = tb.mode.map(|m| b.load(m, &[i]));
    for &m in &tb.modes {
        let p = match m {
            Mode::Leq => b.cmpf(CmpF::Ole, x, th),
            Mode::Lt => b.cmpf(CmpF::Olt, x, th),
            Mode::Gte => b.cmpf(CmpF::Oge, x, th),
            Mode::Gt => b.cmpf(CmpF::Ogt, x, th),
            Mode::Eq => b.cmpf(CmpF::Oeq, x, th),
            Mode::Neq => b.cmpf(CmpF::Une, x, th),
            Mode::Member | Mode::Leaf => member(b, tb, x, i),
        };
        yes = Some(match (yes, code) {
            (Some(other), Some(code)) => {
                let c = b.const_int(mode_code(m), Type::i(32));
                let here = b.cmpi(CmpI::Eq, code, c);
                b.select(here, p, other)
            }
            _ => p,
        });
    }
    let yes = yes.unwrap_or_else(|| b.const_bool(false));
    match tb.missing {
        Some(mt) => {
            let flag = b.load(mt, &[i]);
            let zero = b.const_int(0, Type::i(32));
            let tracks = b.cmpi(CmpI::Ne, flag, zero);
            let nan = b.cmpf(CmpF::Uno, x, x);
            let to_yes = b.andi(tracks, nan);
            b.ori(yes, to_yes)
        }
        None => yes,
    }
}

/// Whether `x` is one of node `i`'s member values.
fn member(b: &mut Builder<'_>, tb: &Tables, x: ValueId, i: ValueId) -> ValueId {
    let Some((lo, hi, vals)) = tb.members else {
        return b.const_bool(false);
    };
    let l = b.load(lo, &[i]);
    let l = b.index_cast(l, Type::Index);
    let h = b.load(hi, &[i]);
    let h = b.index_cast(h, Type::Index);
    let one = b.const_index(1);
    let no = b.const_bool(false);
    let op = b.scf_for(l, h, one, &[no], |b, j, args| {
        let v = b.load(vals, &[j]);
        let eq = b.cmpf(CmpF::Oeq, x, v);
        vec![b.ori(args[0], eq)]
    });
    b.m.results(op)[0]
}

/// Combines the votes of `leaf` into the scores.
fn add_votes(
    b: &mut Builder<'_>,
    f: &Forest,
    tb: &Tables,
    acc: ValueId,
    voted: Option<ValueId>,
    leaf: ValueId,
) {
    let Some((targets, weights)) = tb.votes else {
        return;
    };
    let lo = tb.index(b, leaf, 1);
    let hi = tb.index(b, leaf, 2);
    let one = b.const_index(1);
    b.scf_for(lo, hi, one, &[], |b, j, _| {
        let t = b.load(targets, &[j]);
        let t = b.index_cast(t, Type::Index);
        let w = b.load(weights, &[j]);
        let a = b.load(acc, &[t]);
        let mut v = match f.aggregate {
            Aggregate::Sum | Aggregate::Average => b.addf(a, w),
            Aggregate::Min => b.minimumf(a, w),
            Aggregate::Max => b.maximumf(a, w),
        };
        if let Some(vd) = voted {
            if matches!(f.aggregate, Aggregate::Min | Aggregate::Max) {
                // The first vote replaces the start value.
                let seen = b.load(vd, &[t]);
                v = b.select(seen, v, w);
            }
            let yes = b.const_bool(true);
            b.store(yes, vd, &[t]);
        }
        b.store(v, acc, &[t]);
        Vec::new()
    });
}

/// Average, then base values; a target nothing voted for is 0 (plus its
/// base unless the base goes only to voted targets).
fn finish_scores(
    b: &mut Builder<'_>,
    bounds: &Bounds,
    f: &Forest,
    tb: &Tables,
    acc: ValueId,
    voted: Option<ValueId>,
    tv: ValueId,
) {
    let t = elem_of(b.m, acc);
    let trees = f.roots.len().max(1) as f64;
    loop_nest(b, bounds, &[tv], &mut |b, k| {
        let mut v = b.load(acc, k);
        if f.aggregate == Aggregate::Average {
            let n = b.constant(&t, trees);
            v = b.divf(v, n);
        }
        let seen = voted.map(|vd| b.load(vd, k));
        if let Some(seen) = seen {
            let zero = b.zero(&t);
            v = b.select(seen, v, zero);
        }
        if let Some(base) = tb.base {
            let bv = b.load(base, k);
            let with = b.addf(v, bv);
            v = match seen {
                Some(seen) if f.base_if_voted => b.select(seen, with, v),
                _ => with,
            };
        }
        b.store(v, acc, k);
    });
}
