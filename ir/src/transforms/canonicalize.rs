//! `canonicalize`: greedy folding and simplification of `arith`, `scf` and
//! `memref.dim` (patterns below, folding rules in `fold`), and dead-code
//! removal: pure ops without users, and `scf.if`/`scf.for` whose results
//! are unused and whose bodies only compute (pure ops).

use super::fold::{self, constant, int_attr, Folded, Scalar};
use crate::attr::Attribute;
use crate::builder::Builder;
use crate::diag::Result;
use crate::module::{InsertPoint, Module, OpId, ValueId};
use crate::ops::{ArithOp, MemrefOp, ScfOp};
use crate::pass::{Pass, PassContext, PassInfo};
use crate::registry::Traits;
use crate::rewrite::{apply_greedily, GreedyConfig, GreedyReport, Pattern};
use crate::types::{Type, DYN};

pub struct Canonicalize;

impl Pass for Canonicalize {
    fn name(&self) -> &'static str {
        "canonicalize"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let report = canonicalize(m)?;
        cx.bump("canonicalize.rewrites", report.rewrites as u64);
        cx.bump("canonicalize.erased", report.erased as u64);
        if let Some(w) = report.warning("canonicalize") {
            cx.warnings.push(w);
        }
        Ok(())
    }
}

pub fn pass_info() -> PassInfo {
    PassInfo {
        name: "canonicalize",
        summary: "fold arith ops, constant scf.if/scf.for, memref.dim; erase dead code",
        create: |_| Ok(Box::new(Canonicalize)),
    }
}

/// Every pattern of the pass, for passes that want the same cleanup.
pub const PATTERNS: [&dyn Pattern; 7] = [
    &FoldArith,
    &ConstantsRight,
    &ConstantIf,
    &SameYield,
    &EmptyFor,
    &FoldDim,
    &DeadRegionOp,
];

/// Runs the patterns over the whole module.
pub fn canonicalize(m: &mut Module) -> Result<GreedyReport> {
    let top = m.top();
    apply_greedily(m, top, &PATTERNS, &GreedyConfig::default())
}

/// An `arith.constant` of `attr` (of `ty`) before `op`.
fn make_const(m: &mut Module, op: OpId, attr: Attribute, ty: Type) -> ValueId {
    let loc = m.loc(op).clone();
    Builder::new(m, InsertPoint::Before(op)).with_loc(loc).op1(
        ArithOp::Constant,
        &[],
        ty,
        &[("value", attr)],
    )
}

/// Replaces the only result of `op` and erases it.
fn replace(m: &mut Module, op: OpId, v: ValueId) -> bool {
    let Some(r) = m.result(op, 0) else {
        return false;
    };
    m.replace_all_uses(r, v);
    m.erase_op(op);
    true
}

/// Folds scalar `arith` ops (see `fold`).
pub struct FoldArith;

impl Pattern for FoldArith {
    fn name(&self) -> &'static str {
        "fold-arith"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        if !m.name(op).as_str().starts_with("arith.") || m.is(op, ArithOp::Constant) {
            return Ok(false);
        }
        let Some(r) = m.result(op, 0) else {
            return Ok(false);
        };
        Ok(match fold::fold(m, op) {
            Some(Folded::Value(v)) => replace(m, op, v),
            Some(Folded::Const(a)) => {
                let ty = m.value_type(r).clone();
                let c = make_const(m, op, a, ty);
                replace(m, op, c)
            }
            None => false,
        })
    }
}

/// A commutative `arith` op with a constant on the left gets it on the
/// right (what the identities and CSE expect).
pub struct ConstantsRight;

impl Pattern for ConstantsRight {
    fn name(&self) -> &'static str {
        "constants-right"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        if !m.has_trait(op, Traits::COMMUTATIVE) || !m.name(op).as_str().starts_with("arith.") {
            return Ok(false);
        }
        let (Some(a), Some(b)) = (m.operand(op, 0), m.operand(op, 1)) else {
            return Ok(false);
        };
        let is_const = |v| m.defining_op(v).is_some_and(|d| m.is(d, ArithOp::Constant));
        if !is_const(a) || is_const(b) {
            return Ok(false);
        }
        m.set_operand(op, 0, b);
        m.set_operand(op, 1, a);
        Ok(true)
    }
}

/// The block of region `i` of `op` and its terminator's operands.
fn region_yield(m: &Module, op: OpId, i: usize) -> Option<(crate::module::BlockId, Vec<ValueId>)> {
    let b = m.region(op, i).and_then(|r| m.entry_block(r))?;
    let t = m.last_op(b)?;
    Some((b, m.operands(t).to_vec()))
}

/// `scf.if` on a constant: the taken branch's ops move before it.
pub struct ConstantIf;

impl Pattern for ConstantIf {
    fn name(&self) -> &'static str {
        "constant-scf-if"
    }
    fn root(&self) -> Option<&'static str> {
        Some(ScfOp::If.name())
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        let Some(Scalar::Int(c)) = m.operand(op, 0).and_then(|v| constant(m, v)) else {
            return Ok(false);
        };
        let taken = usize::from(c == 0);
        let Some((b, values)) = region_yield(m, op, taken) else {
            // An absent else branch: nothing to run, nothing to yield.
            if m.results(op).is_empty() {
                m.erase_op(op);
                return Ok(true);
            }
            return Ok(false);
        };
        let ops: Vec<OpId> = m.block_ops(b).collect();
        for &o in ops.iter().take(ops.len().saturating_sub(1)) {
            m.move_to(o, InsertPoint::Before(op));
        }
        m.replace_op(op, &values);
        Ok(true)
    }
}

