//! Bufferization: `onnx.*` ops on tensors become memref allocations and
//! `scf` loop nests (the role onnx-mlir's Krnl dialect plays).

pub mod convert;
pub mod kernels;
pub mod loops;
pub mod split_alloc;

use ir::pass::{Pass, PassContext, PassInfo, PassRegistry};
use ir::{Diagnostic, Module, Result};

pub use convert::{bufferize_module, bufferize_module_for, KernelTarget, DEFAULT_VECTOR_BITS};

/// The `bufferize` pass; option `vector-bits` (128, 256 or 512) is the
/// width of the target's vector registers, `int8-dot` (0 or 1) whether it
/// has VNNI's byte dot product, `x86-levels` (0 or 1) whether the GEMM
/// functions come in a variant per x86-64 level, chosen at run time.
struct Bufferize {
    target: KernelTarget,
}

impl Pass for Bufferize {
    fn name(&self) -> &'static str {
        "bufferize"
    }
    fn run(&self, m: &mut Module, _: &mut PassContext) -> Result<()> {
        bufferize_module_for(m, self.target)
    }
}

pub fn register_passes(reg: &mut PassRegistry) {
    split_alloc::register(reg);
    reg.add(PassInfo {
        name: "bufferize",
        summary: "onnx ops on tensors to memref allocations and scf loop nests",
        create: |opts| {
            let bits = opts
                .number("vector-bits")?
                .unwrap_or(u64::from(DEFAULT_VECTOR_BITS));
            if !matches!(bits, 128 | 256 | 512) {
                return Err(Diagnostic::error(format!(
                    "bufferize: vector-bits must be 128, 256 or 512, got {bits}"
                )));
            }
            Ok(Box::new(Bufferize {
                target: KernelTarget {
                    vector_bits: bits as u32,
                    int8_dot: opts.flag("int8-dot"),
                    x86_levels: opts.flag("x86-levels"),
                },
            }))
        },
    });
}
