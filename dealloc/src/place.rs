//! Placement of the frees `ownership` decided, and the function-boundary
//! handover of returned buffers.

use crate::alias::{view_base, Origins};
use crate::cfg::{Cfg, Death};
use crate::ownership::{FuncState, Stats};
use ir::dialects::is_memref;
use ir::entity::{EntitySet, SecondaryMap};
use ir::CfOp;
use ir::{Builder, InsertPoint, Module, OpId, Result, ValueId};
use std::collections::HashMap;

/// How a returned value reaches the caller.
enum Handover {
    /// The value is (a packed view of) an owned allocation: not freed here.
    Direct(ValueId),
    /// Exactly one of its owned origins: retained by the final dealloc.
    Retain,
    /// A packed view of a root owned only when its flag (second) is set:
    /// handed over as is under the flag, copied otherwise.
    Guarded(ValueId, ValueId),
    /// Anything else: a copy.
    Clone,
}

/// True if `v` is packed row-major at the start of its buffer: views keep
/// the aligned pointer, and an identity layout says offset 0, unit inner
/// stride, so the caller can take (and free) the buffer as the result.
fn is_packed(m: &Module, v: ValueId) -> bool {
    m.value_type(v)
        .as_memref()
        .is_some_and(ir::types::MemRefType::is_identity_layout)
}

fn handover(
    m: &Module,
    st: &FuncState,
    truth: ValueId,
    v: ValueId,
    origins: &Origins,
    claimed: &EntitySet<ValueId>,
) -> Handover {
    let owned = |r: ValueId| st.cond[r].is_some() && st.consumed[r].is_none();
    let all_owned = origins.list.len() == origins.allocs().count()
        && origins.allocs().all(|r| owned(r) && !claimed.contains(r));
    if origins.exact && all_owned {
        return if origins.list.len() == 1 && origins.allocs().eq([v]) && st.cond[v] == Some(truth) {
            Handover::Direct(v)
        } else {
            Handover::Retain
        };
    }
    // A packed view of one root (Reshape/Flatten/Squeeze at the end of a
    // graph; If/Loop results owned only at run time).
    let r = view_base(m, v);
    let single = origins.list.len() == 1;
    if !is_packed(m, v) || !origins.allocs().any(|a| a == r) || !owned(r) || claimed.contains(r) {
        return Handover::Clone;
    }
    match st.cond[r] {
        Some(c) if c == truth && single => Handover::Direct(r),
        Some(c) if c != truth => Handover::Guarded(r, c),
        _ => Handover::Clone,
    }
}

/// What one `func.return` hands over.
#[derive(Default)]
struct ReturnPlan {
    /// Owned allocations returned as they are: not freed there.
    transferred: EntitySet<ValueId>,
    /// Values the dealloc before the return keeps alive.
    retained: Vec<ValueId>,
}

/// Plans the handover at `ret`, inserting clones where needed.
fn plan_return(
    m: &mut Module,
    ret: OpId,
    st: &mut FuncState,
    truth: ValueId,
    stats: &mut Stats,
) -> ReturnPlan {
    let mut plan = ReturnPlan::default();
    let mut claimed = EntitySet::new();
    for i in 0..m.operands(ret).len() {
        let v = m.operands(ret)[i];
        if !is_memref(m.value_type(v)) {
            continue;
        }
        let origins = st.alias.origins(m, v).clone();
        match handover(m, st, truth, v, &origins, &claimed) {
            Handover::Direct(r) => {
                plan.transferred.insert(r);
                claimed.insert(r);
            }
            Handover::Retain => {
                plan.retained.push(v);
                claimed.extend(origins.allocs());
            }
            Handover::Guarded(r, flag) => {
                let w = guarded_clone(m, ret, v, flag);
                m.set_operand(ret, i, w);
                plan.transferred.insert(r);
                claimed.insert(r);
                stats.guarded_clones += 1;
            }
            Handover::Clone => {
                let ty = m.value_type(v).clone();
                let loc = m.loc(ret).clone();
                let mut b = Builder::new(m, InsertPoint::Before(ret)).with_loc(loc);
                let c = b.bufferization_clone(v, ty);
                m.set_operand(ret, i, c);
                stats.clones += 1;
            }
        }
    }
    plan
}

/// `scf.if %flag { yield v } else { yield clone v }` before `ret`: the
/// buffer itself when the function owns it, a copy otherwise.
fn guarded_clone(m: &mut Module, ret: OpId, v: ValueId, flag: ValueId) -> ValueId {
    let ty = m.value_type(v).clone();
    let loc = m.loc(ret).clone();
    let mut b = Builder::new(m, InsertPoint::Before(ret)).with_loc(loc);
    let op = b.scf_if(
        flag,
        std::slice::from_ref(&ty),
        &mut |_| vec![v],
        Some(&mut |b| vec![b.bufferization_clone(v, ty.clone())]),
    );
    m.result(op, 0).unwrap_or(v)
}

