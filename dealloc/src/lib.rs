//! onnxc ownership-based buffer deallocation and buffer reuse.
//!
//! * `ownership-based-deallocation` (`ownership`): frees each owned buffer
//!   after its last use, makes function results caller-owned.
//! * `dealloc-simplification` (`simplify`): canonicalizes the
//!   `bufferization.dealloc` ops it emits, mostly into `memref.dealloc`.
//! * `dealloc-pipeline`: both, in that order.

pub mod alias;
pub mod ownership;
pub mod simplify;

pub use ownership::MANUAL_DEALLOCATION;

use ir::pass::PassRegistry;

pub fn register_passes(reg: &mut PassRegistry) {
    reg.add(ownership::pass_info());
    reg.add(simplify::pass_info());
    reg.add_pipeline(
        "dealloc-pipeline",
        "ownership-based-deallocation, then dealloc-simplification",
        "ownership-based-deallocation,dealloc-simplification",
    );
}
