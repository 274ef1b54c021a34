//! `dealloc-simplification`: canonicalizations of `bufferization.dealloc`.
//!
//! Recall the op's meaning: each memref whose condition holds is freed once
//! (aliasing entries are freed once in all), unless a retained value aliases
//! it; retained result `j` is the OR of the conditions of the memrefs that
//! alias retained value `j`. The rewrites, each preserving that meaning:
//!
//! * an op without memrefs is erased, its results replaced by `false`;
//! * memrefs under a constant-false condition are dropped;
//! * a memref listed twice is listed once under the OR of its conditions;
//! * a retained value listed twice is listed once, sharing its result;
//! * a retained value that cannot alias any memref is dropped (result `false`);
//! * a memref that a retained value must alias (the memref itself, or a view
//!   of it: views keep the base pointer), and that may alias no other
//!   retained value, is never freed: dropped, its condition ORed into those
//!   results (no runtime pointer comparison);
//! * memrefs that cannot alias each other are split into one op each, with
//!   only the retained values that may alias that memref;
//! * one memref, constant-true condition, nothing retained: `memref.dealloc`;
//! * `x | false`, `x & true` on `i1` flags fold to `x`;
//! * an `scf.if` result both branches yield as the same constant (a flag
//!   true on every path) is that constant, and an `scf.if` on a constant
//!   is its branch (the copy guarded by a flag that is always true goes);
//! * `%c = clone %x` followed, with nothing touching the buffer in between,
//!   by the free of the allocation `%x` is (a packed view of): `%c` is `%x`
//!   and neither the copy nor the free happens (upstream's clone
//!   canonicalization; `lower-deallocations` would make it alloc + copy +
//!   free, which `elide-copies`, running before it, never sees).

use crate::alias::{
    may_alias_live, may_overlap, must_alias, view_base, AliasInfo, Origin, Origins,
};
use crate::ownership::is_owned_allocation;
use ir::dialects::bufferization::dealloc_groups;
use ir::pass::{Pass, PassContext, PassInfo};
use ir::rewrite::{apply_greedily, GreedyConfig, Pattern};
use ir::transforms::canonicalize;
use ir::{ArithOp, BufferizationOp, MemrefOp};
use ir::{Attribute, Builder, InsertPoint, Module, OpId, Result, ValueId};
use std::collections::HashSet;

/// Above this many memrefs the pairwise alias check for splitting is skipped.
const MAX_PAIRWISE: usize = 64;

pub struct DeallocSimplification;

impl Pass for DeallocSimplification {
    fn name(&self) -> &'static str {
        "dealloc-simplification"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let report = simplify_deallocs(m)?;
        cx.bump("dealloc-simplification.rewrites", report.rewrites as u64);
        if let Some(w) = report.warning("dealloc-simplification") {
            cx.warnings.push(w);
        }
        Ok(())
    }
}

pub fn pass_info() -> PassInfo {
    PassInfo {
        name: "dealloc-simplification",
        summary: "canonicalize bufferization.dealloc (drop, merge, split, fold to memref.dealloc)",
        create: |_| Ok(Box::new(DeallocSimplification)),
    }
}

pub fn simplify_deallocs(m: &mut Module) -> Result<ir::rewrite::GreedyReport> {
    let top = m.top();
    apply_greedily(
        m,
        top,
        &[
            &SimplifyDealloc,
            &FoldFlagLogic,
            &canonicalize::SameYield,
            &canonicalize::ConstantIf,
            &ForwardClone,
        ],
        &GreedyConfig::default(),
    )
}

/// The operand groups of a `bufferization.dealloc`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeallocParts {
    pub memrefs: Vec<ValueId>,
    pub conds: Vec<ValueId>,
    pub retained: Vec<ValueId>,
}

impl DeallocParts {
    pub fn read(m: &Module, op: OpId) -> Option<DeallocParts> {
        let (n, c, r) = dealloc_groups(m, op)?;
        let all = m.operands(op);
        if n != c || n + c + r != all.len() {
            return None;
        }
        Some(DeallocParts {
            memrefs: all[..n].to_vec(),
            conds: all[n..2 * n].to_vec(),
            retained: all[2 * n..].to_vec(),
        })
    }
}