/// An `scf.if` result both branches yield identically: the same value from
/// outside, or equal constants.
pub struct SameYield;

impl Pattern for SameYield {
    fn name(&self) -> &'static str {
        "scf-if-same-yield"
    }
    fn root(&self) -> Option<&'static str> {
        Some(ScfOp::If.name())
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        let (Some((_, a)), Some((_, b))) = (region_yield(m, op, 0), region_yield(m, op, 1)) else {
            return Ok(false);
        };
        let mut changed = false;
        let results = m.results(op).to_vec();
        for (i, &r) in results.iter().enumerate() {
            let (Some(&x), Some(&y)) = (a.get(i), b.get(i)) else {
                continue;
            };
            if !m.has_uses(r) {
                continue;
            }
            let outside = |v: ValueId| {
                m.defining_op(v).is_none_or(|d| !m.is_ancestor(op, d))
                    && !defined_by_block_of(m, v, op)
            };
            if x == y && outside(x) {
                m.replace_all_uses(r, x);
                changed = true;
                continue;
            }
            let (cx, cy) = (const_attr(m, x), const_attr(m, y));
            if let (Some(p), Some(q)) = (cx, cy) {
                if p == q {
                    let ty = m.value_type(r).clone();
                    let c = make_const(m, op, p, ty);
                    m.replace_all_uses(r, c);
                    changed = true;
                }
            }
        }
        Ok(changed)
    }
}

fn defined_by_block_of(m: &Module, v: ValueId, op: OpId) -> bool {
    match m.value_def(v) {
        crate::module::ValueDef::BlockArg(b, _) => {
            m.block_parent_op(b).is_some_and(|p| m.is_ancestor(op, p))
        }
        _ => false,
    }
}

fn const_attr(m: &Module, v: ValueId) -> Option<Attribute> {
    let d = m.defining_op(v).filter(|&d| m.is(d, ArithOp::Constant))?;
    let a = m.attr(d, "value")?;
    matches!(
        a,
        Attribute::Int(..) | Attribute::Float(..) | Attribute::Bool(_)
    )
    .then(|| a.clone())
}

/// `scf.for` whose constant bounds give no iteration: its inits.
pub struct EmptyFor;

impl Pattern for EmptyFor {
    fn name(&self) -> &'static str {
        "empty-scf-for"
    }
    fn root(&self) -> Option<&'static str> {
        Some(ScfOp::For.name())
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        let bound = |i| m.operand(op, i).and_then(|v| fold::signed_const(m, v));
        let (Some(lb), Some(ub)) = (bound(0), bound(1)) else {
            return Ok(false);
        };
        if lb < ub {
            return Ok(false);
        }
        let inits = m.operands(op).get(3..).unwrap_or_default().to_vec();
        if inits.len() != m.results(op).len() {
            return Ok(false);
        }
        m.replace_op(op, &inits);
        Ok(true)
    }
}

/// `memref.dim` of a static dim, or of an allocation's dynamic size.
pub struct FoldDim;

impl Pattern for FoldDim {
    fn name(&self) -> &'static str {
        "fold-memref-dim"
    }
    fn root(&self) -> Option<&'static str> {
        Some(MemrefOp::Dim.name())
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        let (Some(src), Some(idx)) = (m.operand(op, 0), m.operand(op, 1)) else {
            return Ok(false);
        };
        let Some(Scalar::Int(k)) = constant(m, idx) else {
            return Ok(false);
        };
        let Some(shape) = m.value_type(src).shape().map(<[i64]>::to_vec) else {
            return Ok(false);
        };
        let Some(&d) = usize::try_from(k).ok().and_then(|k| shape.get(k)) else {
            return Ok(false);
        };
        if d != DYN {
            let Some(a) = int_attr(d as u64, &Type::Index) else {
                return Ok(false);
            };
            let c = make_const(m, op, a, Type::Index);
            return Ok(replace(m, op, c));
        }
        // The n-th dynamic dim of an allocation is its n-th size operand.
        let alloc = m
            .defining_op(src)
            .filter(|&a| m.is(a, MemrefOp::Alloc) || m.is(a, MemrefOp::Alloca));
        let nth = shape.iter().take(k as usize).filter(|&&x| x == DYN).count();
        match alloc.and_then(|a| m.operand(a, nth)) {
            Some(size) => Ok(replace(m, op, size)),
            None => Ok(false),
        }
    }
}

/// `scf.if` / `scf.for` without used results whose bodies only compute.
pub struct DeadRegionOp;

impl Pattern for DeadRegionOp {
    fn name(&self) -> &'static str {
        "dead-region-op"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        if !(m.is(op, ScfOp::If) || m.is(op, ScfOp::For)) {
            return Ok(false);
        }
        if m.results(op).iter().any(|&r| m.has_uses(r)) {
            return Ok(false);
        }
        let harmless = m.collect_ops(op).into_iter().skip(1).all(|o| {
            m.is_pure(o) || m.is(o, ScfOp::Yield) || m.is(o, ScfOp::If) || m.is(o, ScfOp::For)
        });
        if harmless {
            m.erase_op(op);
        }
        Ok(harmless)
    }
}
