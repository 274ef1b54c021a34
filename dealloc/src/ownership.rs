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
//! A returned allocation is handed over as is; a `select` of owned
//! allocations is handed over through the `retain` list of the final
//! dealloc (the non-returned candidate is freed at run time); anything else
//! (an argument, a global, a view, a value sharing memory with another
//! result) is returned as a `bufferization.clone`.
//!
//! Structured control flow (`scf.if`, `scf.for`, `scf.while`) is handled
//! with runtime `i1` ownership flags (see `regions`): a loop init whose only
//! use is the loop hands its ownership to the loop. Shapes not handled yet
//! (memrefs crossing blocks of a CFG, other region ops carrying memrefs,
//! external calls returning memrefs, ops of unknown ownership) are rejected
//! with a diagnostic naming the op, never compiled into wrong frees.

use crate::alias::{returns_fresh, AliasInfo, Origins};
use crate::regions::{self, Flagged};
use crate::support::check_supported;
use ir::dialects::bufferization::segment_attr;
use ir::dialects::{is_memref, op_error};
use ir::pass::{Pass, PassContext, PassInfo};
use ir::registry::Traits;
use ir::{
    BlockId, Builder, InsertPoint, Module, OpId, OpSpec, Result, Sym, Type, ValueDef, ValueId,
};
use std::collections::{HashMap, HashSet};

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
}

