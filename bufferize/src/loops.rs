//! Loop-nest builders over `scf.for`, and small index-arithmetic helpers.

use ir::{Builder, ValueId};

/// Bounds shared by the loops of one nest: `0` and `1` built once.
pub struct Bounds {
    pub zero: ValueId,
    pub one: ValueId,
}

impl Bounds {
    pub fn new(b: &mut Builder<'_>) -> Bounds {
        Bounds {
            zero: b.const_index(0),
            one: b.const_index(1),
        }
    }
}

/// `for i0 in 0..ubs[0] { for i1 ... { body(ivs) } }`; afterwards `b` sits
/// after the outermost loop.
pub fn loop_nest(
    b: &mut Builder<'_>,
    bounds: &Bounds,
    ubs: &[ValueId],
    body: &mut dyn FnMut(&mut Builder<'_>, &[ValueId]),
) {
    let mut ivs = Vec::with_capacity(ubs.len());
    nest(b, bounds, ubs, &mut ivs, false, body);
}

/// [`loop_nest`] whose outermost loop (the first with more than one
/// iteration) is marked parallel: for nests whose iterations of that loop
/// write disjoint memory and use no buffer made outside for scratch.
pub fn parallel_loop_nest(
    b: &mut Builder<'_>,
    bounds: &Bounds,
    ubs: &[ValueId],
    body: &mut dyn FnMut(&mut Builder<'_>, &[ValueId]),
) {
    let mut ivs = Vec::with_capacity(ubs.len());
    nest(b, bounds, ubs, &mut ivs, true, body);
}

/// Elements below which a nest stays serial: starting a team costs a few
/// microseconds, what ~30k simple element updates take (far more on a
/// loaded machine, where a woken thread waits for a time slice).
pub const PARALLEL_MIN_WORK: i64 = 1 << 15;

/// Multiply-adds below which a product stays serial.
pub const GEMM_MIN_WORK: i64 = 1 << 19;

/// [`parallel_loop_nest`] when the nest does at least `min_work` units of
/// work (the product of `work`, a dynamic dim counted as 256), else
/// [`loop_nest`].
pub fn loop_nest_by_work(
    b: &mut Builder<'_>,
    bounds: &Bounds,
    ubs: &[ValueId],
    work: &[ValueId],
    min_work: i64,
    body: &mut dyn FnMut(&mut Builder<'_>, &[ValueId]),
) {
    let mut ivs = Vec::with_capacity(ubs.len());
    let parallel = work_units(b, work) >= min_work;
    nest(b, bounds, ubs, &mut ivs, parallel, body);
}

/// The product of `work`'s static values, a dynamic one counted as 256.
fn work_units(b: &Builder<'_>, work: &[ValueId]) -> i64 {
    work.iter().fold(1i64, |acc, &d| {
        acc.saturating_mul(b.index_value(d).unwrap_or(256).max(0))
    })
}

/// [`loop_nest_by_work`] for nests whose iterations are all independent
/// (each writes only its own elements, reads nothing another writes):
/// when the outermost trip count is not known to be large (a dynamic
/// batch, 1 at run time), the two outermost loops of three or more become
/// one parallel loop over their product, so that a batch of 1 still
/// shares out.
pub fn independent_nest_by_work(
    b: &mut Builder<'_>,
    bounds: &Bounds,
    ubs: &[ValueId],
    min_work: i64,
    body: &mut dyn FnMut(&mut Builder<'_>, &[ValueId]),
) {
    let units = work_units(b, ubs);
    let small = |v: Option<i64>| v.is_none_or(|n| (2..8).contains(&n));
    let outer_small = ubs.first().is_some_and(|&u| small(b.index_value(u)));
    let (Some((&u0, rest)), true) = (ubs.split_first(), units >= min_work && outer_small) else {
        return loop_nest_by_work(b, bounds, ubs, ubs, min_work, body);
    };
    // The innermost loop stays a loop (LLVM vectorizes it).
    let Some((&u1, inner)) = rest.split_first().filter(|(_, inner)| !inner.is_empty()) else {
        return loop_nest_by_work(b, bounds, ubs, ubs, min_work, body);
    };
    let pairs = b.muli(u0, u1);
    let lp = b.scf_for(bounds.zero, pairs, bounds.one, &[], |b, iv, _| {
        let mut ivs = vec![b.divui(iv, u1), b.remui(iv, u1)];
        nest(b, bounds, inner, &mut ivs, false, body);
        Vec::new()
    });
    b.m.set_attr(lp, ir::dialects::scf::PARALLEL, ir::Attribute::Unit);
}

fn nest(
    b: &mut Builder<'_>,
    bounds: &Bounds,
    ubs: &[ValueId],
    ivs: &mut Vec<ValueId>,
    parallel: bool,
    body: &mut dyn FnMut(&mut Builder<'_>, &[ValueId]),
) {
    let Some((&ub, rest)) = ubs.split_first() else {
        body(b, ivs);
        return;
    };
    // A trip count of one is no loop (a batch or group of 1).
    if b.index_value(ub) == Some(1) {
        ivs.push(bounds.zero);
        nest(b, bounds, rest, ivs, parallel, body);
        ivs.pop();
        return;
    }
    let lp = b.scf_for(bounds.zero, ub, bounds.one, &[], |inner, iv, _| {
        ivs.push(iv);
        nest(inner, bounds, rest, ivs, false, body);
        ivs.pop();
        Vec::new()
    });
    if parallel {
        b.m.set_attr(lp, ir::dialects::scf::PARALLEL, ir::Attribute::Unit);
    }
}

/// A loop nest carrying one scalar accumulator; returns the final value.
pub fn reduce_nest(
    b: &mut Builder<'_>,
    bounds: &Bounds,
    ubs: &[ValueId],
    init: ValueId,
    body: &mut dyn FnMut(&mut Builder<'_>, &[ValueId], ValueId) -> ValueId,
) -> ValueId {
    let mut ivs = Vec::with_capacity(ubs.len());
    reduce(b, bounds, ubs, &mut ivs, init, body)
}

fn reduce(
    b: &mut Builder<'_>,
    bounds: &Bounds,
    ubs: &[ValueId],
    ivs: &mut Vec<ValueId>,
    acc: ValueId,
    body: &mut dyn FnMut(&mut Builder<'_>, &[ValueId], ValueId) -> ValueId,
) -> ValueId {
    let Some((&ub, rest)) = ubs.split_first() else {
        return body(b, ivs, acc);
    };
    let op = b.scf_for(bounds.zero, ub, bounds.one, &[acc], |inner, iv, args| {
        ivs.push(iv);
        let r = reduce(inner, bounds, rest, ivs, args[0], body);
        ivs.pop();
        vec![r]
    });
    b.m.results(op)[0]
}

/// `x * c0 + ...` with constant folding of the trivial cases (c = 1, 0).
pub fn scale_add(b: &mut Builder<'_>, base: Option<ValueId>, x: ValueId, scale: i64) -> ValueId {
    let scaled = if scale == 1 {
        x
    } else {
        let c = b.const_index(scale);
        b.muli(x, c)
    };
    match base {
        Some(v) => b.addi(v, scaled),
        None => scaled,
    }
}
