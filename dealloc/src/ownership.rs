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
//! Shapes not handled yet (memrefs crossing region or block boundaries,
//! external calls returning memrefs, ops of unknown ownership) are rejected
//! with a diagnostic naming the op, never compiled into wrong frees.

use crate::alias::{returns_fresh, AliasInfo, Origins};
use ir::dialects::bufferization::segment_attr;
use ir::dialects::{is_memref, op_error};
use ir::pass::{Pass, PassContext, PassInfo};
use ir::registry::Traits;
use ir::{Builder, InsertPoint, Module, OpId, OpSpec, Result, Sym, Type, ValueId};
use std::collections::{HashMap, HashSet};

/// Marks allocations and frees the program manages itself (upstream's name).
pub const MANUAL_DEALLOCATION: &str = "bufferization.manual_deallocation";

pub struct OwnershipBasedDeallocation;

impl Pass for OwnershipBasedDeallocation {
    fn name(&self) -> &'static str {
        "ownership-based-deallocation"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let stats = deallocate_module(m)?;
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
        create: |_| Ok(Box::new(OwnershipBasedDeallocation)),
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
pub fn deallocate_module(m: &mut Module) -> Result<Stats> {
    let mut stats = Stats::default();
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
    let Some(op) = m.defining_op(v) else {
        return false;
    };
    let allocates = m.has_trait(op, Traits::ALLOCATES) && !m.is(op, "memref.alloca");
    (allocates || returns_fresh(m, op)) && m.attr(op, MANUAL_DEALLOCATION).is_none()
}

/// Per-function state.
struct FuncState {
    alias: AliasInfo,
    /// Owned allocations in program order.
    roots: Vec<ValueId>,
    /// Owned allocation → the op of its block after which it is dead.
    last: HashMap<ValueId, OpId>,
    /// Owned allocations freed by a `memref.realloc` (the op).
    consumed: HashMap<ValueId, OpId>,
}

pub fn deallocate_function(m: &mut Module, f: OpId) -> Result<Stats> {
    check_supported(m, f)?;
    let ops = m.collect_ops(f);
    let mut st = FuncState {
        alias: AliasInfo::new(),
        roots: Vec::new(),
        last: HashMap::new(),
        consumed: HashMap::new(),
    };
    // Pre-order visits the ops of a block in order, each before the ops
    // nested in it, so the last ancestor seen is the last use.
    for &op in ops.iter().skip(1) {
        for &r in m.results(op) {
            if is_owned_allocation(m, r) {
                st.roots.push(r);
                st.last.insert(r, op);
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
                let block = m.defining_op(r).and_then(|d| m.op_block(d));
                let Some(anc) = block.and_then(|b| m.ancestor_in_block(b, op)) else {
                    return Err(op_error(
                        m,
                        op,
                        "uses a buffer outside the block that allocates it",
                    ));
                };
                st.last.insert(r, anc);
            }
        }
        check_frees(m, op, &mut st)?;
    }
    for (&src, &op) in &st.consumed {
        if st.last.get(&src) != Some(&op) {
            return Err(op_error(
                m,
                op,
                "the source of memref.realloc is used after the realloc",
            ));
        }
    }
    place(m, f, &mut st)
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

/// Rejects what phase 1 cannot deallocate correctly.
fn check_supported(m: &Module, f: OpId) -> Result<()> {
    let ops = m.collect_ops(f);
    let blocks = m.region(f, 0).map_or(0, |r| m.region_blocks(r).len());
    // Branches first: they are the precise reason when blocks pass memrefs.
    for &op in ops.iter().skip(1) {
        let name = m.name(op).as_str();
        let memref_args = m.operands(op).iter().any(|&v| is_memref(m.value_type(v)));
        if memref_args && m.num_successors(op) > 0 {
            return Err(op_error(
                m,
                op,
                format!("passing memrefs through '{name}' to another block is not supported yet"),
            ));
        }
    }
    for &op in ops.iter().skip(1) {
        let name = m.name(op).as_str();
        let memref_results = m.results(op).iter().any(|&r| is_memref(m.value_type(r)));
        let memref_operands = m.operands(op).iter().any(|&v| is_memref(m.value_type(v)));
        if blocks > 1 && (memref_results || memref_operands) {
            return Err(op_error(
                m,
                op,
                "deallocation in functions with several blocks is not supported yet",
            )
            .note(
                "memref values in unstructured control flow need per-block ownership (phase 2)",
            ));
        }
        match name {
            "memref.dealloc" if m.attr(op, MANUAL_DEALLOCATION).is_none() => {
                return Err(op_error(
                    m,
                    op,
                    format!("existing deallocations must carry '{MANUAL_DEALLOCATION}' when ownership-based deallocation runs"),
                ));
            }
            "bufferization.dealloc" => {
                return Err(op_error(
                    m,
                    op,
                    "the function is already deallocated; run ownership-based-deallocation once",
                ));
            }
            _ => {}
        }
        if memref_results && !produces_known_memref(m, op) {
            let msg = match name {
                "scf.for" | "scf.if" | "scf.while" => {
                    format!("memref-typed results of '{name}' are not supported yet")
                }
                "func.call" => "calls returning memrefs are only supported for functions defined in this module".to_string(),
                _ => "produces a memref whose ownership is unknown".to_string(),
            };
            return Err(op_error(m, op, msg));
        }
        if memref_operands && m.is_terminator(op) && !m.is(op, "func.return") {
            return Err(op_error(
                m,
                op,
                format!("passing memrefs through '{name}' to a parent region is not supported yet"),
            ));
        }
    }
    Ok(())
}

fn produces_known_memref(m: &Module, op: OpId) -> bool {
    m.has_trait(op, Traits::ALLOCATES)
        || returns_fresh(m, op)
        || m.has_trait(op, Traits::VIEW)
        || m.is(op, "memref.get_global")
        || m.is(op, "arith.select")
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

fn handover(m: &Module, v: ValueId, origins: &Origins, claimed: &HashSet<ValueId>) -> Handover {
    let all_owned = origins.list.len() == origins.allocs().count()
        && origins
            .allocs()
            .all(|r| is_owned_allocation(m, r) && !claimed.contains(&r));
    if !origins.exact || !all_owned {
        return Handover::Clone;
    }
    if origins.list.len() == 1 && origins.allocs().eq([v]) {
        Handover::Direct(v)
    } else {
        Handover::Retain
    }
}

/// Inserts the frees, and clones for results the caller cannot own.
fn place(m: &mut Module, f: OpId, st: &mut FuncState) -> Result<Stats> {
    let mut stats = Stats::default();
    let Some(entry) = m.region(f, 0).and_then(|r| m.entry_block(r)) else {
        return Ok(stats);
    };
    let ret = m.last_op(entry).filter(|&t| m.is(t, "func.return"));
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
            match handover(m, v, &origins, &claimed) {
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
    // Group the dead owned buffers by the op after which they die.
    let mut deaths: Vec<(OpId, Vec<ValueId>)> = Vec::new();
    let mut slot: HashMap<OpId, usize> = HashMap::new();
    for &r in &st.roots {
        if transferred.contains(&r) || st.consumed.contains_key(&r) {
            continue;
        }
        let Some(&at) = st.last.get(&r) else { continue };
        let k = *slot.entry(at).or_insert_with(|| {
            deaths.push((at, Vec::new()));
            deaths.len() - 1
        });
        if let Some(d) = deaths.get_mut(k) {
            d.1.push(r);
        }
    }
    if deaths.is_empty() {
        return Ok(stats);
    }
    let truth = Builder::new(m, InsertPoint::Start(entry)).const_bool(true);
    for (at, memrefs) in deaths {
        let (ip, keep) = if Some(at) == ret {
            (InsertPoint::Before(at), retained.as_slice())
        } else if m.is_terminator(at) {
            (InsertPoint::Before(at), &[][..])
        } else {
            (InsertPoint::After(at), &[][..])
        };
        let conds = vec![truth; memrefs.len()];
        let loc = m.loc(at).clone();
        emit_dealloc(m, ip, &memrefs, &conds, keep, loc);
        stats.deallocs += 1;
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
