//! Loop passes of the buffer-reuse family (after MLIR-HLO), on the output
//! of ownership-based deallocation: loops carrying memrefs have an `i1`
//! ownership flag per memref, appended after all other loop values.
//!
//! * `double-buffer`: a loop body that allocates the next value of a
//!   carried buffer (loop-invariant size) and frees the current one needs
//!   only two buffers. When an `scf.for` owns all its inits, the allocation
//!   moves before the loop into a second carried buffer and each iteration
//!   swaps the two; the spare is freed with the result after the loop.
//!   Otherwise (`scf.while`, the ONNX Loop, or inits the loop may not own)
//!   the current buffer is not freed but carried on as a spare with its
//!   ownership flag, and the allocation becomes `scf.if %spare_owned
//!   { spare } else { alloc }`; the spare is freed under its flag after
//!   the loop. An `scf.while` qualifies when its `before` region only
//!   passes its arguments on.
//! * `simplify-loop-results`: when a loop only permutes the owned buffers
//!   it was given, its results are those buffers in some order: every flag
//!   is true, the frees inside the loop free nothing, and the dealloc of all
//!   results after the loop is rewritten onto the original allocations, so
//!   buffer-reuse can see them.

use crate::ownership::{is_owned_allocation, MANUAL_DEALLOCATION};
use crate::simplify::{const_bool, simplify_deallocs, DeallocParts};
use crate::support::{is_loop, ops_where};
use ir::dialects::is_memref;
use ir::pass::{Pass, PassContext, PassInfo};
use ir::{ArithOp, BufferizationOp, CoreOp, MemrefOp, ScfOp};
use ir::{BlockId, Builder, InsertPoint, Module, OpId, OpSpec, Result, Type, ValueId};

/// (memref index, flag index) pairs of a value list whose last entries
/// are the flags of its memrefs, in order; `None` if it is not laid out so.
fn slots(m: &Module, vals: &[ValueId]) -> Option<Vec<(usize, usize)>> {
    let mem: Vec<usize> = (0..vals.len())
        .filter(|&i| vals.get(i).is_some_and(|&v| is_memref(m.value_type(v))))
        .collect();
    let k = mem.len();
    let first_flag = vals.len().checked_sub(k)?;
    let flags_ok = vals
        .get(first_flag..)?
        .iter()
        .all(|&v| *m.value_type(v) == Type::i1());
    if !flags_ok || mem.iter().any(|&i| i >= first_flag) {
        return None;
    }
    Some(
        mem.into_iter()
            .enumerate()
            .map(|(j, i)| (i, first_flag + j))
            .collect(),
    )
}

/// Where the loop-carried values start in the loop's operands / entry
/// block arguments / terminator operands of region `r`.
fn offsets(m: &Module, lp: OpId, r: usize) -> (usize, usize, usize) {
    if m.is(lp, ScfOp::For) {
        (3, 1, 0)
    } else {
        // scf.while: the `before` terminator's first operand is the condition.
        (0, 0, usize::from(r == 0))
    }
}

fn entry(m: &Module, lp: OpId, r: usize) -> Option<BlockId> {
    m.region(lp, r).and_then(|r| m.entry_block(r))
}

fn tail(vals: &[ValueId], from: usize) -> Vec<ValueId> {
    vals.get(from..)
        .map(<[ValueId]>::to_vec)
        .unwrap_or_default()
}

/// True if `v` is freed only by deallocs that also retain it (never).
fn never_freed(m: &Module, v: ValueId) -> bool {
    m.users(v).into_iter().all(|u| {
        if m.is(u, MemrefOp::Dealloc) || m.is(u, MemrefOp::Realloc) {
            return false;
        }
        match DeallocParts::read(m, u) {
            Some(p) => !p.memrefs.contains(&v) || p.retained.contains(&v),
            None => true,
        }
    })
}

