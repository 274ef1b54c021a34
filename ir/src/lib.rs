//! The onnxc IR core: entities, types, attributes, elements, the builtin
//! dialects, the MLIR text format, the verifier and the pass manager.

pub mod attr;
pub mod cancel;
pub mod diag;
pub mod dim;
pub mod elements;
pub mod entity;
pub mod module;
pub mod ops;
pub mod output;
pub mod sym;
pub mod types;

pub use attr::Attribute;
pub use diag::{Diagnostic, Location, Result};
pub use module::{
    BlockId, InsertPoint, Module, OpId, OpSpec, RegionId, Use, ValueDef, ValueId, ValueMap,
};
pub use ops::{
    ArithOp, BufferizationOp, BuiltinOp, CfOp, CoreOp, FuncOp, MathOp, MemrefOp, OpName, ScfOp,
    VectorOp, X86VectorOp,
};
pub use sym::Sym;
pub use types::{FloatKind, Signedness, Type, DYN};
pub mod analysis;
pub mod builder;
pub mod dialects;
pub mod registry;
pub mod verify;

pub use builder::Builder;
pub use verify::verify;
pub mod pass;
pub mod rewrite;
pub mod text;
pub mod transforms;