/// The value of an i1 `arith.constant`, if `v` is one.
pub fn const_bool(m: &Module, v: ValueId) -> Option<bool> {
    let op = m.defining_op(v)?;
    if !m.is(op, ArithOp::Constant) {
        return None;
    }
    m.attr(op, "value")
        .and_then(Attribute::as_int)
        .map(|x| x != 0)
}

struct SimplifyDealloc;

impl Pattern for SimplifyDealloc {
    fn name(&self) -> &'static str {
        "simplify-bufferization-dealloc"
    }
    fn root(&self) -> Option<&'static str> {
        Some(BufferizationOp::Dealloc.name())
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        let Some(parts) = DeallocParts::read(m, op) else {
            return Ok(false);
        };
        Ok(erase_empty(m, op, &parts)
            || normalize(m, op, &parts)
            || drop_retained_memrefs(m, op, &parts)
            || split(m, op, &parts)
            || to_memref_dealloc(m, op, &parts))
    }
}

/// `x | false` and `x & true` on ownership flags: `x` (the leftovers of
/// results folded to constants).
struct FoldFlagLogic;

impl Pattern for FoldFlagLogic {
    fn name(&self) -> &'static str {
        "fold-ownership-flag-logic"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        let neutral = if m.is(op, ArithOp::Ori) {
            false
        } else if m.is(op, ArithOp::Andi) {
            true
        } else {
            return Ok(false);
        };
        let (Some(a), Some(b), Some(r)) = (m.operand(op, 0), m.operand(op, 1), m.result(op, 0))
        else {
            return Ok(false);
        };
        if *m.value_type(r) != ir::Type::i1() {
            return Ok(false);
        }
        let keep = if const_bool(m, b) == Some(neutral) {
            a
        } else if const_bool(m, a) == Some(neutral) {
            b
        } else {
            return Ok(false);
        };
        m.replace_all_uses(r, keep);
        m.erase_op(op);
        Ok(true)
    }
}

fn false_value(m: &mut Module, op: OpId) -> ValueId {
    let loc = m.loc(op).clone();
    Builder::new(m, InsertPoint::Before(op))
        .with_loc(loc)
        .const_bool(false)
}

fn erase_empty(m: &mut Module, op: OpId, p: &DeallocParts) -> bool {
    if !p.memrefs.is_empty() {
        return false;
    }
    if !m.results(op).is_empty() {
        let f = false_value(m, op);
        let results = m.results(op).to_vec();
        for r in results {
            m.replace_all_uses(r, f);
        }
    }
    m.erase_op(op);
    true
}

/// Where a result of the rewritten op comes from.
#[derive(Copy, Clone)]
enum ResultFrom {
    Retained(usize),
    False,
}

/// Drops false conditions, merges duplicates, drops retained values that
/// cannot alias any memref.
fn normalize(m: &mut Module, op: OpId, p: &DeallocParts) -> bool {
    let mut changed = false;
    let mut memrefs: Vec<ValueId> = Vec::new();
    let mut groups: Vec<Vec<ValueId>> = Vec::new();
    for (&mr, &c) in p.memrefs.iter().zip(&p.conds) {
        if const_bool(m, c) == Some(false) {
            changed = true;
        } else if let Some(k) = memrefs.iter().position(|&x| x == mr) {
            changed = true;
            if let Some(g) = groups.get_mut(k) {
                g.push(c);
            }
        } else {
            memrefs.push(mr);
            groups.push(vec![c]);
        }
    }
    let mut alias = AliasInfo::new();
    let mem_origins: Vec<Origins> = memrefs
        .iter()
        .map(|&v| alias.origins(m, v).clone())
        .collect();
    let mut retained: Vec<ValueId> = Vec::new();
    let mut from = Vec::with_capacity(p.retained.len());
    for &r in &p.retained {
        if let Some(k) = retained.iter().position(|&x| x == r) {
            changed = true;
            from.push(ResultFrom::Retained(k));
            continue;
        }
        let o = alias.origins(m, r).clone();
        if mem_origins.iter().any(|mo| may_alias_live(m, mo, &o)) {
            retained.push(r);
            from.push(ResultFrom::Retained(retained.len() - 1));
        } else {
            changed = true;
            from.push(ResultFrom::False);
        }
    }
    if !changed {
        return false;
    }
    let loc = m.loc(op).clone();
    let conds: Vec<ValueId> = groups.iter().map(|g| or_all(m, op, g)).collect();
    let new = Builder::new(m, InsertPoint::Before(op))
        .with_loc(loc)
        .bufferization_dealloc(&memrefs, &conds, &retained);
    let new_results = m.results(new).to_vec();
    let old_results = m.results(op).to_vec();
    let mut falsity = None;
    for (&old, f) in old_results.iter().zip(from) {
        let v = match f {
            ResultFrom::Retained(k) => new_results.get(k).copied(),
            ResultFrom::False => Some(*falsity.get_or_insert_with(|| false_value(m, op))),
        };
        if let Some(v) = v {
            m.replace_all_uses(old, v);
        }
    }
    m.erase_op(op);
    true
}

