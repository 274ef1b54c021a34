//! `convert-scf-to-cf`: structured control flow to blocks and branches.
//!
//! * `scf.for`: the parent block branches to a header whose arguments are the
//!   induction variable and the iter_args; the header compares and branches to
//!   the body or to the continuation; each `scf.yield` becomes the increment
//!   and a branch back to the header.
//! * `scf.if`: a `cf.cond_br` to the inlined then/else blocks; yields branch to
//!   a merge block whose arguments are the results.
//! * `scf.while`: the before blocks are the loop header; `scf.condition`
//!   becomes a `cf.cond_br` to the after blocks or to the continuation.
//!
//! Ops are lowered innermost first, so a region being inlined may already
//! hold several blocks; every `scf.yield` among them is rewritten.

use ir::builder::CmpI;
use ir::dialects::op_error;
use ir::pass::{Pass, PassContext, PassInfo};
use ir::{
    BlockId, Builder, Diagnostic, InsertPoint, Module, OpId, RegionId, Result, Type, ValueId,
};
use ir::{CoreOp, ScfOp};

/// Unit attribute on an `scf.for` (kept on its back-edge `cf.br`): ask
/// LLVM to vectorize the loop (`llvm.loop.vectorize.enable`), e.g. an
/// innermost unit-stride loop whose buffers LLVM cannot prove distinct.
pub const LOOP_VECTORIZE: &str = "onnxc.vectorize";

pub struct ScfToCf;

impl Pass for ScfToCf {
    fn name(&self) -> &'static str {
        "convert-scf-to-cf"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let n = lower_scf(m)?;
        cx.bump("convert-scf-to-cf.lowered", n as u64);
        Ok(())
    }
}

pub fn pass_info() -> PassInfo {
    PassInfo {
        name: "convert-scf-to-cf",
        summary: "lower scf.for/if/while to cf branches between blocks",
        create: |_| Ok(Box::new(ScfToCf)),
    }
}

/// Lowers every scf.for / scf.if / scf.while in the module; returns how many.
pub fn lower_scf(m: &mut Module) -> Result<usize> {
    // Reversed pre-order visits every op after all ops nested in it.
    let ops: Vec<OpId> = m
        .collect_ops(m.top())
        .into_iter()
        .rev()
        .filter(|&o| m.is(o, ScfOp::For) || m.is(o, ScfOp::If) || m.is(o, ScfOp::While))
        .collect();
    for &op in &ops {
        match CoreOp::of(m, op) {
            Some(CoreOp::Scf(ScfOp::For)) => lower_for(m, op)?,
            Some(CoreOp::Scf(ScfOp::If)) => lower_if(m, op)?,
            _ => lower_while(m, op)?,
        }
    }
    Ok(ops.len())
}

fn types_of(m: &Module, vals: &[ValueId]) -> Vec<Type> {
    vals.iter().map(|&v| m.value_type(v).clone()).collect()
}

/// The block holding `op` and its region.
fn home(m: &Module, op: OpId) -> Result<(BlockId, RegionId)> {
    let b = m
        .op_block(op)
        .ok_or_else(|| op_error(m, op, "is not inside a block"))?;
    let r = m
        .block_parent(b)
        .ok_or_else(|| op_error(m, op, "is not inside a region"))?;
    Ok((b, r))
}

/// Moves the ops after `op` into a new block (with arguments of the op's
/// result types) right after op's block, and routes op's results to those
/// arguments.
fn split_after(m: &mut Module, op: OpId) -> Result<BlockId> {
    let (b, r) = home(m, op)?;
    let result_types = types_of(m, m.results(op));
    let cont = m.insert_block_after(r, b, &result_types);
    if let Some(next) = m.next_op(op) {
        m.splice_ops(b, Some(next), cont);
    }
    let results = m.results(op).to_vec();
    let args = m.block_args(cont).to_vec();
    for (r, a) in results.into_iter().zip(args) {
        m.replace_all_uses(r, a);
    }
    Ok(cont)
}

