//! The structural verifier: terminators, SSA dominance, isolation, successor
//! placement, then each registered op's own checks.

use crate::analysis::dominance::{Dominance, OpOrder};
use crate::diag::{Diagnostic, Result};
use crate::dialects::op_error;
use crate::module::{Module, OpId, ValueDef, ValueId};
use crate::registry::{self, Traits};

/// Dialects whose ops must all be registered (unknown names are typos).
const CLOSED_DIALECTS: [&str; 8] = [
    "builtin",
    "func",
    "arith",
    "math",
    "memref",
    "scf",
    "cf",
    "bufferization",
];

/// Verifies the whole module; returns the first problem found.
pub fn verify(m: &Module) -> Result<()> {
    let order = OpOrder::new(m);
    let mut dom = Dominance::default();
    for op in m.collect_ops(m.top()) {
        verify_op(m, op, &order, &mut dom)?;
    }
    Ok(())
}

fn verify_op(m: &Module, op: OpId, order: &OpOrder, dom: &mut Dominance) -> Result<()> {
    let name = m.name(op);
    let def = registry::lookup(name);
    if def.is_none() && CLOSED_DIALECTS.contains(&name.dialect()) {
        return Err(op_error(m, op, "unknown operation in a registered dialect"));
    }
    let traits = def.map_or(Traits::NONE, |d| d.traits);
    for (i, &v) in m.operands(op).iter().enumerate() {
        check_dominance(m, op, v, i, order, dom)?;
    }
    if m.num_successors(op) > 0 && !traits.contains(Traits::TERMINATOR) && def.is_some() {
        return Err(op_error(m, op, "has successors but is not a terminator"));
    }
    for &r in m.regions(op) {
        for &b in m.region_blocks(r) {
            let last = m.last_op(b);
            for o in m.block_ops(b) {
                let is_term = m.is_terminator(o);
                if is_term && Some(o) != last {
                    return Err(op_error(
                        m,
                        o,
                        "terminator must be the last op of its block",
                    ));
                }
            }
            if !traits.contains(Traits::NO_TERMINATOR) {
                match last {
                    Some(t) if m.is_terminator(t) || registry::lookup(m.name(t)).is_none() => {}
                    _ => {
                        return Err(op_error(
                            m,
                            op,
                            "block in region must end with a terminator",
                        ));
                    }
                }
            }
        }
    }
    if let Some(f) = def.and_then(|d| d.verify) {
        f(m, op)?;
    }
    Ok(())
}

/// The definition of `v` must dominate its use by `user`, without crossing an
/// isolated-from-above op.
fn check_dominance(
    m: &Module,
    user: OpId,
    v: ValueId,
    index: usize,
    order: &OpOrder,
    dom: &mut Dominance,
) -> Result<()> {
    let (def_block, def_op) = match m.value_def(v) {
        ValueDef::Result(op, _) => match m.op_block(op) {
            Some(b) if !m.is_erased(op) => (b, Some(op)),
            _ => return Err(undefined(m, user, index)),
        },
        ValueDef::BlockArg(b, _) => (b, None),
        ValueDef::Erased => return Err(undefined(m, user, index)),
    };
    let def_region = m.block_parent(def_block);
    let mut anc = user;
    loop {
        let Some(blk) = m.op_block(anc) else {
            return Err(undefined(m, user, index));
        };
        let region = m.block_parent(blk);
        if region == def_region {
            if blk == def_block {
                return match def_op {
                    Some(d) if d == anc || !order.is_before(d, anc) => Err(op_error(
                        m,
                        user,
                        format!("operand #{index} does not dominate this use"),
                    )),
                    _ => Ok(()),
                };
            }
            let ok = region.is_some_and(|r| dom.tree(m, r).dominates(def_block, blk));
            return if ok {
                Ok(())
            } else {
                Err(op_error(
                    m,
                    user,
                    format!("operand #{index} does not dominate this use"),
                ))
            };
        }
        let Some(parent) = m.block_parent_op(blk) else {
            return Err(undefined(m, user, index));
        };
        if m.has_trait(parent, Traits::ISOLATED) {
            return Err(op_error(
                m,
                user,
                format!(
                    "operand #{index} is defined above an isolated-from-above '{}'",
                    m.name(parent)
                ),
            ));
        }
        anc = parent;
    }
}

fn undefined(m: &Module, user: OpId, index: usize) -> Diagnostic {
    op_error(
        m,
        user,
        format!("operand #{index} uses a value that is not defined"),
    )
}
