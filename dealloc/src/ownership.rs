//! `ownership-based-deallocation`: frees every buffer a function allocates,
//! right after the last use of any value that may point into it.
//!
//! Ownership ("who must free this memory") is decided per origin (see
//! `alias`): results of `memref.alloc`, `memref.realloc`,
//! `bufferization.clone` and of calls to functions defined in the module
//! (whose results are caller-owned by the ABI below) are owned by the block
//! that defines them;
//! `memref.alloca`, allocations marked `bufferization.manual_deallocation`,
//! function arguments (caller-owned), globals and unknown values are not.
//! Because a value carries the set of origins it may point into, views and
//! `arith.select` merges need no runtime ownership flag: each owned origin
//! stays alive until its last alias dies, and is freed once.
//!
//! Frees are emitted as `bufferization.dealloc (...) if (%true)`, one per
//! program point; `dealloc-simplification` turns them into `memref.dealloc`.
//!
//! Function boundary: results must be fresh buffers the caller then owns.
//! A returned allocation is handed over as is, and so is a packed view of
//! one (identity layout: offset 0, row-major, e.g. a final Reshape): views
//! keep the allocated pointer the caller frees. A `select` of owned
//! allocations is handed over through the `retain` list of the final
//! dealloc (the non-returned candidate is freed at run time). A packed
//! view of a buffer owned only at run time (an `scf.if`/`for`/`while`
//! result, a flagged block argument) is handed over when its flag is set
//! and copied otherwise (`scf.if %flag`). Anything else (an argument, a
//! global, a strided view, a value sharing memory with another result) is
//! returned as a `bufferization.clone`.
//!
//! Structured control flow (`scf.if`, `scf.for`, `scf.while`) is handled
//! with runtime `i1` ownership flags (see `regions`): a loop init whose only
//! use is the loop hands its ownership to the loop. Memrefs crossing the
//! blocks of a function body (`cf.br`, `cf.cond_br`, loops from back edges)
//! get flags too (see `cfg`). Shapes not handled (branch ops other than
//! those two, other region ops carrying memrefs, external calls returning
//! memrefs, ops of unknown ownership) are rejected with a diagnostic naming
//! the op, never compiled into wrong frees.

use crate::alias::{returns_fresh, AliasInfo};
use crate::cfg::{Cfg, Death};
use crate::place::place;
use crate::regions::{self, Flagged};
use crate::support::check_supported;
use ir::dialects::{is_memref, op_error};
use ir::entity::{EntitySet, SecondaryMap};
use ir::pass::{Pass, PassContext, PassInfo};
use ir::registry::Traits;
use ir::{BlockId, Builder, InsertPoint, Module, OpId, Result, ValueDef, ValueId};
use ir::{FuncOp, MemrefOp};

/// Marks allocations and frees the program manages itself (upstream's name).
pub const MANUAL_DEALLOCATION: &str = "bufferization.manual_deallocation";

pub struct OwnershipBasedDeallocation {
    /// `private-function-dynamic-ownership`: see `dynamic`.
    pub dynamic: bool,
}

impl Pass for OwnershipBasedDeallocation {
    fn name(&self) -> &'static str {
        "ownership-based-deallocation"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let stats = deallocate_module(m, self.dynamic)?;
        cx.bump(
            "ownership-based-deallocation.deallocs",
            stats.deallocs as u64,
        );
        cx.bump("ownership-based-deallocation.clones", stats.clones as u64);
        cx.bump(
            "ownership-based-deallocation.guarded-clones",
            stats.guarded_clones as u64,
        );
        Ok(())
    }
}

pub fn pass_info() -> PassInfo {
    PassInfo {
        name: "ownership-based-deallocation",
        summary: "free every owned buffer after its last use; results become caller-owned",
        create: |o| {
            Ok(Box::new(OwnershipBasedDeallocation {
                dynamic: o.flag("private-function-dynamic-ownership"),
            }))
        },
    }
}

/// What the pass inserted.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// `bufferization.dealloc` ops.
    pub deallocs: usize,
    /// `bufferization.clone` ops for results the caller could not own.
    pub clones: usize,
    /// Clones made only when a result's ownership flag is false.
    pub guarded_clones: usize,
}

