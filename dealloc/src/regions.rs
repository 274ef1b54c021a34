//! Ownership across `scf.if`, `scf.for` and `scf.while`.
//!
//! Every memref a region op passes around (results, loop-carried block
//! arguments, values forwarded by `scf.yield` / `scf.condition`) gets an
//! `i1` companion appended to the same list: true if the receiver owns the
//! buffer and must free it. The flags are computed at run time by the
//! `retain` list of the dealloc placed before each terminator, so no copy is
//! needed when a branch yields a buffer it does not own.
//!
//! For the static analysis a flagged value is its own allocation root (freed
//! under its flag) plus the *external* origins: the buffers from outside the
//! op it may point into, which must stay alive as long as it does.

use crate::alias::{AliasInfo, Origin, Origins};
use ir::dialects::is_memref;
use ir::entity::{EntitySet, SecondaryMap};
use ir::ScfOp;
use ir::{InsertPoint, Module, OpId, OpSpec, Type, ValueDef, ValueId};
use smallvec::SmallVec;
use std::collections::HashSet;

/// The region ops whose memrefs this module gives ownership flags.
pub fn is_flaggable(m: &Module, op: OpId) -> bool {
    m.is(op, ScfOp::For) || m.is(op, ScfOp::If) || m.is(op, ScfOp::While)
}

/// True if the op passes memrefs in or out of its regions.
pub fn carries_memrefs(m: &Module, op: OpId) -> bool {
    let mem = |vs: &[ValueId]| vs.iter().any(|&v| is_memref(m.value_type(v)));
    is_flaggable(m, op) && (mem(m.results(op)) || (!m.is(op, ScfOp::If) && mem(m.operands(op))))
}

/// A terminator whose memref operands carry flags.
pub struct FlagSlots {
    pub term: OpId,
    /// (operand index of a memref, operand index of its flag).
    pub pairs: Vec<(usize, usize)>,
}

/// What `add_flags` made.
#[derive(Default)]
pub struct Flagged {
    /// Flagged memref (region result or block argument) → its flag.
    pub flag: SecondaryMap<ValueId, Option<ValueId>>,
    /// The rebuilt region ops, in pre-order.
    pub ops: Vec<OpId>,
    /// Terminators to fill once flags are known.
    pub slots: Vec<FlagSlots>,
    /// Loop init operand index → flag operand index, per rebuilt loop.
    pub init_flags: SecondaryMap<OpId, Option<Vec<(usize, usize)>>>,
}

fn memref_positions(m: &Module, vs: &[ValueId]) -> Vec<usize> {
    (0..vs.len())
        .filter(|&i| vs.get(i).is_some_and(|&v| is_memref(m.value_type(v))))
        .collect()
}

/// Rebuilds every region op of `f` that carries memrefs with flags appended;
/// every new flag operand starts as `placeholder`.
pub fn add_flags(m: &mut Module, f: OpId, placeholder: ValueId) -> Flagged {
    let mut out = Flagged::default();
    let ops: Vec<OpId> = m
        .collect_ops(f)
        .into_iter()
        .filter(|&o| carries_memrefs(m, o))
        .collect();
    for op in ops {
        let new = rebuild(m, op, placeholder, &mut out);
        out.ops.push(new);
    }
    out
}

/// Appends `placeholder` flags after the memref operands at `positions`
/// (relative to `base`) of terminator `term`.
fn flag_terminator(
    m: &mut Module,
    term: OpId,
    base: usize,
    placeholder: ValueId,
    out: &mut Flagged,
) {
    let mut ops = m.operands(term).to_vec();
    let tail: Vec<ValueId> = ops.get(base..).map(<[ValueId]>::to_vec).unwrap_or_default();
    let mut pairs = Vec::new();
    for p in memref_positions(m, &tail) {
        pairs.push((base + p, ops.len()));
        ops.push(placeholder);
    }
    if !pairs.is_empty() {
        m.set_operands(term, &ops);
        out.slots.push(FlagSlots { term, pairs });
    }
}