/// Moves the blocks of `from` into the region of `after`, right after it,
/// keeping their order; returns the new blocks.
fn inline_region_after(m: &mut Module, from: RegionId, after: BlockId) -> Result<Vec<BlockId>> {
    let r = m
        .block_parent(after)
        .ok_or_else(|| Diagnostic::error("block is not inside a region"))?;
    let olds = m.region_blocks(from).to_vec();
    let mut news = Vec::with_capacity(olds.len());
    let mut prev = after;
    for &ob in &olds {
        let old_args = m.block_args(ob).to_vec();
        let nb = m.insert_block_after(r, prev, &types_of(m, &old_args));
        let new_args = m.block_args(nb).to_vec();
        for (o, n) in old_args.into_iter().zip(new_args) {
            m.replace_all_uses(o, n);
        }
        m.splice_ops(ob, None, nb);
        news.push(nb);
        prev = nb;
    }
    // Branches between the moved blocks follow them.
    for &nb in &news {
        let Some(term) = m.last_op(nb) else { continue };
        for i in 0..m.num_successors(term) {
            let Some((target, _)) = m.successor(term, i) else {
                continue;
            };
            if let Some(pos) = olds.iter().position(|&o| o == target) {
                m.set_successor(term, i, news[pos]);
            }
        }
    }
    Ok(news)
}

/// Terminators of `blocks` named `name`.
fn terminators(m: &Module, blocks: &[BlockId], name: ScfOp) -> Vec<OpId> {
    blocks
        .iter()
        .filter_map(|&b| m.last_op(b))
        .filter(|&t| m.is(t, name))
        .collect()
}

fn first(m: &Module, op: OpId, blocks: &[BlockId], what: &str) -> Result<BlockId> {
    blocks
        .first()
        .copied()
        .ok_or_else(|| op_error(m, op, format!("{what} region has no block")))
}

fn lower_for(m: &mut Module, op: OpId) -> Result<()> {
    let operands = m.operands(op).to_vec();
    let [lb, ub, step, inits @ ..] = operands.as_slice() else {
        return Err(op_error(m, op, "expects lower bound, upper bound and step"));
    };
    let (lb, ub, step, inits) = (*lb, *ub, *step, inits.to_vec());
    let loc = m.loc(op).clone();
    let unsigned = m.attr(op, "unsignedCmp").is_some();
    let body_region = m
        .region(op, 0)
        .ok_or_else(|| op_error(m, op, "has no body region"))?;
    let (b, r) = home(m, op)?;
    let cont = split_after(m, op)?;

    let mut header_types = vec![m.value_type(lb).clone()];
    header_types.extend(types_of(m, &inits));
    let header = m.insert_block_after(r, b, &header_types);
    let hargs = m.block_args(header).to_vec();
    let body = inline_region_after(m, body_region, header)?;
    let entry = first(m, op, &body, "body")?;
    let eargs = m.block_args(entry).to_vec();
    if eargs.len() != hargs.len() {
        return Err(op_error(
            m,
            op,
            "body arguments must be the induction variable and the iter_args",
        ));
    }
    for (&e, &h) in eargs.iter().zip(&hargs) {
        m.replace_all_uses(e, h);
    }
    for i in (0..eargs.len()).rev() {
        m.remove_block_arg(entry, i);
    }
    let (iv, iters) = (hargs[0], hargs[1..].to_vec());
    // Loop hints ride on the back edges (the emitter's `!llvm.loop`).
    let hint = m.attr(op, LOOP_VECTORIZE).cloned();

    for y in terminators(m, &body, ScfOp::Yield) {
        let yielded = m.operands(y).to_vec();
        let mut bld = Builder::new(m, InsertPoint::Before(y)).with_loc(loc.clone());
        let next = bld.addi(iv, step);
        let mut args = vec![next];
        args.extend(yielded);
        let br = bld.br(header, &args);
        if let Some(h) = &hint {
            m.set_attr(br, LOOP_VECTORIZE, h.clone());
        }
        m.erase_op(y);
    }

    let mut bld = Builder::at_end(m, header).with_loc(loc.clone());
    let pred = if unsigned { CmpI::Ult } else { CmpI::Slt };
    let cond = bld.cmpi(pred, iv, ub);
    bld.cond_br(cond, (entry, &[]), (cont, &iters));

    m.erase_op(op);
    let mut bld = Builder::at_end(m, b).with_loc(loc);
    let mut args = vec![lb];
    args.extend(inits);
    bld.br(header, &args);
    Ok(())
}