/// Runs the pass on every function with a body.
pub fn deallocate_module(m: &mut Module, dynamic: bool) -> Result<Stats> {
    let mut stats = Stats::default();
    if dynamic {
        for f in m.top_level_ops(FuncOp::Func) {
            check_supported(m, f)?;
        }
        crate::dynamic::prepare(m);
    }
    for f in m.top_level_ops(FuncOp::Func) {
        if ir::dialects::func::is_declaration(m, f) {
            continue;
        }
        let s = deallocate_function(m, f)?;
        stats.deallocs += s.deallocs;
        stats.clones += s.clones;
        stats.guarded_clones += s.guarded_clones;
    }
    Ok(stats)
}

/// True if an allocation result is freed by this pass (not stack, not manual).
pub fn is_owned_allocation(m: &Module, v: ValueId) -> bool {
    if !is_memref(m.value_type(v)) {
        return false;
    }
    let Some(op) = m.defining_op(v) else {
        return false;
    };
    let allocates = m.has_trait(op, Traits::ALLOCATES) && !m.is(op, MemrefOp::Alloca);
    (allocates || returns_fresh(m, op)) && m.attr(op, MANUAL_DEALLOCATION).is_none()
}

/// Per-function state.
pub(crate) struct FuncState {
    pub(crate) alias: AliasInfo,
    /// Roots (buffers this function frees) in program order.
    pub(crate) roots: Vec<ValueId>,
    /// Root → the `i1` that says at run time whether it is owned.
    pub(crate) cond: SecondaryMap<ValueId, Option<ValueId>>,
    /// Root → the op of its home block after which it is dead (`Some(None)`:
    /// it is an unused block argument, dead at the block start; `None`: not
    /// a root).
    pub(crate) last: SecondaryMap<ValueId, Option<Option<OpId>>>,
    /// Roots freed by a `memref.realloc` or handed to a loop (the op).
    pub(crate) consumed: SecondaryMap<ValueId, Option<OpId>>,
    pub(crate) flagged: Flagged,
}

/// The block a root lives in: its defining op's or its argument's.
fn home_block(m: &Module, v: ValueId) -> Option<BlockId> {
    match m.value_def(v) {
        ValueDef::Result(op, _) => m.op_block(op),
        ValueDef::BlockArg(b, _) => Some(b),
        ValueDef::Erased => None,
    }
}

pub fn deallocate_function(m: &mut Module, f: OpId) -> Result<Stats> {
    check_supported(m, f)?;
    let Some(body) = m.region(f, 0) else {
        return Ok(Stats::default());
    };
    let Some(entry) = m.entry_block(body) else {
        return Ok(Stats::default());
    };
    let (truth, falsity) = {
        let mut b = Builder::new(m, InsertPoint::Start(entry));
        (b.const_bool(true), b.const_bool(false))
    };
    let mut st = FuncState {
        alias: AliasInfo::new(),
        roots: Vec::new(),
        cond: SecondaryMap::default(),
        last: SecondaryMap::default(),
        consumed: SecondaryMap::default(),
        flagged: regions::add_flags(m, f, falsity),
    };
    regions::add_call_flags(m, f, &mut st.flagged);
    ir::cancel::check()?;
    let mut cfg = if m.region_blocks(body).len() > 1 {
        Some(Cfg::new(m, body, falsity, &mut st.flagged)?)
    } else {
        None
    };
    if m.attr(f, crate::dynamic::DYNAMIC_OWNERSHIP).is_some() {
        for ret in returns(m, f) {
            regions::flag_return(m, ret, falsity, &mut st.flagged);
        }
    }
    ir::cancel::check()?;
    let transfers = loop_transfers(m, &st.flagged);
    let moved: EntitySet<ValueId> = transfers.iter().map(|t| t.0).collect();
    st.alias = match &cfg {
        Some(c) => c.seed(m, f, &st.flagged, &moved),
        None => {
            let mut a = AliasInfo::new();
            regions::seed_args(m, &st.flagged, &mut a);
            regions::seed_results(m, f, &st.flagged, &mut a, &moved);
            a
        }
    };
    if let Some(c) = &cfg {
        for a in c.flagged_args(m) {
            if let Some(fl) = st.flagged.flag[a] {
                st.roots.push(a);
                st.cond[a] = Some(fl);
                st.last[a] = Some(None);
            }
        }
    }
    walk(m, f, &mut st, truth, cfg.as_mut())?;
    if let Some(c) = cfg.as_mut() {
        c.solve(m);
    }
    let consumed = st.consumed.iter().filter_map(|(v, op)| op.map(|o| (v, o)));
    for (src, op) in consumed {
        let final_use = match &cfg {
            Some(c) if c.is_cfg_root(m, src) => c.is_final_use(m, src, op),
            _ => st.last[src] == Some(Some(op)),
        };
        if !final_use {
            return Err(op_error(
                m,
                op,
                "the source of memref.realloc is used after the realloc",
            ));
        }
    }
    for (x, op, slot) in transfers {
        let Some(c) = st.cond[x] else { continue };
        st.consumed[x] = Some(op);
        m.set_operand(op, slot, c);
    }
    let deaths = deaths(m, &st, cfg.as_ref())?;
    let stats = place(m, f, &mut st, truth, &deaths, cfg.as_ref())?;
    if let Some(c) = &cfg {
        c.fold_constant_flags(m);
    }
    for c in [truth, falsity] {
        if !m.has_uses(c) {
            if let Some(d) = m.defining_op(c) {
                m.erase_op(d);
            }
        }
    }
    Ok(stats)
}