/// OR of conditions, folding constants.
fn or_all(m: &mut Module, op: OpId, conds: &[ValueId]) -> ValueId {
    if let Some(&t) = conds.iter().find(|&&c| const_bool(m, c) == Some(true)) {
        return t;
    }
    let conds: Vec<ValueId> = conds
        .iter()
        .copied()
        .filter(|&c| const_bool(m, c) != Some(false))
        .collect();
    let Some((&first, rest)) = conds.split_first() else {
        return false_value(m, op);
    };
    let loc = m.loc(op).clone();
    let mut b = Builder::new(m, InsertPoint::Before(op)).with_loc(loc);
    rest.iter().fold(first, |acc, &c| b.ori(acc, c))
}

/// True if no two of the values may point into the same memory.
fn pairwise_disjoint(m: &Module, origins: &[Origins]) -> bool {
    // A few values per dealloc: a hash set, not a table over all ids.
    let mut seen = HashSet::new();
    let single_allocs = origins.iter().all(|o| match o.list.as_slice() {
        [Origin::Alloc(v)] => seen.insert(*v),
        _ => false,
    });
    if single_allocs {
        return true;
    }
    if origins.len() > MAX_PAIRWISE {
        return false;
    }
    origins
        .iter()
        .enumerate()
        .all(|(i, a)| origins.iter().skip(i + 1).all(|b| !may_alias_live(m, a, b)))
}

/// One op per memref when the memrefs cannot alias each other.
fn split(m: &mut Module, op: OpId, p: &DeallocParts) -> bool {
    if p.memrefs.len() < 2 {
        return false;
    }
    let mut alias = AliasInfo::new();
    let mem: Vec<Origins> = p
        .memrefs
        .iter()
        .map(|&v| alias.origins(m, v).clone())
        .collect();
    if !pairwise_disjoint(m, &mem) {
        return false;
    }
    let ret: Vec<Origins> = p
        .retained
        .iter()
        .map(|&v| alias.origins(m, v).clone())
        .collect();
    let loc = m.loc(op).clone();
    // For each retained value, the per-memref results to OR together.
    let mut parts: Vec<Vec<ValueId>> = vec![Vec::new(); p.retained.len()];
    for ((&mr, &c), mo) in p.memrefs.iter().zip(&p.conds).zip(&mem) {
        let keep: Vec<usize> = (0..p.retained.len())
            .filter(|&j| may_alias_live(m, mo, &ret[j]))
            .collect();
        let kept: Vec<ValueId> = keep.iter().map(|&j| p.retained[j]).collect();
        let new = Builder::new(m, InsertPoint::Before(op))
            .with_loc(loc.clone())
            .bufferization_dealloc(&[mr], &[c], &kept);
        for (&j, &r) in keep.iter().zip(m.results(new)) {
            parts[j].push(r);
        }
    }
    let old_results = m.results(op).to_vec();
    for (old, group) in old_results.into_iter().zip(parts) {
        let v = if group.is_empty() {
            false_value(m, op)
        } else {
            or_all(m, op, &group)
        };
        m.replace_all_uses(old, v);
    }
    m.erase_op(op);
    true
}

fn to_memref_dealloc(m: &mut Module, op: OpId, p: &DeallocParts) -> bool {
    let ([mr], [c], []) = (
        p.memrefs.as_slice(),
        p.conds.as_slice(),
        p.retained.as_slice(),
    ) else {
        return false;
    };
    if const_bool(m, *c) != Some(true) {
        return false;
    }
    let loc = m.loc(op).clone();
    Builder::new(m, InsertPoint::Before(op))
        .with_loc(loc)
        .dealloc(*mr);
    m.erase_op(op);
    true
}