/// Appends an `i1` block argument per memref argument at `positions`.
fn flag_args(m: &mut Module, b: ir::BlockId, skip: usize, out: &mut Flagged) {
    let args: Vec<ValueId> = m.block_args(b).iter().skip(skip).copied().collect();
    for p in memref_positions(m, &args) {
        let Some(&a) = args.get(p) else { continue };
        let fl = m.add_block_arg(b, Type::i1());
        out.flag[a] = Some(fl);
    }
}

fn rebuild(m: &mut Module, op: OpId, placeholder: ValueId, out: &mut Flagged) -> OpId {
    let name = m.name(op);
    let old_results = m.results(op).to_vec();
    let mut operands = m.operands(op).to_vec();
    let init_base = if m.is(op, ScfOp::For) { 3 } else { 0 };
    let mut init_pairs = Vec::new();
    if !m.is(op, ScfOp::If) {
        let inits: Vec<ValueId> = operands.get(init_base..).unwrap_or_default().to_vec();
        for p in memref_positions(m, &inits) {
            init_pairs.push((init_base + p, operands.len()));
            operands.push(placeholder);
        }
    }
    let mem_res = memref_positions(m, &old_results);
    let mut types: Vec<Type> = old_results
        .iter()
        .map(|&r| m.value_type(r).clone())
        .collect();
    types.extend(mem_res.iter().map(|_| Type::i1()));
    let spec = OpSpec {
        operands,
        result_types: types,
        attrs: m.attrs(op).to_vec(),
        regions: m.regions(op).len(),
        successors: Vec::new(),
        loc: m.loc(op).clone(),
    };
    let new = m.create_op(name, spec);
    m.insert(new, InsertPoint::Before(op));
    let old_regions = m.regions(op).to_vec();
    let new_regions = m.regions(new).to_vec();
    for (&from, &to) in old_regions.iter().zip(&new_regions) {
        m.take_blocks(from, to);
    }
    let new_results = m.results(new).to_vec();
    for (&old, &nv) in old_results.iter().zip(&new_results) {
        m.replace_all_uses(old, nv);
    }
    for (k, &i) in mem_res.iter().enumerate() {
        if let (Some(&r), Some(&fl)) = (new_results.get(i), new_results.get(old_results.len() + k))
        {
            out.flag[r] = Some(fl);
        }
    }
    m.erase_op(op);
    out.init_flags[new] = Some(init_pairs);
    let blocks: Vec<ir::BlockId> = new_regions
        .iter()
        .filter_map(|&r| m.entry_block(r))
        .collect();
    for (i, &b) in blocks.iter().enumerate() {
        // scf.for: skip the induction variable; scf.condition: skip the condition.
        let skip_arg = usize::from(m.is(new, ScfOp::For));
        flag_args(m, b, skip_arg, out);
        if let Some(t) = m.last_op(b) {
            let base = usize::from(m.is(new, ScfOp::While) && i == 0);
            flag_terminator(m, t, base, placeholder, out);
        }
    }
    new
}

/// The op or block argument owner that defines `v`.
fn defined_inside(m: &Module, v: ValueId, op: OpId) -> bool {
    match m.value_def(v) {
        ValueDef::Result(d, _) => m.is_ancestor(op, d),
        ValueDef::BlockArg(b, _) => m.block_parent_op(b).is_some_and(|p| m.is_ancestor(op, p)),
        ValueDef::Erased => false,
    }
}

fn origin_value(o: &Origin) -> Option<ValueId> {
    match o {
        Origin::Alloc(v) | Origin::Arg(v) | Origin::Unknown(v) => Some(*v),
        Origin::Global(_) => None,
    }
}

/// Seeds `alias` with the origins of flagged block arguments.
pub fn seed_args(m: &Module, fl: &Flagged, alias: &mut AliasInfo) {
    // Block arguments first: an argument is its own root (grouped with the
    // memref arguments of the same block, which may share a buffer).
    for &op in &fl.ops {
        for &r in m.regions(op) {
            for &b in m.region_blocks(r) {
                let group: SmallVec<[Origin; 1]> = m
                    .block_args(b)
                    .iter()
                    .filter(|&&a| fl.flag[a].is_some())
                    .map(|&a| Origin::Alloc(a))
                    .collect();
                for &a in m.block_args(b) {
                    if fl.flag[a].is_some() {
                        // Optimistic: `seed_results` clears it when an
                        // init or a yield of the op is not exact.
                        let o = Origins {
                            list: group.clone(),
                            exact: true,
                        };
                        alias.set(a, o);
                    }
                }
            }
        }
    }
}