/// Inserts the frees, and clones for results the caller cannot own.
pub(crate) fn place(
    m: &mut Module,
    f: OpId,
    st: &mut FuncState,
    truth: ValueId,
    deaths: &[(Death, ValueId)],
    cfg: Option<&Cfg>,
) -> Result<Stats> {
    let mut stats = Stats::default();
    let dynamic = m.attr(f, crate::dynamic::DYNAMIC_OWNERSHIP).is_some();
    // A function returning ownership flags retains its results through
    // the flag slots of its return, like a region terminator.
    // One plan per `func.return`: a few entries, so a hash map.
    let mut plans: HashMap<OpId, ReturnPlan> = HashMap::new();
    if !dynamic {
        for ret in crate::ownership::returns(m, f) {
            let p = plan_return(m, ret, st, truth, &mut stats);
            plans.insert(ret, p);
        }
    }
    // Group the dead owned buffers by the point where they die.
    let mut groups: Vec<(Death, Vec<ValueId>)> = Vec::new();
    // Keyed by a death point (an op, a block or an edge): a hash map.
    let mut slot: HashMap<Death, usize> = HashMap::new();
    for &(at, r) in deaths {
        if let Death::After(op) = at {
            if plans.get(&op).is_some_and(|p| p.transferred.contains(r)) {
                continue;
            }
        }
        let k = *slot.entry(at).or_insert_with(|| {
            groups.push((at, Vec::new()));
            groups.len() - 1
        });
        if let Some(d) = groups.get_mut(k) {
            d.1.push(r);
        }
    }
    // Flagged terminator → its flag slots.
    let mut slots: SecondaryMap<OpId, Option<usize>> = SecondaryMap::default();
    for (i, s) in st.flagged.slots.iter().enumerate() {
        slots[s.term] = Some(i);
    }
    let mut negated: SecondaryMap<OpId, Option<ValueId>> = SecondaryMap::default();
    for (at, memrefs) in groups {
        let mut conds: Vec<ValueId> = memrefs.iter().filter_map(|&r| st.cond[r]).collect();
        let (ip, loc, keep, pairs) = match at {
            Death::Start(b) => {
                let loc = m
                    .first_op(b)
                    .map_or_else(|| m.loc(f).clone(), |o| m.loc(o).clone());
                (InsertPoint::Start(b), loc, Vec::new(), Vec::new())
            }
            Death::Edge(term, k) => {
                let loc = m.loc(term).clone();
                let pairs = cfg.map(|c| c.edge_pairs(m, term, k)).unwrap_or_default();
                let keep = pairs
                    .iter()
                    .filter_map(|&(i, _)| m.operand(term, i))
                    .collect();
                if m.is(term, CfOp::CondBr) {
                    conds = edge_conds(m, term, k, &conds, truth, &mut negated);
                }
                (InsertPoint::Before(term), loc, keep, pairs)
            }
            Death::After(op) => {
                let loc = m.loc(op).clone();
                if let Some(p) = plans.get(&op) {
                    (InsertPoint::Before(op), loc, p.retained.clone(), Vec::new())
                } else if let Some(pairs) = slots[op]
                    .and_then(|i| st.flagged.slots.get(i))
                    .map(|s| &s.pairs)
                {
                    let keep = pairs
                        .iter()
                        .filter_map(|&(i, _)| m.operand(op, i))
                        .collect();
                    (InsertPoint::Before(op), loc, keep, pairs.clone())
                } else if m.is_terminator(op) {
                    (InsertPoint::Before(op), loc, Vec::new(), Vec::new())
                } else {
                    (InsertPoint::After(op), loc, Vec::new(), Vec::new())
                }
            }
        };
        let d = Builder::new(m, ip)
            .with_loc(loc.clone())
            .bufferization_dealloc(&memrefs, &conds, &keep);
        // A `true` of its own: thousands of deallocs sharing one constant
        // would make its use list (and every later erase) quadratic.
        if conds.contains(&truth) {
            let t = Builder::new(m, InsertPoint::Before(d))
                .with_loc(loc)
                .const_bool(true);
            for (i, &c) in conds.iter().enumerate() {
                if c == truth {
                    m.set_operand(d, memrefs.len() + i, t);
                }
            }
        }
        stats.deallocs += 1;
        // The terminator forwards the ownership the dealloc computed.
        if let Death::After(term) | Death::Edge(term, _) = at {
            let owned = m.results(d).to_vec();
            for (&(_, fi), &o) in pairs.iter().zip(&owned) {
                m.set_operand(term, fi, o);
            }
        }
    }
    Ok(stats)
}

/// The conditions of a dealloc on edge `k` of a `cf.cond_br`: each anded
/// with the branch condition (edge 0) or its negation (edge 1).
fn edge_conds(
    m: &mut Module,
    term: OpId,
    k: usize,
    conds: &[ValueId],
    truth: ValueId,
    negated: &mut SecondaryMap<OpId, Option<ValueId>>,
) -> Vec<ValueId> {
    let Some(c) = m.operand(term, 0) else {
        return conds.to_vec();
    };
    let loc = m.loc(term).clone();
    let edge = if k == 0 {
        c
    } else if let Some(n) = negated[term] {
        n
    } else {
        let mut b = Builder::new(m, InsertPoint::Before(term)).with_loc(loc.clone());
        let t = b.const_bool(true);
        let n = b.xori(c, t);
        negated[term] = Some(n);
        n
    };
    let mut out = Vec::with_capacity(conds.len());
    for &x in conds {
        if x == truth {
            out.push(edge);
        } else {
            let mut b = Builder::new(m, InsertPoint::Before(term)).with_loc(loc.clone());
            out.push(b.andi(x, edge));
        }
    }
    out
}
