//! The ONNX dialect of onnxc: every ONNX operator the importer accepts,
//! defined once in `ops.table` (name, domain, opset versions, inputs,
//! outputs, attributes with types and defaults).
//!
//! From the table (see `build.rs`): [`OpKind`], one variant per op, which
//! every stage matches exhaustively; [`SCHEMAS`]; and in [`ops`] one typed
//! view per op whose accessors return an attribute or its default
//! (`ops::Selu::of(m, op).alpha()`).

mod generated {
    #![allow(clippy::all)]
    use crate::schema::*;
    include!(concat!(env!("OUT_DIR"), "/ops.rs"));
}

pub mod axis;
pub mod branches;
pub mod dialect;
pub mod ml;
pub mod model;
pub mod schema;
pub mod shape_value;
pub mod verify;
pub mod view;
pub use view::{none_value, NewOp};

pub use generated::{ops, OpKind, ALL_KINDS, SCHEMAS};
pub use model::{model_ml_opset, model_opset};
pub use schema::{Arity, AttrDefault, AttrSchema, AttrType, Domain, OpSchema, Param};

use ir::{Module, OpId, Sym};
use std::collections::HashMap;
use std::sync::OnceLock;

/// The newest default-domain opset whose semantics the ops follow.
pub const LATEST_OPSET: i64 = 28;
/// The newest `ai.onnx.ml` opset the table describes.
pub const LATEST_ML_OPSET: i64 = 5;

/// Kinds by the address of their interned IR name (names are interned
/// once, so the address identifies the name).
fn by_sym() -> &'static HashMap<usize, OpKind> {
    static MAP: OnceLock<HashMap<usize, OpKind>> = OnceLock::new();
    MAP.get_or_init(|| {
        SCHEMAS
            .iter()
            .map(|s| (Sym::new(s.ir_name).as_str().as_ptr() as usize, s.kind))
            .collect()
    })
}

impl OpKind {
    pub fn schema(self) -> &'static OpSchema {
        &SCHEMAS[self as usize]
    }
    /// The ONNX operator name (`Conv`).
    pub fn name(self) -> &'static str {
        self.schema().name
    }
    /// The IR op name (`onnx.Conv`).
    pub fn ir_name(self) -> &'static str {
        self.schema().ir_name
    }
    pub fn domain(self) -> Domain {
        self.schema().domain
    }
    /// The kind of an IR op name.
    pub fn from_sym(name: Sym) -> Option<OpKind> {
        by_sym().get(&(name.as_str().as_ptr() as usize)).copied()
    }
    /// The kind of `op`, `None` for ops of other dialects.
    pub fn of(m: &Module, op: OpId) -> Option<OpKind> {
        OpKind::from_sym(m.name(op))
    }
    /// The kind of a model's `(domain, op_type)`; internal ops excluded.
    pub fn from_model(domain: &str, op_type: &str) -> Option<OpKind> {
        let domain = match domain {
            "" | "ai.onnx" => Domain::Onnx,
            "ai.onnx.ml" => Domain::OnnxMl,
            "com.microsoft" => Domain::Microsoft,
            _ => return None,
        };
        SCHEMAS
            .iter()
            .find(|s| s.domain == domain && s.name == op_type)
            .map(|s| s.kind)
    }
}

/// Whether `op` is an op of `kind`.
pub fn is(m: &Module, op: OpId, kind: OpKind) -> bool {
    OpKind::of(m, op) == Some(kind)
}

/// The op defining `v` when it is an op of `kind`.
pub fn defined_by(m: &Module, v: ir::ValueId, kind: OpKind) -> Option<OpId> {
    m.defining_op(v).filter(|&d| is(m, d, kind))
}
