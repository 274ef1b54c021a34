//! Loop-nest builders over `scf.for`, and small index-arithmetic helpers.

use ir::{Builder, Type, ValueId};

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
    nest(b, bounds, ubs, &mut ivs, body);
}

fn nest(
    b: &mut Builder<'_>,
    bounds: &Bounds,
    ubs: &[ValueId],
    ivs: &mut Vec<ValueId>,
    body: &mut dyn FnMut(&mut Builder<'_>, &[ValueId]),
) {
    let Some((&ub, rest)) = ubs.split_first() else {
        body(b, ivs);
        return;
    };
    b.scf_for(bounds.zero, ub, bounds.one, &[], |inner, iv, _| {
        ivs.push(iv);
        nest(inner, bounds, rest, ivs, body);
        ivs.pop();
        Vec::new()
    });
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

pub fn add(b: &mut Builder<'_>, x: ValueId, y: ValueId) -> ValueId {
    b.same("arith.addi", &[x, y])
}
pub fn mul(b: &mut Builder<'_>, x: ValueId, y: ValueId) -> ValueId {
    b.same("arith.muli", &[x, y])
}
pub fn sub(b: &mut Builder<'_>, x: ValueId, y: ValueId) -> ValueId {
    b.same("arith.subi", &[x, y])
}

/// `x * c0 + ...` with constant folding of the trivial cases (c = 1, 0).
pub fn scale_add(b: &mut Builder<'_>, base: Option<ValueId>, x: ValueId, scale: i64) -> ValueId {
    let scaled = if scale == 1 {
        x
    } else {
        let c = b.const_index(scale);
        mul(b, x, c)
    };
    match base {
        Some(v) => add(b, v, scaled),
        None => scaled,
    }
}

/// `arith.cmpi <pred>` on index values.
pub fn cmp(b: &mut Builder<'_>, pred: &str, x: ValueId, y: ValueId) -> ValueId {
    let p = ir::dialects::arith::CMPI_PREDICATES
        .iter()
        .position(|&n| n == pred)
        .unwrap_or(0) as i64;
    b.op1(
        "arith.cmpi",
        &[x, y],
        Type::i1(),
        &[("predicate", ir::Attribute::i64(p))],
    )
}

pub fn and(b: &mut Builder<'_>, x: ValueId, y: ValueId) -> ValueId {
    b.same("arith.andi", &[x, y])
}

pub fn select(b: &mut Builder<'_>, c: ValueId, x: ValueId, y: ValueId) -> ValueId {
    let ty = b.m.value_type(x).clone();
    b.op1("arith.select", &[c, x, y], ty, &[])
}

/// Builds one region's body and returns the values to yield.
pub type RegionFn<'a> = &'a mut dyn FnMut(&mut Builder<'_>) -> Vec<ValueId>;

/// `scf.if cond -> (result_types)`: `then` and `els` build each branch and
/// return the values to yield (`els` is required when there are results;
/// without results and without `els` the else region stays empty).
pub fn if_then_else(
    b: &mut Builder<'_>,
    cond: ValueId,
    result_types: &[Type],
    then: RegionFn<'_>,
    els: Option<RegionFn<'_>>,
) -> ir::OpId {
    let op = b.create(
        "scf.if",
        ir::OpSpec {
            operands: vec![cond],
            result_types: result_types.to_vec(),
            regions: 2,
            ..ir::OpSpec::default()
        },
    );
    let regions = b.m.regions(op).to_vec();
    let loc = b.m.loc(op).clone();
    let blk = b.m.append_block(regions[0], &[]);
    let mut inner = Builder::at_end(b.m, blk).with_loc(loc.clone());
    let ys = then(&mut inner);
    inner.op("scf.yield", &ys, &[], &[]);
    if let Some(els) = els {
        let blk = b.m.append_block(regions[1], &[]);
        let mut inner = Builder::at_end(b.m, blk).with_loc(loc);
        let ys = els(&mut inner);
        inner.op("scf.yield", &ys, &[], &[]);
    }
    op
}