/// Runs the pass on every function with a body.
pub fn deallocate_module(m: &mut Module, dynamic: bool) -> Result<Stats> {
    let mut stats = Stats::default();
    if dynamic {
        for f in m.top_level_ops("func.func") {
            check_supported(m, f)?;
        }
        crate::dynamic::prepare(m);
    }
    for f in m.top_level_ops("func.func") {
        if ir::dialects::func::is_declaration(m, f) {
            continue;
        }
        let s = deallocate_function(m, f)?;
        stats.deallocs += s.deallocs;
        stats.clones += s.clones;
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
    let allocates = m.has_trait(op, Traits::ALLOCATES) && !m.is(op, "memref.alloca");
    (allocates || returns_fresh(m, op)) && m.attr(op, MANUAL_DEALLOCATION).is_none()
}

/// Per-function state.
struct FuncState {
    alias: AliasInfo,
    /// Roots (buffers this function frees) in program order.
    roots: Vec<ValueId>,
    /// Root → the `i1` that says at run time whether it is owned.
    cond: HashMap<ValueId, ValueId>,
    /// Root → the op of its home block after which it is dead (`None`: it
    /// is an unused block argument, dead at the block start).
    last: HashMap<ValueId, Option<OpId>>,
    /// Roots freed by a `memref.realloc` or handed to a loop (the op).
    consumed: HashMap<ValueId, OpId>,
    flagged: Flagged,
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
    let Some(entry) = m.region(f, 0).and_then(|r| m.entry_block(r)) else {
        return Ok(Stats::default());
    };
    let (truth, falsity) = {
        let mut b = Builder::new(m, InsertPoint::Start(entry));
        (b.const_bool(true), b.const_bool(false))
    };
    let mut st = FuncState {
        alias: AliasInfo::new(),
        roots: Vec::new(),
        cond: HashMap::new(),
        last: HashMap::new(),
        consumed: HashMap::new(),
        flagged: regions::add_flags(m, f, falsity),
    };
    regions::add_call_flags(m, f, &mut st.flagged);
    let dynamic = m.attr(f, crate::dynamic::DYNAMIC_OWNERSHIP).is_some();
    if let Some(ret) = m
        .last_op(entry)
        .filter(|&t| dynamic && m.is(t, "func.return"))
    {
        regions::flag_return(m, ret, falsity, &mut st.flagged);
    }
    regions::seed_args(m, &st.flagged, &mut st.alias);
    let transfers = loop_transfers(m, &st.flagged);
    let moved: HashSet<ValueId> = transfers.iter().map(|t| t.0).collect();
    regions::seed_results(m, f, &st.flagged, &mut st.alias, &moved);
    let region_ops: HashSet<OpId> = st.flagged.ops.iter().copied().collect();
    // Pre-order visits the ops of a block in order, each before the ops
    // nested in it, so the last ancestor seen is the last use.
    let ops = m.collect_ops(f);
    for &op in ops.iter().skip(1) {
        if region_ops.contains(&op) {
            for &r in m.regions(op) {
                for &b in m.region_blocks(r) {
                    for &a in m.block_args(b) {
                        if let Some(&fl) = st.flagged.flag.get(&a) {
                            st.roots.push(a);
                            st.cond.insert(a, fl);
                            st.last.insert(a, None);
                        }
                    }
                }
            }
        }
        for &r in m.results(op) {
            let cond = if is_owned_allocation(m, r) {
                Some(truth)
            } else {
                st.flagged.flag.get(&r).copied()
            };
            if let Some(c) = cond {
                st.roots.push(r);
                st.cond.insert(r, c);
                st.last.insert(r, Some(op));
            }
        }
        for &v in m.operands(op) {
            if !is_memref(m.value_type(v)) {
                continue;
            }
            let allocs: Vec<ValueId> = st.alias.origins(m, v).allocs().collect();
            for r in allocs {
                if !st.last.contains_key(&r) {
                    continue;
                }
                let Some(anc) = home_block(m, r).and_then(|b| m.ancestor_in_block(b, op)) else {
                    return Err(op_error(
                        m,
                        op,
                        "uses a buffer outside the block that allocates it",
                    ));
                };
                st.last.insert(r, Some(anc));
            }
        }
        check_frees(m, op, &mut st)?;
    }
    for (&src, &op) in &st.consumed {
        if st.last.get(&src) != Some(&Some(op)) {
            return Err(op_error(
                m,
                op,
                "the source of memref.realloc is used after the realloc",
            ));
        }
    }
    for (x, op, slot) in transfers {
        let Some(&c) = st.cond.get(&x) else { continue };
        st.consumed.insert(x, op);
        m.set_operand(op, slot, c);
    }
    let stats = place(m, f, &mut st, truth)?;
    for c in [truth, falsity] {
        if !m.has_uses(c) {
            if let Some(d) = m.defining_op(c) {
                m.erase_op(d);
            }
        }
    }
    Ok(stats)
}

/// Loop inits whose only use is the loop: the loop takes over their
/// ownership (root, loop, flag operand index).
fn loop_transfers(m: &Module, fl: &Flagged) -> Vec<(ValueId, OpId, usize)> {
    let mut out = Vec::new();
    for &op in &fl.ops {
        let Some(pairs) = fl.init_flags.get(&op) else {
            continue;
        };
        for &(i, slot) in pairs {
            let Some(x) = m.operand(op, i) else { continue };
            let single_use = m.uses(x).len() == 1;
            let root = is_owned_allocation(m, x) || group_size(m, fl, x) == 1;
            if single_use && root {
                out.push((x, op, slot));
            }
        }
    }
    out
}

/// How many flagged values share fate with `x` (0 if `x` is not flagged):
/// the flagged results of its op, or flagged arguments of its block.
fn group_size(m: &Module, fl: &Flagged, x: ValueId) -> usize {
    if !fl.flag.contains_key(&x) {
        return 0;
    }
    let peers = match m.value_def(x) {
        ValueDef::Result(op, _) => m.results(op),
        ValueDef::BlockArg(b, _) => m.block_args(b),
        ValueDef::Erased => return 0,
    };
    peers.iter().filter(|p| fl.flag.contains_key(p)).count()
}

/// Checks the ops that free memory themselves: `memref.realloc` consumes an
/// owned buffer; manual frees must not touch buffers this pass frees.
fn check_frees(m: &Module, op: OpId, st: &mut FuncState) -> Result<()> {
    let frees = m.is(op, "memref.dealloc") || m.is(op, "memref.realloc");
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
    if m.is(op, "memref.realloc") {
        // An owned allocation result is its own only origin: no view, no select.
        let same_block = m.defining_op(src).and_then(|d| m.op_block(d)) == m.op_block(op);
        if !is_owned_allocation(m, src) || !same_block {
            return Err(op_error(
                m,
                op,
                "the source must be a buffer allocated (and owned) in the same block: realloc frees it",
            ));
        }
        st.consumed.insert(src, op);
    }
    Ok(())
}

/// How a returned value reaches the caller.
enum Handover {
    /// The value is an owned allocation: not freed here.
    Direct(ValueId),
    /// Exactly one of its owned origins: retained by the final dealloc.
    Retain,
    /// Anything else: a copy.
    Clone,
}

fn handover(
    st: &FuncState,
    truth: ValueId,
    v: ValueId,
    origins: &Origins,
    claimed: &HashSet<ValueId>,
) -> Handover {
    let owned = |r: &ValueId| st.cond.contains_key(r) && !st.consumed.contains_key(r);
    let all_owned = origins.list.len() == origins.allocs().count()
        && origins.allocs().all(|r| owned(&r) && !claimed.contains(&r));
    if !origins.exact || !all_owned {
        return Handover::Clone;
    }
    if origins.list.len() == 1 && origins.allocs().eq([v]) && st.cond.get(&v) == Some(&truth) {
        Handover::Direct(v)
    } else {
        Handover::Retain
    }
}

/// Where a group of roots dies.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
enum Death {
    After(OpId),
    Start(BlockId),
}

/// Inserts the frees, and clones for results the caller cannot own.
fn place(m: &mut Module, f: OpId, st: &mut FuncState, truth: ValueId) -> Result<Stats> {
    let mut stats = Stats::default();
    let Some(entry) = m.region(f, 0).and_then(|r| m.entry_block(r)) else {
        return Ok(stats);
    };
    let dynamic = m.attr(f, crate::dynamic::DYNAMIC_OWNERSHIP).is_some();
    // A function returning ownership flags retains its results through
    // the flag slots of its return, like a region terminator.
    let ret = m
        .last_op(entry)
        .filter(|&t| m.is(t, "func.return") && !dynamic);
    let mut transferred = HashSet::new();
    let mut retained = Vec::new();
    if let Some(ret) = ret {
        let mut claimed = HashSet::new();
        for i in 0..m.operands(ret).len() {
            let v = m.operands(ret)[i];
            if !is_memref(m.value_type(v)) {
                continue;
            }
            let origins = st.alias.origins(m, v).clone();
            match handover(st, truth, v, &origins, &claimed) {
                Handover::Direct(r) => {
                    transferred.insert(r);
                    claimed.insert(r);
                }
                Handover::Retain => {
                    retained.push(v);
                    claimed.extend(origins.allocs());
                }
                Handover::Clone => {
                    let ty = m.value_type(v).clone();
                    let loc = m.loc(ret).clone();
                    let mut b = Builder::new(m, InsertPoint::Before(ret)).with_loc(loc);
                    let c = b.op1("bufferization.clone", &[v], ty, &[]);
                    m.set_operand(ret, i, c);
                    stats.clones += 1;
                }
            }
        }
    }
    // Group the dead owned buffers by the point where they die.
    let mut deaths: Vec<(Death, Vec<ValueId>)> = Vec::new();
    let mut slot: HashMap<Death, usize> = HashMap::new();
    for &r in &st.roots {
        if transferred.contains(&r) || st.consumed.contains_key(&r) {
            continue;
        }
        let at = match st.last.get(&r) {
            Some(Some(op)) => Death::After(*op),
            Some(None) => match home_block(m, r) {
                Some(b) => Death::Start(b),
                None => continue,
            },
            None => continue,
        };
        let k = *slot.entry(at).or_insert_with(|| {
            deaths.push((at, Vec::new()));
            deaths.len() - 1
        });
        if let Some(d) = deaths.get_mut(k) {
            d.1.push(r);
        }
    }
    let slots: HashMap<OpId, Vec<(usize, usize)>> = st
        .flagged
        .slots
        .iter()
        .map(|s| (s.term, s.pairs.clone()))
        .collect();
    for (at, memrefs) in deaths {
        let conds: Vec<ValueId> = memrefs
            .iter()
            .filter_map(|r| st.cond.get(r).copied())
            .collect();
        let (ip, loc, keep, pairs) = match at {
            Death::Start(b) => {
                let loc = m
                    .first_op(b)
                    .map_or_else(|| m.loc(f).clone(), |o| m.loc(o).clone());
                (InsertPoint::Start(b), loc, Vec::new(), Vec::new())
            }
            Death::After(op) => {
                let loc = m.loc(op).clone();
                if Some(op) == ret {
                    (InsertPoint::Before(op), loc, retained.clone(), Vec::new())
                } else if let Some(pairs) = slots.get(&op) {
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
        let d = emit_dealloc(m, ip, &memrefs, &conds, &keep, loc.clone());
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
        if let Death::After(term) = at {
            let owned = m.results(d).to_vec();
            for (&(_, fi), &o) in pairs.iter().zip(&owned) {
                m.set_operand(term, fi, o);
            }
        }
    }
    Ok(stats)
}

/// `bufferization.dealloc (memrefs) if (conds) retain (retained)` at `ip`.
pub fn emit_dealloc(
    m: &mut Module,
    ip: InsertPoint,
    memrefs: &[ValueId],
    conds: &[ValueId],
    retained: &[ValueId],
    loc: ir::Location,
) -> OpId {
    let mut operands = memrefs.to_vec();
    operands.extend_from_slice(conds);
    operands.extend_from_slice(retained);
    let op = m.create_op(
        Sym::new("bufferization.dealloc"),
        OpSpec {
            operands,
            result_types: vec![Type::i1(); retained.len()],
            attrs: vec![(
                Sym::new("operandSegmentSizes"),
                segment_attr(memrefs.len(), retained.len()),
            )],
            loc,
            ..OpSpec::default()
        },
    );
    m.insert(op, ip);
    op
}