/// The `func.return` ops ending blocks of `f`'s body.
pub(crate) fn returns(m: &Module, f: OpId) -> Vec<OpId> {
    let Some(body) = m.region(f, 0) else {
        return Vec::new();
    };
    m.region_blocks(body)
        .iter()
        .filter_map(|&b| m.last_op(b))
        .filter(|&t| m.is(t, FuncOp::Return))
        .collect()
}

/// Collects the roots and their last uses.
fn walk(
    m: &Module,
    f: OpId,
    st: &mut FuncState,
    truth: ValueId,
    mut cfg: Option<&mut Cfg>,
) -> Result<()> {
    let region_ops: EntitySet<OpId> = st.flagged.ops.iter().copied().collect();
    // Pre-order visits the ops of a block in order, each before the ops
    // nested in it, so the last ancestor seen is the last use.
    let ops = m.collect_ops(f);
    for &op in ops.iter().skip(1) {
        ir::cancel::check()?;
        if region_ops.contains(op) {
            for &r in m.regions(op) {
                for &b in m.region_blocks(r) {
                    for &a in m.block_args(b) {
                        if let Some(fl) = st.flagged.flag[a] {
                            st.roots.push(a);
                            st.cond[a] = Some(fl);
                            st.last[a] = Some(None);
                        }
                    }
                }
            }
        }
        for &r in m.results(op) {
            let cond = if is_owned_allocation(m, r) {
                Some(truth)
            } else {
                st.flagged.flag[r]
            };
            if let Some(c) = cond {
                st.roots.push(r);
                st.cond[r] = Some(c);
                st.last[r] = Some(Some(op));
            }
        }
        for &v in m.operands(op) {
            if !is_memref(m.value_type(v)) {
                continue;
            }
            let allocs: Vec<ValueId> = st.alias.origins(m, v).allocs().collect();
            for r in allocs {
                if st.last[r].is_none() {
                    continue;
                }
                if let Some(c) = cfg.as_deref_mut().filter(|c| c.is_cfg_root(m, r)) {
                    c.record_use(m, r, op);
                    continue;
                }
                let Some(anc) = home_block(m, r).and_then(|b| m.ancestor_in_block(b, op)) else {
                    return Err(op_error(
                        m,
                        op,
                        "uses a buffer outside the block that allocates it",
                    ));
                };
                st.last[r] = Some(Some(anc));
            }
        }
        check_frees(m, op, st)?;
    }
    Ok(())
}