/// Loop inits that are distinct owned allocations handed to the loop (flag
/// true: the loop is their last use).
fn transferred_inits(m: &Module, lp: OpId) -> Option<Vec<ValueId>> {
    let (op_off, _, _) = offsets(m, lp, 0);
    let inits = tail(m.operands(lp), op_off);
    let sl = slots(m, &inits)?;
    let mut out = Vec::new();
    for &(i, f) in &sl {
        let (a, fl) = (*inits.get(i)?, *inits.get(f)?);
        let ok = is_owned_allocation(m, a) && const_bool(m, fl) == Some(true) && !out.contains(&a);
        if !ok {
            return None;
        }
        out.push(a);
    }
    (!out.is_empty()).then_some(out)
}

/// The deallocs that free the loop results `res` (flags `flags`): every
/// use of a flag must be its result's condition in a dealloc freeing all
/// of `res`, each under its own flag (one per path where they die).
fn result_frees(m: &Module, res: &[ValueId], flags: &[ValueId]) -> Option<Vec<OpId>> {
    let mut out: Vec<OpId> = Vec::new();
    for &f in flags {
        for u in m.users(f) {
            let p = DeallocParts::read(m, u)?;
            let all = res.iter().zip(flags).all(|(r, fl)| {
                p.memrefs
                    .iter()
                    .zip(&p.conds)
                    .any(|(x, c)| x == r && c == fl)
            });
            if !all || p.retained.contains(&f) {
                return None;
            }
            if !out.contains(&u) {
                out.push(u);
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Rewrites one loop whose regions only permute their owned buffers.
fn simplify_loop(m: &mut Module, lp: OpId) -> bool {
    let Some(inits) = transferred_inits(m, lp) else {
        return false;
    };
    let k = inits.len();
    let mut region_blocks = Vec::new();
    for r in 0..m.regions(lp).len() {
        let (_, arg_off, term_off) = offsets(m, lp, r);
        let Some(b) = entry(m, lp, r) else {
            return false;
        };
        let Some(term) = m.last_op(b) else {
            return false;
        };
        let args = tail(m.block_args(b), arg_off);
        let outs = tail(m.operands(term), term_off);
        let (Some(sa), Some(st)) = (slots(m, &args), slots(m, &outs)) else {
            return false;
        };
        if sa.len() != k || st.len() != k {
            return false;
        }
        let mut have: Vec<ValueId> = sa
            .iter()
            .filter_map(|&(i, _)| args.get(i).copied())
            .collect();
        let mut sent: Vec<ValueId> = st
            .iter()
            .filter_map(|&(i, _)| outs.get(i).copied())
            .collect();
        have.sort();
        sent.sort();
        if have != sent || !have.iter().all(|&a| never_freed(m, a)) {
            return false;
        }
        let flags: Vec<ValueId> = sa
            .iter()
            .filter_map(|&(_, f)| args.get(f).copied())
            .collect();
        let flag_ops: Vec<usize> = st.iter().map(|&(_, f)| term_off + f).collect();
        region_blocks.push((b, term, flags, flag_ops));
    }
    let results = m.results(lp).to_vec();
    let Some(sr) = slots(m, &results).filter(|s| s.len() == k) else {
        return false;
    };
    let res: Vec<ValueId> = sr
        .iter()
        .filter_map(|&(i, _)| results.get(i).copied())
        .collect();
    let res_flags: Vec<ValueId> = sr
        .iter()
        .filter_map(|&(_, f)| results.get(f).copied())
        .collect();
    let Some(frees) = result_frees(m, &res, &res_flags) else {
        return false;
    };
    let loc = m.loc(lp).clone();
    let t = Builder::new(m, InsertPoint::Before(lp))
        .with_loc(loc)
        .const_bool(true);
    for (b, term, flags, flag_ops) in region_blocks {
        for f in flags {
            m.replace_all_uses(f, t);
        }
        for i in flag_ops {
            m.set_operand(term, i, t);
        }
        erase_dead_frees(m, b);
    }
    for d in frees {
        let Some(parts) = DeallocParts::read(m, d) else {
            continue;
        };
        let n = parts.memrefs.len();
        for (j, x) in parts.memrefs.iter().enumerate() {
            if let Some(p) = res.iter().position(|r| r == x) {
                if let Some(&a) = inits.get(p) {
                    m.set_operand(d, j, a);
                    m.set_operand(d, n + j, t);
                }
            }
        }
    }
    for f in res_flags {
        m.replace_all_uses(f, t);
    }
    true
}

/// Erases the deallocs of `b` that free nothing (every memref retained) and
/// whose results are unused, and the flag arithmetic left without users.
fn erase_dead_frees(m: &mut Module, b: BlockId) {
    let ops: Vec<OpId> = m.block_ops(b).collect();
    for op in ops.into_iter().rev() {
        let unused = m.results(op).iter().all(|&r| !m.has_uses(r));
        if !unused {
            continue;
        }
        let dead_flag_math = matches!(
            CoreOp::of(m, op),
            Some(CoreOp::Arith(
                ArithOp::Ori | ArithOp::Andi | ArithOp::Xori | ArithOp::Constant
            ))
        );
        let frees_nothing = DeallocParts::read(m, op)
            .is_some_and(|p| p.memrefs.iter().all(|x| p.retained.contains(x)));
        if dead_flag_math || frees_nothing {
            m.erase_op(op);
        }
    }
}

pub struct SimplifyLoopResults;

impl Pass for SimplifyLoopResults {
    fn name(&self) -> &'static str {
        "simplify-loop-results"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let loops = ops_where(m, is_loop);
        let mut n = 0;
        for lp in loops {
            n += usize::from(simplify_loop(m, lp));
        }
        if n > 0 {
            simplify_deallocs(m)?;
        }
        cx.bump("simplify-loop-results.loops", n as u64);
        Ok(())
    }
}

pub fn simplify_pass_info() -> PassInfo {
    PassInfo {
        name: "simplify-loop-results",
        summary:
            "frees of loop results that permute owned buffers go onto the original allocations",
        create: |_| Ok(Box::new(SimplifyLoopResults)),
    }
}

/// The op freeing `v` in block `b`, if it is `v`'s only free and frees
/// nothing else: `memref.dealloc v` or `bufferization.dealloc (v) if (c)`,
/// possibly retaining values of `distinct` (buffers never equal to `v`).
fn sole_free(m: &Module, v: ValueId, b: BlockId, distinct: &[ValueId]) -> Option<OpId> {
    let mut found = None;
    for u in m.users(v) {
        let free = if m.is(u, MemrefOp::Dealloc) {
            m.attr(u, MANUAL_DEALLOCATION).is_none()
        } else if let Some(p) = DeallocParts::read(m, u) {
            let others = p.retained.iter().all(|r| *r != v && distinct.contains(r));
            p.memrefs == [v] && others
        } else {
            !m.is(u, MemrefOp::Realloc)
        };
        if !free {
            return None;
        }
        if m.is(u, MemrefOp::Dealloc) || m.is(u, BufferizationOp::Dealloc) {
            if found.is_some() || m.op_block(u) != Some(b) {
                return None;
            }
            found = Some(u);
        }
    }
    found
}

/// The carried buffers of an `scf.for` body and its fresh allocations, if
/// they are pairwise distinct buffers in every iteration: the inits are
/// distinct owned allocations and each yield passes distinct values, each
/// a body argument or an allocation of the body.
fn distinct_buffers(
    m: &Module,
    body: BlockId,
    args: &[ValueId],
    outs: &[ValueId],
) -> Option<Vec<ValueId>> {
    let mem_outs: Vec<ValueId> = outs
        .iter()
        .copied()
        .filter(|&v| is_memref(m.value_type(v)))
        .collect();
    let mut seen = Vec::new();
    for &v in &mem_outs {
        let local_alloc = m
            .defining_op(v)
            .is_some_and(|d| m.is(d, MemrefOp::Alloc) && m.op_block(d) == Some(body));
        if seen.contains(&v) || !(args.contains(&v) || local_alloc) {
            return None;
        }
        seen.push(v);
    }
    let mut out: Vec<ValueId> = args
        .iter()
        .copied()
        .filter(|&v| is_memref(m.value_type(v)))
        .collect();
    out.extend(mem_outs.into_iter().filter(|v| !args.contains(v)));
    Some(out)
}

/// Where a flagged loop's lists keep their flags, checked before any change.
struct Layout {
    /// Flagged memrefs (= flags) per list.
    k: usize,
    /// Per region: entry block, its terminator, first flag argument, first
    /// flag operand of the terminator.
    regions: Vec<(BlockId, OpId, usize, usize)>,
}

fn layout(m: &Module, lp: OpId) -> Option<Layout> {
    let (op_off, _, _) = offsets(m, lp, 0);
    let k = slots(m, m.operands(lp).get(op_off..)?)?.len();
    if m.results(lp).len() < k || slots(m, m.results(lp))?.len() != k {
        return None;
    }
    let mut regions = Vec::new();
    for r in 0..m.regions(lp).len() {
        let (_, arg_off, term_off) = offsets(m, lp, r);
        let b = entry(m, lp, r)?;
        let t = m.last_op(b)?;
        let args = m.block_args(b);
        let outs = m.operands(t);
        if slots(m, args.get(arg_off..)?)?.len() != k || slots(m, outs.get(term_off..)?)?.len() != k
        {
            return None;
        }
        regions.push((b, t, args.len() - k, outs.len() - k));
    }
    Some(Layout { k, regions })
}

/// A memref slot (and its flag) added to a flagged loop.
struct Slot {
    lp: OpId,
    /// Per region: the new memref and flag block arguments.
    args: Vec<(ValueId, ValueId)>,
    result: Option<ValueId>,
    result_flag: Option<ValueId>,
}

/// Adds a memref slot and its flag to a flagged `scf.for` / `scf.while`,
/// keeping every list memrefs-then-flags: `init` / `flag_init` start it and
/// the terminator of region `i` passes `pass(i, memref arg, flag arg)`.
fn add_slot(
    m: &mut Module,
    lp: OpId,
    init: ValueId,
    flag_init: ValueId,
    pass: impl Fn(usize, ValueId, ValueId) -> (ValueId, ValueId),
) -> Option<Slot> {
    let l = layout(m, lp)?;
    let k = l.k;
    let mut new_ops = m.operands(lp).to_vec();
    new_ops.insert(new_ops.len() - k, init);
    new_ops.push(flag_init);
    let old_results = m.results(lp).to_vec();
    let mut types: Vec<Type> = old_results
        .iter()
        .map(|&r| m.value_type(r).clone())
        .collect();
    let ty = m.value_type(init).clone();
    let res_first_flag = types.len() - k;
    types.insert(res_first_flag, ty.clone());
    types.push(Type::i1());
    let spec = OpSpec {
        operands: new_ops,
        result_types: types,
        attrs: m.attrs(lp).to_vec(),
        regions: m.regions(lp).len(),
        successors: Vec::new(),
        loc: m.loc(lp).clone(),
    };
    let new = m.create_op(m.name(lp), spec);
    m.insert(new, InsertPoint::Before(lp));
    for (&from, &to) in m.regions(lp).to_vec().iter().zip(&m.regions(new).to_vec()) {
        m.take_blocks(from, to);
    }
    let new_results = m.results(new).to_vec();
    for (j, &old) in old_results.iter().enumerate() {
        let at = if j < res_first_flag { j } else { j + 1 };
        if let Some(&n) = new_results.get(at) {
            m.replace_all_uses(old, n);
        }
    }
    m.erase_op(lp);
    let mut args = Vec::new();
    for (i, &(body, term, arg_first_flag, out_first_flag)) in l.regions.iter().enumerate() {
        // Append the memref, fresh flags, the new flag; drop the old flags.
        let old = m.block_args(body).to_vec();
        let mem_arg = m.add_block_arg(body, ty.clone());
        for &o in old.get(arg_first_flag..).unwrap_or_default() {
            let f = m.add_block_arg(body, Type::i1());
            m.replace_all_uses(o, f);
        }
        let flag_arg = m.add_block_arg(body, Type::i1());
        for _ in 0..k {
            m.remove_block_arg(body, arg_first_flag);
        }
        let (v, f) = pass(i, mem_arg, flag_arg);
        let mut outs = m.operands(term).to_vec();
        outs.insert(out_first_flag, v);
        outs.push(f);
        m.set_operands(term, &outs);
        args.push((mem_arg, flag_arg));
    }
    Some(Slot {
        lp: new,
        args,
        result: new_results.get(res_first_flag).copied(),
        result_flag: new_results.last().copied(),
    })
}

/// A carried buffer each iteration replaces with a fresh allocation of the
/// same type and size (loop-invariant) after freeing it.
struct Candidate {
    body: BlockId,
    term: OpId,
    /// Index among the flagged memrefs.
    j: usize,
    /// Index of the memref among the body's carried arguments.
    ai: usize,
    arg: ValueId,
    next: ValueId,
    alloc: OpId,
    free: OpId,
}

/// The region holding the iteration body: `scf.while`'s `do`.
fn body_region(m: &Module, lp: OpId) -> usize {
    usize::from(m.is(lp, ScfOp::While))
}

fn candidates(m: &Module, lp: OpId) -> Vec<Candidate> {
    let r = body_region(m, lp);
    let (_, arg_off, term_off) = offsets(m, lp, r);
    let Some(body) = entry(m, lp, r) else {
        return Vec::new();
    };
    let Some(term) = m.last_op(body) else {
        return Vec::new();
    };
    let args = tail(m.block_args(body), arg_off);
    let outs = tail(m.operands(term), term_off);
    let (Some(sa), Some(st)) = (slots(m, &args), slots(m, &outs)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (j, (&(ai, _), &(oi, of))) in sa.iter().zip(&st).enumerate() {
        let (Some(&arg), Some(&next), Some(&next_flag)) =
            (args.get(ai), outs.get(oi), outs.get(of))
        else {
            continue;
        };
        let Some(alloc) = m.defining_op(next) else {
            continue;
        };
        let fresh = m.is(alloc, MemrefOp::Alloc)
            && m.op_block(alloc) == Some(body)
            && m.attr(alloc, MANUAL_DEALLOCATION).is_none()
            && const_bool(m, next_flag) == Some(true)
            && m.value_type(next) == m.value_type(arg)
            && m.operands(alloc).iter().all(|&s| {
                m.defining_op(s).is_none_or(|d| !m.is_ancestor(lp, d))
                    && !matches!(m.value_def(s), ir::ValueDef::BlockArg(b, _) if b == body)
            })
            && m.users(next)
                .iter()
                .all(|&u| u == term || DeallocParts::read(m, u).is_none())
            && m.uses(next).iter().filter(|u| u.op == term).count() == 1;
        if !fresh || outs.contains(&arg) {
            continue;
        }
        let Some(distinct) = distinct_buffers(m, body, &args, &outs) else {
            return Vec::new();
        };
        if let Some(free) = sole_free(m, arg, body, &distinct) {
            out.push(Candidate {
                body,
                term,
                j,
                ai,
                arg,
                next,
                alloc,
                free,
            });
        }
    }
    out
}

/// True if an `scf.while`'s `before` region passes its arguments on
/// unchanged and frees nothing: the carried buffers are the body's.
fn forwards(m: &Module, lp: OpId) -> bool {
    let Some(r) = m.region(lp, 0) else {
        return false;
    };
    let Some((b, cond)) = entry(m, lp, 0).and_then(|b| m.last_op(b).map(|t| (b, t))) else {
        return false;
    };
    let frees = m.collect_ops(lp).into_iter().any(|o| {
        m.op_block(o).and_then(|ob| m.block_parent(ob)) == Some(r)
            && (m.is(o, MemrefOp::Dealloc)
                || m.is(o, BufferizationOp::Dealloc)
                || m.is(o, MemrefOp::Realloc))
    });
    m.region_blocks(r).len() == 1
        && m.is(cond, ScfOp::Condition)
        && m.operands(cond).get(1..) == Some(m.block_args(b))
        && !frees
}

/// Double-buffers one slot of a flagged loop; true if it did.
fn double_buffer(m: &mut Module, lp: OpId) -> bool {
    if m.is(lp, ScfOp::While) && !forwards(m, lp) {
        return false;
    }
    let owned = m.is(lp, ScfOp::For) && transferred_inits(m, lp).is_some();
    for c in candidates(m, lp) {
        if owned {
            let results = m.results(lp).to_vec();
            let Some(sr) = slots(m, &results) else {
                return false;
            };
            let res = sr
                .get(c.j)
                .and_then(|&(ri, rf)| Some((*results.get(ri)?, *results.get(rf)?)));
            // The result must die only in deallocs, under its own flag.
            if let Some(after) = res.and_then(|(r, f)| result_frees(m, &[r], &[f])) {
                if hoist_spare(m, lp, &c, &after) {
                    return true;
                }
                continue;
            }
        }
        if carry_spare(m, lp, &c) {
            return true;
        }
    }
    false
}

/// Erases the free of the buffer an iteration is done with; its retained
/// values never alias it, so their results are `false`.
fn drop_free(m: &mut Module, free: OpId) {
    let kept = m.results(free).to_vec();
    if !kept.is_empty() {
        let loc = m.loc(free).clone();
        let f = Builder::new(m, InsertPoint::Before(free))
            .with_loc(loc)
            .const_bool(false);
        for r in kept {
            m.replace_all_uses(r, f);
        }
    }
    m.erase_op(free);
}

/// The loop owns every buffer it carries: the allocation moves before the
/// loop into a second carried buffer, and each iteration swaps the two; the
/// spare is freed with the result.
fn hoist_spare(m: &mut Module, lp: OpId, c: &Candidate, after: &[OpId]) -> bool {
    if layout(m, lp).is_none() {
        return false;
    }
    drop_free(m, c.free);
    m.move_to(c.alloc, InsertPoint::Before(lp));
    let loc = m.loc(lp).clone();
    let t = Builder::new(m, InsertPoint::Before(lp))
        .with_loc(loc)
        .const_bool(true);
    let arg = c.arg;
    let Some(slot) = add_slot(m, lp, c.next, t, |_, _, _| (arg, t)) else {
        return false;
    };
    // Inside, the hoisted buffer is the spare argument; the buffer the
    // iteration is done with becomes the next spare.
    let Some(&(spare_arg, _)) = slot.args.first() else {
        return false;
    };
    let uses: Vec<ir::Use> = m.uses(c.next).to_vec();
    for u in uses {
        if u.op != slot.lp && m.is_ancestor(slot.lp, u.op) {
            m.set_operand(u.op, u.index as usize, spare_arg);
        }
    }
    if let (Some(spare), Some(spare_flag)) = (slot.result, slot.result_flag) {
        for &d in after {
            add_to_dealloc(m, d, spare, spare_flag);
        }
    }
    true
}

/// The loop may not own its inits (ONNX Loop over a graph input): the
/// buffer an iteration is done with becomes a spare carried with its
/// ownership flag, and the next allocation takes the spare when it is
/// owned (`scf.if`): two allocations in all from the second iteration on.
/// The spare is freed under its flag after the loop.
fn carry_spare(m: &mut Module, lp: OpId, c: &Candidate) -> bool {
    let r = body_region(m, lp);
    let (op_off, _, _) = offsets(m, lp, 0);
    let (_, arg_off, _) = offsets(m, lp, r);
    let Some(init) = m.operand(lp, op_off + c.ai) else {
        return false;
    };
    if layout(m, lp).is_none() {
        return false;
    }
    drop_free(m, c.free);
    let loc = m.loc(lp).clone();
    let f = Builder::new(m, InsertPoint::Before(lp))
        .with_loc(loc.clone())
        .const_bool(false);
    let arg = c.arg;
    let pass = |i, mem, fl| if i == r { (arg, f) } else { (mem, fl) };
    let Some(slot) = add_slot(m, lp, init, f, pass) else {
        return false;
    };
    // The spare's flag is the flag `arg` came with.
    let args = tail(m.block_args(c.body), arg_off);
    let flag = slots(m, &args)
        .and_then(|sl| sl.get(c.j).copied())
        .and_then(|(_, fi)| args.get(fi).copied());
    let n = m.operands(c.term).len();
    if let (Some(flag), Some(last)) = (flag, n.checked_sub(1)) {
        m.set_operand(c.term, last, flag);
    }
    let Some(&(spare, spare_flag)) = slot.args.get(r) else {
        return false;
    };
    let ty = m.value_type(c.next).clone();
    let next = c.next;
    let alloc_loc = m.loc(c.alloc).clone();
    let op = Builder::new(m, InsertPoint::Before(c.alloc))
        .with_loc(alloc_loc)
        .scf_if(
            spare_flag,
            std::slice::from_ref(&ty),
            &mut |_| vec![spare],
            Some(&mut |_| vec![next]),
        );
    let Some(els) = m.region(op, 1).and_then(|rg| m.entry_block(rg)) else {
        return false;
    };
    let Some(y) = m.last_op(els) else {
        return false;
    };
    m.move_to(c.alloc, InsertPoint::Before(y));
    if let Some(v) = m.result(op, 0) {
        m.replace_uses_where(next, v, |_, u| u.op != y);
    }
    if let (Some(sv), Some(sf)) = (slot.result, slot.result_flag) {
        Builder::new(m, InsertPoint::After(slot.lp))
            .with_loc(loc)
            .bufferization_dealloc(&[sv], &[sf], &[]);
    }
    true
}

/// Appends `v` under `cond` to the memrefs of a `bufferization.dealloc`.
fn add_to_dealloc(m: &mut Module, d: OpId, v: ValueId, cond: ValueId) {
    let Some(p) = DeallocParts::read(m, d) else {
        return;
    };
    let mut memrefs = p.memrefs.clone();
    let mut conds = p.conds.clone();
    memrefs.push(v);
    conds.push(cond);
    let loc = m.loc(d).clone();
    let new = Builder::new(m, InsertPoint::Before(d))
        .with_loc(loc)
        .bufferization_dealloc(&memrefs, &conds, &p.retained);
    let (old, fresh) = (m.results(d).to_vec(), m.results(new).to_vec());
    for (o, n) in old.into_iter().zip(fresh) {
        m.replace_all_uses(o, n);
    }
    m.erase_op(d);
}

pub struct DoubleBuffer;

impl Pass for DoubleBuffer {
    fn name(&self) -> &'static str {
        "double-buffer"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let mut n = 0;
        loop {
            let loops = ops_where(m, is_loop);
            let done = loops.into_iter().find(|&lp| double_buffer(m, lp));
            if done.is_none() {
                break;
            }
            n += 1;
        }
        cx.bump("double-buffer.loops", n as u64);
        Ok(())
    }
}

pub fn double_pass_info() -> PassInfo {
    PassInfo {
        name: "double-buffer",
        summary: "a loop-carried buffer replaced every iteration swaps between two buffers (scf.for, scf.while)",
        create: |_| Ok(Box::new(DoubleBuffer)),
    }
}
