//! Generic passes on the builtin dialects: `canonicalize` (folding, scf
//! simplification, dead code) and `cse`.

pub mod canonicalize;
pub mod cse;
pub mod fold;

use crate::pass::PassRegistry;

pub fn register_passes(reg: &mut PassRegistry) {
    reg.add(canonicalize::pass_info());
    reg.add(cse::pass_info());
}
