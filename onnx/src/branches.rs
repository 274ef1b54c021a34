//! If branches that fail shape inference. Shapes inside a branch may depend
//! on runtime values (a sample rate picks the branch whose shapes fit), so
//! a branch whose inference fails is not a compile error: the If records
//! the error ([`BRANCH_ERRORS_ATTR`]), the other branch alone types its
//! results, later passes leave the dead branch alone, and the compiled
//! branch aborts with the message if it is ever taken.

use crate::OpKind;
use ir::{Attribute, Diagnostic, Module, OpId};

/// If attribute: per branch (then, else) the shape error that makes it
/// fail, `""` for a branch that type-checks. Absent when both do. Not
/// exported (the `onnx.` prefix), so `onnxc fold` writes the If as it was.
pub const BRANCH_ERRORS_ATTR: &str = "onnx.branch_errors";

/// The error recorded for branch `k` (0 then, 1 else) of If `op`.
pub fn branch_error(m: &Module, op: OpId, k: usize) -> Option<&str> {
    m.attr(op, BRANCH_ERRORS_ATTR)?
        .as_array()?
        .get(k)?
        .as_str()
        .filter(|s| !s.is_empty())
}

/// The innermost If branch holding `op` (directly or in a nested Loop,
/// Scan or If region): the If and the branch index.
pub fn enclosing_branch(m: &Module, op: OpId) -> Option<(OpId, usize)> {
    let mut cur = op;
    loop {
        let region = m.block_parent(m.op_block(cur)?)?;
        let parent = m.region_parent(region)?;
        if crate::is(m, parent, OpKind::If) {
            let k = m.regions(parent).iter().position(|&r| r == region)?;
            return Some((parent, k));
        }
        cur = parent;
    }
}

/// True when `op` sits (at any depth) in a branch recorded as failing.
pub fn in_dead_branch(m: &Module, op: OpId) -> bool {
    let mut cur = op;
    while let Some((parent, k)) = enclosing_branch(m, cur) {
        if branch_error(m, parent, k).is_some() {
            return true;
        }
        cur = parent;
    }
    false
}

/// Records `err` as the failure of branch `k` of If `op` (`None` clears
/// it). Returns whether the other branch is still live.
pub fn set_branch_error(m: &mut Module, op: OpId, k: usize, err: Option<&Diagnostic>) -> bool {
    let mut errors: Vec<String> = (0..2)
        .map(|i| branch_error(m, op, i).unwrap_or_default().to_string())
        .collect();
    if let Some(slot) = errors.get_mut(k) {
        *slot = err.map(error_text).unwrap_or_default();
    }
    let other_live = errors.get(1 - k.min(1)).is_some_and(String::is_empty);
    if errors.iter().all(String::is_empty) {
        m.remove_attr(op, BRANCH_ERRORS_ATTR);
    } else {
        let items = errors.iter().map(|e| Attribute::string(e)).collect();
        m.set_attr(op, BRANCH_ERRORS_ATTR, Attribute::Array(items));
    }
    other_live
}

/// A diagnostic as the message a failing branch aborts with: the op, its
/// location and the message.
pub fn error_text(d: &Diagnostic) -> String {
    let mut s = String::new();
    if let Some(op) = &d.op {
        s.push_str(op);
        s.push(' ');
    }
    if d.loc.is_known() {
        s.push_str(&format!("at {} ", d.loc));
    }
    if !s.is_empty() {
        s.pop();
        s.push_str(": ");
    }
    s.push_str(&d.message);
    s
}

/// "then" or "else".
pub fn branch_name(k: usize) -> &'static str {
    if k == 0 {
        "then"
    } else {
        "else"
    }
}
