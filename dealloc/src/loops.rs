//! Loop passes of the buffer-reuse family (after MLIR-HLO), on the output
//! of ownership-based deallocation: loops carrying memrefs have an `i1`
//! ownership flag per memref, appended after all other loop values.
//!
//! * `double-buffer`: an `scf.for` body that allocates the next value of a
//!   carried buffer (loop-invariant size) and frees the current one needs
//!   only two buffers: the allocation moves before the loop into a second
//!   carried buffer, and each iteration swaps the two. The spare is freed
//!   with the result after the loop.
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
    if m.is(lp, "scf.for") {
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
        if m.is(u, "memref.dealloc") || m.is(u, "memref.realloc") {
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
        let dead_flag_math = ["arith.ori", "arith.andi", "arith.xori", "arith.constant"]
            .iter()
            .any(|n| m.is(op, n));
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
        let free = if m.is(u, "memref.dealloc") {
            m.attr(u, MANUAL_DEALLOCATION).is_none()
        } else if let Some(p) = DeallocParts::read(m, u) {
            let others = p.retained.iter().all(|r| *r != v && distinct.contains(r));
            p.memrefs == [v] && others
        } else {
            !m.is(u, "memref.realloc")
        };
        if !free {
            return None;
        }
        if m.is(u, "memref.dealloc") || m.is(u, "bufferization.dealloc") {
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
            .is_some_and(|d| m.is(d, "memref.alloc") && m.op_block(d) == Some(body));
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

/// Where the flags of a flagged `scf.for` start, checked before any change.
#[derive(Copy, Clone)]
struct Layout {
    body: BlockId,
    term: OpId,
    k: usize,
    first_flag: usize,
    arg_first_flag: usize,
    out_first_flag: usize,
    region: ir::RegionId,
}

fn layout(m: &Module, lp: OpId) -> Option<Layout> {
    let body = entry(m, lp, 0)?;
    let term = m.last_op(body)?;
    let ops = m.operands(lp);
    let k = slots(m, ops.get(3..)?)?.len();
    if m.results(lp).len() < k {
        return None;
    }
    Some(Layout {
        body,
        term,
        k,
        first_flag: ops.len().checked_sub(k)?,
        arg_first_flag: m.block_args(body).len().checked_sub(k)?,
        out_first_flag: m.operands(term).len().checked_sub(k)?,
        region: m.region(lp, 0)?,
    })
}

/// Adds a memref slot (and its flag) to a flagged `scf.for`, keeping the
/// memrefs-then-flags layout: `init` / `flag_init` are its initial values.
/// Returns the new loop, its body's new memref argument, and the new
/// memref result and flag result.
fn add_slot(
    m: &mut Module,
    lp: OpId,
    l: &Layout,
    init: ValueId,
    flag_init: ValueId,
) -> (OpId, ValueId, Option<ValueId>, Option<ValueId>) {
    let Layout {
        body,
        term,
        k,
        first_flag,
        arg_first_flag,
        out_first_flag,
        region: from,
    } = *l;
    let ops = m.operands(lp).to_vec();
    let mut new_ops = ops.clone();
    new_ops.insert(first_flag, init);
    new_ops.push(flag_init);
    let old_results = m.results(lp).to_vec();
    let mut types: Vec<Type> = old_results
        .iter()
        .map(|&r| m.value_type(r).clone())
        .collect();
    let ty = m.value_type(init).clone();
    let res_first_flag = types.len().saturating_sub(k);
    types.insert(res_first_flag, ty.clone());
    types.push(Type::i1());
    let spec = OpSpec {
        operands: new_ops,
        result_types: types,
        attrs: m.attrs(lp).to_vec(),
        regions: 1,
        successors: Vec::new(),
        loc: m.loc(lp).clone(),
    };
    let new = m.create_op(m.name(lp), spec);
    m.insert(new, InsertPoint::Before(lp));
    if let Some(to) = m.region(new, 0) {
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
    // Block args: append the memref, fresh flags, the new flag; drop the old flags.
    let args = m.block_args(body).to_vec();
    let mem_arg = m.add_block_arg(body, ty);
    for &old in args.get(arg_first_flag..).unwrap_or_default() {
        let f = m.add_block_arg(body, Type::i1());
        m.replace_all_uses(old, f);
    }
    m.add_block_arg(body, Type::i1());
    for _ in 0..k {
        m.remove_block_arg(body, arg_first_flag);
    }
    let mut outs = m.operands(term).to_vec();
    outs.insert(out_first_flag, mem_arg);
    outs.push(flag_init);
    m.set_operands(term, &outs);
    let res_mem = new_results.get(res_first_flag).copied();
    (new, mem_arg, res_mem, new_results.last().copied())
}

/// Double-buffers one slot of a flagged `scf.for`; true if it did.
fn double_buffer(m: &mut Module, lp: OpId) -> bool {
    if !m.is(lp, "scf.for") || transferred_inits(m, lp).is_none() {
        return false;
    }
    let Some(body) = entry(m, lp, 0) else {
        return false;
    };
    let Some(term) = m.last_op(body) else {
        return false;
    };
    let args = tail(m.block_args(body), 1);
    let outs = m.operands(term).to_vec();
    let results = m.results(lp).to_vec();
    let (Some(sa), Some(st), Some(sr)) = (slots(m, &args), slots(m, &outs), slots(m, &results))
    else {
        return false;
    };
    for ((&(ai, _), &(oi, of)), &(ri, rf)) in sa.iter().zip(&st).zip(&sr) {
        let (Some(&arg), Some(&next), Some(&next_flag)) =
            (args.get(ai), outs.get(oi), outs.get(of))
        else {
            continue;
        };
        let Some(alloc) = m.defining_op(next) else {
            continue;
        };
        let fresh = m.is(alloc, "memref.alloc")
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
            return false;
        };
        let Some(free) = sole_free(m, arg, body, &distinct) else {
            continue;
        };
        // The result must die only in deallocs, under its own flag.
        let (Some(&res), Some(&res_flag)) = (results.get(ri), results.get(rf)) else {
            continue;
        };
        let Some(after) = result_frees(m, &[res], &[res_flag]) else {
            continue;
        };
        let Some(l) = layout(m, lp) else { return false };
        // Its retained values never alias `arg`: their ownership stays.
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
        m.move_to(alloc, InsertPoint::Before(lp));
        let loc = m.loc(lp).clone();
        let t = Builder::new(m, InsertPoint::Before(lp))
            .with_loc(loc)
            .const_bool(true);
        let (new_lp, spare_arg, spare, spare_flag) = add_slot(m, lp, &l, next, t);
        // Inside, the hoisted buffer is the spare argument; the buffer the
        // iteration is done with becomes the next spare.
        let uses: Vec<ir::Use> = m.uses(next).to_vec();
        for u in uses {
            if u.op != new_lp && m.is_ancestor(new_lp, u.op) {
                m.set_operand(u.op, u.index as usize, spare_arg);
            }
        }
        let t2 = l.term;
        let outs = m.operands(t2).to_vec();
        if let Some(&(si, _)) = slots(m, &outs).as_ref().and_then(|s| s.last()) {
            m.set_operand(t2, si, arg);
        }
        if let (Some(spare), Some(spare_flag)) = (spare, spare_flag) {
            for d in after {
                add_to_dealloc(m, d, spare, spare_flag);
            }
        }
        return true;
    }
    false
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
            let loops = ops_where(m, |m, o| m.is(o, "scf.for"));
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
        summary: "a loop-carried buffer replaced every iteration swaps between two hoisted buffers",
        create: |_| Ok(Box::new(DoubleBuffer)),
    }
}
