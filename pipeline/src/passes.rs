//! The pass registry of the tools: every crate contributes its passes.

use ir::pass::PassRegistry;

/// What `--emit llvm` runs after the user's pipeline.
pub const LLVM_LOWERING: &str = "lower-to-llvm-ready";

pub fn registry() -> PassRegistry {
    // Op definitions (traits, verifiers) of every dialect the tools accept.
    frontend::dialect::register();
    let mut r = PassRegistry::new();
    ir::transforms::register_passes(&mut r);
    constprop::register_passes(&mut r);
    bufferize::register_passes(&mut r);
    dealloc::register_passes(&mut r);
    lower::register_passes(&mut r);
    r
}