/// Seeds `alias` with the origins of flagged results. `transferred` lists
/// the loop inits whose ownership moves into the loop: they are not
/// external origins of the loop's results.
pub fn seed_results(
    m: &Module,
    f: OpId,
    fl: &Flagged,
    alias: &mut AliasInfo,
    transferred: &EntitySet<ValueId>,
) {
    // Inner ops before outer ones.
    let set: EntitySet<OpId> = fl.ops.iter().copied().collect();
    for op in post_order(m, f) {
        if !set.contains(op) {
            continue;
        }
        let mut sources: Vec<ValueId> = m
            .operands(op)
            .iter()
            .copied()
            .filter(|v| is_memref(m.value_type(*v)))
            .collect();
        for &r in m.regions(op) {
            for &b in m.region_blocks(r) {
                if let Some(t) = m.last_op(b) {
                    sources.extend(
                        m.operands(t)
                            .iter()
                            .copied()
                            .filter(|v| is_memref(m.value_type(*v))),
                    );
                }
            }
        }
        let mut list: SmallVec<[Origin; 1]> = m
            .results(op)
            .iter()
            .filter(|&&r| fl.flag[r].is_some())
            .map(|&r| Origin::Alloc(r))
            .collect();
        let mut seen: HashSet<Origin> = list.iter().cloned().collect();
        let mut exact = true;
        for v in sources {
            let o = alias.origins(m, v).clone();
            exact &= o.exact;
            for x in o.list {
                // A transferred init is owned by the loop from now on.
                if matches!(x, Origin::Alloc(w) if transferred.contains(w) && m.operands(op).contains(&w))
                {
                    continue;
                }
                let outer = origin_value(&x).is_none_or(|w| !defined_inside(m, w, op));
                if outer && seen.insert(x.clone()) {
                    list.push(x);
                }
            }
        }
        if !exact {
            for &r in m.regions(op) {
                for &b in m.region_blocks(r) {
                    for &a in m.block_args(b) {
                        if fl.flag[a].is_some() {
                            let mut o = alias.origins(m, a).clone();
                            o.exact = false;
                            alias.set(a, o);
                        }
                    }
                }
            }
        }
        for &r in m.results(op) {
            if fl.flag[r].is_some() {
                alias.set(
                    r,
                    Origins {
                        list: list.clone(),
                        exact,
                    },
                );
            }
        }
    }
}

/// Ops nested in `root` (not `root`), each after everything nested in it.
fn post_order(m: &Module, root: OpId) -> Vec<OpId> {
    let mut out = Vec::new();
    let mut stack = vec![(root, false)];
    while let Some((op, done)) = stack.pop() {
        if done {
            if op != root {
                out.push(op);
            }
            continue;
        }
        stack.push((op, true));
        let mut kids = Vec::new();
        for &r in m.regions(op) {
            for &b in m.region_blocks(r) {
                kids.extend(m.block_ops(b));
            }
        }
        stack.extend(kids.into_iter().rev().map(|k| (k, false)));
    }
    out
}

/// Flags the memref results of calls to functions returning ownership
/// flags (`dynamic`): the flag of memref result k is result n + k.
pub fn add_call_flags(m: &Module, f: OpId, out: &mut Flagged) {
    for op in m.collect_ops(f) {
        if !crate::dynamic::is_dynamic_call(m, op) {
            continue;
        }
        let results = m.results(op);
        let mem = memref_positions(m, results);
        let base = results.len() - mem.len();
        for (k, &i) in mem.iter().enumerate() {
            if let (Some(&r), Some(&fl)) = (results.get(i), results.get(base + k)) {
                out.flag[r] = Some(fl);
            }
        }
        out.ops.push(op);
    }
}

/// Appends flag placeholders to a `func.return` of a function returning
/// ownership flags.
pub fn flag_return(m: &mut Module, ret: OpId, placeholder: ValueId, out: &mut Flagged) {
    flag_terminator(m, ret, 0, placeholder, out);
}
