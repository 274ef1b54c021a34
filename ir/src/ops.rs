//! The core dialects' ops as enums, generated from `ir/core.table`.
//!
//! Passes name core ops by these enums, never by string: `m.is(op,
//! MemrefOp::Alloc)`, `match CoreOp::of(m, op) { Some(CoreOp::Arith(a)) =>
//! .. }`. The printer, parser, folder and LLVM emitter match on them
//! exhaustively, so a new table row does not build until each handles it.

use crate::module::{Module, OpId};
use crate::registry::{OpDef, Syntax, Traits};
use crate::sym::Sym;
use std::collections::HashMap;
use std::sync::OnceLock;

include!(concat!(env!("OUT_DIR"), "/core_ops.rs"));

/// Interned names' addresses to ops: a lookup without hashing the text.
fn by_sym() -> &'static HashMap<usize, CoreOp> {
    static MAP: OnceLock<HashMap<usize, CoreOp>> = OnceLock::new();
    MAP.get_or_init(|| {
        CoreOp::ALL
            .iter()
            .map(|&op| (Sym::new(op.name()).as_str().as_ptr() as usize, op))
            .collect()
    })
}

impl CoreOp {
    /// The core op an interned name spells, `None` for other dialects.
    pub fn from_sym(name: Sym) -> Option<CoreOp> {
        by_sym().get(&(name.as_str().as_ptr() as usize)).copied()
    }
    /// The core op spelled `name`.
    pub fn from_name(name: &str) -> Option<CoreOp> {
        // Building the map interns the names `Sym::lookup` looks for.
        by_sym();
        CoreOp::from_sym(Sym::lookup(name)?)
    }
    /// The kind of `op`, `None` for ops of other dialects.
    pub fn of(m: &Module, op: OpId) -> Option<CoreOp> {
        CoreOp::from_sym(m.name(op))
    }
    pub fn sym(self) -> Sym {
        Sym::new(self.name())
    }
}

/// An op name a query takes: a core op enum, or the name spelled out
/// (ONNX ops, tests). Builders take `impl Into<Sym>`, which both convert to.
pub trait OpName: Copy {
    fn op_name(&self) -> &str;
}

impl OpName for &str {
    fn op_name(&self) -> &str {
        self
    }
}

impl OpName for CoreOp {
    fn op_name(&self) -> &str {
        self.name()
    }
}

impl From<CoreOp> for Sym {
    fn from(op: CoreOp) -> Sym {
        op.sym()
    }
}