/// Where every root not handed over dies, in root order.
fn deaths(m: &Module, st: &FuncState, cfg: Option<&Cfg>) -> Result<Vec<(Death, ValueId)>> {
    let mut out = Vec::new();
    for &r in &st.roots {
        if st.consumed[r].is_some() {
            continue;
        }
        if let Some(c) = cfg.filter(|c| c.is_cfg_root(m, r)) {
            out.extend(c.deaths(m, r)?.into_iter().map(|d| (d, r)));
            continue;
        }
        let at = match st.last[r] {
            Some(Some(op)) => Death::After(op),
            Some(None) => match home_block(m, r) {
                Some(b) => Death::Start(b),
                None => continue,
            },
            None => continue,
        };
        out.push((at, r));
    }
    Ok(out)
}

/// Loop inits whose last use is the loop: the loop takes over their
/// ownership (root, loop, flag operand index).
fn loop_transfers(m: &Module, fl: &Flagged) -> Vec<(ValueId, OpId, usize)> {
    let mut out = Vec::new();
    for &op in &fl.ops {
        let Some(pairs) = &fl.init_flags[op] else {
            continue;
        };
        for &(i, slot) in pairs {
            let Some(x) = m.operand(op, i) else { continue };
            let root = is_owned_allocation(m, x) || group_size(m, fl, x) == 1;
            if root && dies_into(m, x, op) {
                out.push((x, op, slot));
            }
        }
    }
    out
}

/// True if `x` is used once by `op` and otherwise only before it in its
/// block, by ops that make no alias of it: nothing can reach it after `op`.
fn dies_into(m: &Module, x: ValueId, op: OpId) -> bool {
    let Some(b) = m.op_block(op) else {
        return false;
    };
    let mut at_op = 0;
    for u in m.uses(x) {
        if u.op == op {
            at_op += 1;
            continue;
        }
        let aliases =
            m.is_terminator(u.op) || m.results(u.op).iter().any(|&r| is_memref(m.value_type(r)));
        let before = m
            .ancestor_in_block(b, u.op)
            .is_some_and(|a| a != op && m.is_before_in_block(a, op));
        if aliases || !before {
            return false;
        }
    }
    at_op == 1
}

/// How many flagged values share fate with `x` (0 if `x` is not flagged):
/// the flagged results of its op, or flagged arguments of its block.
pub(crate) fn group_size(m: &Module, fl: &Flagged, x: ValueId) -> usize {
    if fl.flag[x].is_none() {
        return 0;
    }
    let peers = match m.value_def(x) {
        ValueDef::Result(op, _) => m.results(op),
        ValueDef::BlockArg(b, _) => m.block_args(b),
        ValueDef::Erased => return 0,
    };
    peers.iter().filter(|&&p| fl.flag[p].is_some()).count()
}

/// Checks the ops that free memory themselves: `memref.realloc` consumes an
/// owned buffer; manual frees must not touch buffers this pass frees.
fn check_frees(m: &Module, op: OpId, st: &mut FuncState) -> Result<()> {
    let frees = m.is(op, MemrefOp::Dealloc) || m.is(op, MemrefOp::Realloc);
    let Some(src) = m.operand(op, 0).filter(|_| frees) else {
        return Ok(());
    };
    if m.attr(op, MANUAL_DEALLOCATION).is_some() {
        if st
            .alias
            .origins(m, src)
            .allocs()
            .any(|r| is_owned_allocation(m, r))
        {
            return Err(op_error(
                m,
                op,
                format!("frees a buffer that is deallocated automatically; mark its allocation with '{MANUAL_DEALLOCATION}'"),
            ));
        }
        return Ok(());
    }
    if m.is(op, MemrefOp::Realloc) {
        // An owned allocation result is its own only origin: no view, no select.
        let same_block = m.defining_op(src).and_then(|d| m.op_block(d)) == m.op_block(op);
        if !is_owned_allocation(m, src) || !same_block {
            return Err(op_error(
                m,
                op,
                "the source must be a buffer allocated (and owned) in the same block: realloc frees it",
            ));
        }
        st.consumed[src] = Some(op);
    }
    Ok(())
}
