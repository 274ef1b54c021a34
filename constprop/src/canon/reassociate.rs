//! Reassociation of constants through Add/Sub and Mul/Div, on both sides.
//!
//! First the constant of a commutative Add or Mul goes to the right
//! (`c + x → x + c`, as onnx-mlir's constprop normalises). Then an op with
//! one constant is read as an affine step on the other operand `x`: in the
//! Add/Sub family `s·x + t` (`x + c`, `c + x`: s = 1, t = c; `x - c`: t = -c;
//! `c - x`: s = -1), in the Mul/Div family `x^s · t` alike. Two such steps
//! in a row (the inner result used only by the outer op) compose into one:
//! `(c1 + x) + c2 → x + (c1 + c2)`, `c2 + (x + c1)` likewise,
//! `0.5 * x * 2 → x * 1 → x`, `1 - (x - c) → (1 + c) - x`,
//! `c2 / (c1 / x) → x * (c2 / c1)`. The constants combine as the inner op
//! wrote them (`(x - c1) + c2 → x - (c1 - c2)`, `(x / c1) / c2 → x / (c1 * c2)`),
//! so no constant is negated or inverted.
//!
//! Integers keep their exact semantics: Add/Sub wrap, so any regrouping is
//! exact modulo 2^n; Mul regroups with Mul only (Div truncates at each
//! step). Floats regroup in both families: the combined constant is
//! rounded once, which is the one rounding difference the rule allows
//! (ARCHITECTURE.md, constprop).

use super::{make_const, make_op};
use crate::fold::constant_operand;
use crate::fold::elementwise::{apply_arith, Arith};
use ir::elements::{Elements, NumClass};
use ir::rewrite::Pattern;
use ir::{Module, OpId, Result, ValueId};
use onnx::OpKind;

/// The same and the inverse operator of a family.
#[derive(Copy, Clone, PartialEq, Eq)]
struct Family {
    same: OpKind,
    inverse: OpKind,
}

const ADD: Family = Family {
    same: OpKind::Add,
    inverse: OpKind::Sub,
};
const MUL: Family = Family {
    same: OpKind::Mul,
    inverse: OpKind::Div,
};

fn family(k: OpKind) -> Option<Family> {
    match k {
        OpKind::Add | OpKind::Sub => Some(ADD),
        OpKind::Mul | OpKind::Div => Some(MUL),
        _ => None,
    }
}

fn arith(k: OpKind) -> Arith {
    match k {
        OpKind::Add => Arith::Add,
        OpKind::Sub => Arith::Sub,
        OpKind::Mul => Arith::Mul,
        _ => Arith::Div,
    }
}

/// `s·x + t` (or `x^s · t`) with `t = c`, or `t = -c` (`1/c`) when
/// `inverted`; `negated` is `s = -1` (then never `inverted`).
struct Step {
    fam: Family,
    x: ValueId,
    c: Elements,
    inverted: bool,
    negated: bool,
}

/// Reads `op` as a step on its one non-constant operand.
fn step(m: &Module, op: OpId) -> Option<Step> {
    let kind = OpKind::of(m, op)?;
    let fam = family(kind)?;
    let (a, b) = (constant_operand(m, op, 0), constant_operand(m, op, 1));
    let (x, c, x_right) = match (a, b) {
        (None, Some(c)) => (m.operand(op, 0)?, c, false),
        (Some(c), None) => (m.operand(op, 1)?, c, true),
        _ => return None,
    };
    let inverse = kind == fam.inverse;
    Some(Step {
        fam,
        x,
        c,
        inverted: inverse && !x_right,
        negated: inverse && x_right,
    })
}

/// `outer ∘ inner` as one step on `inner.x` (see the module comment).
fn compose(inner: Step, outer: &Step) -> Option<Step> {
    let dtype = inner.c.dtype();
    if outer.c.dtype() != dtype || inner.fam != outer.fam {
        return None;
    }
    let (same, inv) = (arith(inner.fam.same), arith(inner.fam.inverse));
    let (c1, c2) = (&inner.c, &outer.c);
    let (c, inverted, negated) = if outer.negated {
        // c2 ∘⁻¹ (s·x + t1) = -s·x + (c2 - t1)
        let c = if inner.inverted {
            apply_arith(same, c2, c1, dtype)?
        } else {
            apply_arith(inv, c2, c1, dtype)?
        };
        (c, false, !inner.negated)
    } else {
        // (s·x + t1) ± c2: the sign of the inner constant stays.
        let c = if inner.inverted == outer.inverted {
            apply_arith(same, c1, c2, dtype)?
        } else {
            apply_arith(inv, c1, c2, dtype)?
        };
        (c, inner.inverted, inner.negated)
    };
    Some(Step {
        fam: inner.fam,
        x: inner.x,
        c,
        inverted,
        negated,
    })
}

/// True if regrouping `s` is exact for its dtype, or floats.
fn allowed(s: &Step) -> bool {
    s.fam == ADD || s.c.dtype().class() == NumClass::Float || !(s.inverted || s.negated)
}

pub struct Reassociate;

impl Pattern for Reassociate {
    fn name(&self) -> &'static str {
        "reassociate-constants"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        let Some(outer) = step(m, op) else {
            return Ok(false);
        };
        let Some(inner_op) = m.defining_op(outer.x) else {
            return Ok(false);
        };
        if m.uses(outer.x).len() != 1 {
            return Ok(false);
        }
        let Some(inner) = step(m, inner_op) else {
            return Ok(false);
        };
        if !allowed(&inner) || !allowed(&outer) {
            return Ok(false);
        }
        let Some(s) = compose(inner, &outer) else {
            return Ok(false);
        };
        let Some(r) = m.result(op, 0) else {
            return Ok(false);
        };
        let ty = m.value_type(r).clone();
        let (kind, operands) = {
            let Some(k) = make_const(m, op, s.c) else {
                return Ok(false);
            };
            match (s.negated, s.inverted) {
                (true, _) => (s.fam.inverse, vec![k, s.x]),
                (false, true) => (s.fam.inverse, vec![s.x, k]),
                (false, false) => (s.fam.same, vec![s.x, k]),
            }
        };
        let new = onnx::NewOp::new(kind, operands.into_iter().map(Some).collect());
        let Some(n) = make_op(m, op, new, ty, "") else {
            return Ok(false);
        };
        m.replace_all_uses(r, n);
        m.erase_op(op);
        Ok(true)
    }
}

/// `c + x → x + c`, `c * x → x * c`: constants on the right.
pub struct ConstantsRight;

impl Pattern for ConstantsRight {
    fn name(&self) -> &'static str {
        "constants-right"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        if !matches!(OpKind::of(m, op), Some(OpKind::Add | OpKind::Mul)) {
            return Ok(false);
        }
        let (Some(a), Some(b)) = (m.operand(op, 0), m.operand(op, 1)) else {
            return Ok(false);
        };
        let is_const = |v| onnx::defined_by(m, v, OpKind::Constant).is_some();
        if !is_const(a) || is_const(b) {
            return Ok(false);
        }
        m.set_operand(op, 0, b);
        m.set_operand(op, 1, a);
        Ok(true)
    }
}