/// Drops memrefs that a retained value must alias (the memref itself or a
/// view of it: views keep the base pointer): they are never freed, and
/// their condition goes into those retained values' results. Only when
/// every other retained value cannot alias the memref, whose result would
/// need the runtime comparison.
fn drop_retained_memrefs(m: &mut Module, op: OpId, p: &DeallocParts) -> bool {
    let mut alias = AliasInfo::new();
    let ret: Vec<Origins> = p
        .retained
        .iter()
        .map(|&v| alias.origins(m, v).clone())
        .collect();
    let mut keep = Vec::new();
    // Per retained value: conditions of dropped memrefs to OR in.
    let mut extra: Vec<Vec<ValueId>> = vec![Vec::new(); p.retained.len()];
    let mut dropped = false;
    for (&mr, &c) in p.memrefs.iter().zip(&p.conds) {
        let must: Vec<usize> = (0..p.retained.len())
            .filter(|&k| must_alias(m, p.retained[k], mr))
            .collect();
        if must.is_empty() {
            keep.push((mr, c));
            continue;
        }
        let mo = alias.origins(m, mr).clone();
        let lonely = p
            .retained
            .iter()
            .zip(&ret)
            .enumerate()
            .all(|(k, (_, ro))| must.contains(&k) || !may_alias_live(m, &mo, ro));
        if !lonely {
            keep.push((mr, c));
            continue;
        }
        dropped = true;
        for k in must {
            extra[k].push(c);
        }
    }
    if !dropped {
        return false;
    }
    let loc = m.loc(op).clone();
    let (memrefs, conds): (Vec<ValueId>, Vec<ValueId>) = keep.into_iter().unzip();
    let new = Builder::new(m, InsertPoint::Before(op))
        .with_loc(loc)
        .bufferization_dealloc(&memrefs, &conds, &p.retained);
    let new_results = m.results(new).to_vec();
    let old_results = m.results(op).to_vec();
    for ((old, nr), mut ex) in old_results.into_iter().zip(new_results).zip(extra) {
        ex.push(nr);
        let v = or_all(m, op, &ex);
        m.replace_all_uses(old, v);
    }
    m.erase_op(op);
    true
}

/// `%c = clone %x; ...; memref.dealloc %a` where `%x` is `%a` or a packed
/// view of it and nothing between touches `%a`: `%c` becomes `%x`.
struct ForwardClone;

impl Pattern for ForwardClone {
    fn name(&self) -> &'static str {
        "forward-clone-of-freed-buffer"
    }
    fn root(&self) -> Option<&'static str> {
        Some(BufferizationOp::Clone.name())
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        let (Some(x), Some(c)) = (m.operand(op, 0), m.result(op, 0)) else {
            return Ok(false);
        };
        let packed = m
            .value_type(x)
            .as_memref()
            .is_some_and(ir::types::MemRefType::is_identity_layout);
        let a = view_base(m, x);
        if !packed || m.value_type(x) != m.value_type(c) || !is_owned_allocation(m, a) {
            return Ok(false);
        }
        let Some(free) = next_free(m, op, a) else {
            return Ok(false);
        };
        m.replace_all_uses(c, x);
        m.erase_op(op);
        m.erase_op(free);
        Ok(true)
    }
}

/// The `memref.dealloc %a` after `op` in its block, if no op between uses
/// a value that may point into `%a`.
fn next_free(m: &Module, op: OpId, a: ValueId) -> Option<OpId> {
    let mut alias = AliasInfo::new();
    let target = Origin::Alloc(a);
    let mut cur = m.next_op(op);
    while let Some(o) = cur {
        let frees_a = m.is(o, MemrefOp::Dealloc)
            && m.operand(o, 0) == Some(a)
            && m.attr(o, crate::ownership::MANUAL_DEALLOCATION).is_none();
        if frees_a {
            return Some(o);
        }
        for n in m.collect_ops(o) {
            for &v in m.operands(n) {
                if ir::dialects::is_memref(m.value_type(v))
                    && alias
                        .origins(m, v)
                        .list
                        .iter()
                        .any(|x| may_overlap(x, &target))
                {
                    return None;
                }
            }
        }
        cur = m.next_op(o);
    }
    None
}
