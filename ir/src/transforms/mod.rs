//! Generic passes on the builtin dialects: `canonicalize` (folding, scf
//! simplification, dead code), `cse` and `symbol-dce`.

pub mod canonicalize;
pub mod cse;
pub mod fold;
pub mod symbol_dce;

use crate::pass::PassRegistry;

pub fn register_passes(reg: &mut PassRegistry) {
    reg.add(canonicalize::pass_info());
    reg.add(cse::pass_info());
    reg.add(symbol_dce::pass_info());
}
