//! Generic passes on the builtin dialects: `canonicalize` (folding, scf
//! simplification, dead code) and `cse`; `symbol-dce`, which the LLVM
//! lowering registers with its pipeline.

pub mod canonicalize;
pub mod cse;
pub mod fold;
pub mod symbol_dce;

use crate::pass::PassRegistry;

pub fn register_passes(reg: &mut PassRegistry) {
    reg.add(canonicalize::pass_info());
    reg.add(cse::pass_info());
}
