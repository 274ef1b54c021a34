//! Bufferization: `onnx.*` ops on tensors become memref allocations and
//! `scf` loop nests (the role onnx-mlir's Krnl dialect plays).

pub mod convert;
pub mod kernels;
pub mod loops;
pub mod split_alloc;

use ir::pass::{FnPass, PassInfo, PassRegistry};

pub use convert::bufferize_module;

pub fn register_passes(reg: &mut PassRegistry) {
    split_alloc::register(reg);
    reg.add(PassInfo {
        name: "bufferize",
        summary: "onnx ops on tensors to memref allocations and scf loop nests",
        create: |_| {
            Ok(Box::new(FnPass {
                name: "bufferize",
                f: |m, _| bufferize_module(m),
            }))
        },
    });
}
