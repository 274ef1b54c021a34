//! onnxc lowering: scf to cf, and memref-level IR to textual LLVM IR.
//!
//! Emitted functions use an internal ABI: memref arguments and results are
//! MLIR descriptors passed by value as LLVM aggregates, several results
//! come back as one literal struct. See `llvm` for the details.

pub mod cabi;
pub mod cabi_batch;
pub mod capi;
pub mod dealloc_lowering;
pub mod elf;
pub mod expand_math;
pub mod llvm;
pub mod multiversion;
pub mod noalias;
pub mod outline;
pub mod parallel;
pub mod scf_to_cf;

pub use llvm::{EmitOptions, WeightLayout, WeightSink};

use ir::pass::PassRegistry;
use ir::{Diagnostic, Module};

/// Registers this crate's passes and pipeline aliases.
pub fn register_passes(reg: &mut PassRegistry) {
    reg.add(scf_to_cf::pass_info());
    dealloc_lowering::register(reg);
    reg.add(parallel::pass_info());
    reg.add(outline::pass_info());
    reg.add(noalias::pass_info());
    reg.add(multiversion::pass_info());
    reg.add(ir::transforms::symbol_dce::pass_info());
    reg.add(expand_math::pass_info());
    reg.add_pipeline(
        "lower-to-llvm-ready",
        "everything the LLVM IR emitter needs to run first",
        LLVM_READY,
    );
}

/// The passes of `lower-to-llvm-ready`.
const LLVM_READY: &str =
    "expand-math,lower-deallocations,lower-parallel,outline-kernels,mark-noalias,convert-scf-to-cf,symbol-dce";

/// `lower-to-llvm-ready` with the compile-time thread count of the
/// parallel loops (0: all cores at run time, 1: serial); `x86_levels`:
/// the vector kernels in a variant per x86-64 level (`multiversion`).
pub fn llvm_ready_pipeline(threads: u64, x86_levels: bool) -> String {
    let p = LLVM_READY.replace(
        "lower-parallel",
        &format!("lower-parallel{{threads={threads}}}"),
    );
    match x86_levels {
        true => p.replace("mark-noalias", "mark-noalias,multiversion"),
        false => p,
    }
}

/// Emits LLVM IR text for a module of func/arith/math/memref/cf ops.
pub fn emit_llvm(m: &Module, opts: &EmitOptions) -> Result<String, Diagnostic> {
    llvm::emit_module(m, opts)
}

/// Like [`emit_llvm`], with large constant globals written to a sidecar
/// binary the text pulls in with `.incbin`.
pub fn emit_llvm_with_weights(
    m: &Module,
    opts: &EmitOptions,
    weights: &mut WeightSink<'_>,
) -> Result<String, Diagnostic> {
    llvm::emit_module_with(m, opts, Some(weights))
}

/// Like [`emit_llvm`], with large constant globals in a weights blob the
/// text only declares; write it with [`WeightLayout::write`] or as an
/// object with [`elf::write_weights_object`].
pub fn emit_llvm_extern_weights(
    m: &Module,
    opts: &EmitOptions,
) -> Result<(String, WeightLayout), Diagnostic> {
    llvm::emit_module_extern_weights(m, opts)
}

/// Like [`emit_llvm_extern_weights`], split into up to `max_parts` modules
/// (fewer for a small model) that are compiled separately and linked
/// together; the first defines the globals.
pub fn emit_llvm_parts(
    m: &Module,
    opts: &EmitOptions,
    max_parts: usize,
) -> Result<(Vec<String>, WeightLayout), Diagnostic> {
    llvm::emit_module_parts(m, opts, max_parts, MIN_PART_BYTES)
}

/// Function text per separately compiled part, at least.
pub const MIN_PART_BYTES: usize = 256 * 1024;