fn lower_if(m: &mut Module, op: OpId) -> Result<()> {
    let Some(&cond) = m.operands(op).first() else {
        return Err(op_error(m, op, "expects a condition"));
    };
    let loc = m.loc(op).clone();
    let then_region = m
        .region(op, 0)
        .ok_or_else(|| op_error(m, op, "has no then region"))?;
    let else_region = m.region(op, 1);
    let (b, _) = home(m, op)?;
    let cont = split_after(m, op)?;

    let then_blocks = inline_region_after(m, then_region, b)?;
    let then_entry = first(m, op, &then_blocks, "then")?;
    let last_then = then_blocks.last().copied().unwrap_or(b);
    let else_blocks = match else_region {
        Some(er) if !m.region_blocks(er).is_empty() => inline_region_after(m, er, last_then)?,
        _ => Vec::new(),
    };
    let all: Vec<BlockId> = then_blocks.iter().chain(&else_blocks).copied().collect();
    for y in terminators(m, &all, ScfOp::Yield) {
        let yielded = m.operands(y).to_vec();
        let mut bld = Builder::new(m, InsertPoint::Before(y)).with_loc(loc.clone());
        bld.br(cont, &yielded);
        m.erase_op(y);
    }
    let else_target = else_blocks.first().copied().unwrap_or(cont);
    m.erase_op(op);
    let mut bld = Builder::at_end(m, b).with_loc(loc);
    bld.cond_br(cond, (then_entry, &[]), (else_target, &[]));
    Ok(())
}

fn lower_while(m: &mut Module, op: OpId) -> Result<()> {
    let inits = m.operands(op).to_vec();
    let loc = m.loc(op).clone();
    let (Some(before_region), Some(after_region)) = (m.region(op, 0), m.region(op, 1)) else {
        return Err(op_error(m, op, "expects before and after regions"));
    };
    let (b, _) = home(m, op)?;
    let cont = split_after(m, op)?;

    let before = inline_region_after(m, before_region, b)?;
    let before_entry = first(m, op, &before, "before")?;
    let last_before = before.last().copied().unwrap_or(b);
    let after = inline_region_after(m, after_region, last_before)?;
    let after_entry = first(m, op, &after, "after")?;

    for c in terminators(m, &before, ScfOp::Condition) {
        let operands = m.operands(c).to_vec();
        let Some((&flag, forwarded)) = operands.split_first() else {
            return Err(op_error(m, c, "expects a condition operand"));
        };
        let mut bld = Builder::new(m, InsertPoint::Before(c)).with_loc(loc.clone());
        bld.cond_br(flag, (after_entry, forwarded), (cont, forwarded));
        m.erase_op(c);
    }
    for y in terminators(m, &after, ScfOp::Yield) {
        let yielded = m.operands(y).to_vec();
        let mut bld = Builder::new(m, InsertPoint::Before(y)).with_loc(loc.clone());
        bld.br(before_entry, &yielded);
        m.erase_op(y);
    }
    m.erase_op(op);
    let mut bld = Builder::at_end(m, b).with_loc(loc);
    bld.br(before_entry, &inits);
    Ok(())
}
