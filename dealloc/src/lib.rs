//! onnxc ownership-based buffer deallocation and buffer reuse.
//!
//! * `ownership-based-deallocation` (`ownership`): frees each owned buffer
//!   after its last use, makes function results caller-owned.
//! * `dealloc-simplification` (`simplify`): canonicalizes the
//!   `bufferization.dealloc` ops it emits, mostly into `memref.dealloc`.
//! * `expand-realloc` (`realloc`): reallocs deallocation cannot keep.
//! * `buffer-reuse`, `promote-buffers-to-stack` (`reuse`): the reuse family.
//! * `hoist-allocs`, `elide-copies` (`motion`): loop hoisting, copy elision.
//! * `write-into-destination` (`destination`): a buffer copied into a
//!   disjoint slot of another (Concat's inputs) is computed in the slot.
//! * `double-buffer`, `simplify-loop-results` (`loops`): loop-carried
//!   buffers swapped between two allocations; frees of permuted loop
//!   results moved onto the original allocations.
//! * `dealloc-pipeline`: expand-realloc, ownership, simplification, double
//!   buffering, loop results, writes into destinations, copy elision,
//!   buffer reuse, hoisting.

pub mod alias;
pub mod cfg;
pub mod destination;
pub mod dynamic;
pub mod loops;
pub mod motion;
pub mod ownership;
mod place;
pub mod realloc;
pub mod regions;
pub mod reuse;
pub mod simplify;
mod support;

pub use ownership::MANUAL_DEALLOCATION;

use ir::pass::PassRegistry;

pub fn register_passes(reg: &mut PassRegistry) {
    reg.add(realloc::pass_info());
    reg.add(destination::pass_info());
    reg.add(ownership::pass_info());
    reg.add(simplify::pass_info());
    reg.add(reuse::reuse_pass_info());
    reg.add(reuse::promote_pass_info());
    reg.add(motion::hoist_pass_info());
    reg.add(motion::elide_pass_info());
    reg.add(loops::double_pass_info());
    reg.add(loops::simplify_pass_info());
    reg.add_pipeline(
        "dealloc-pipeline",
        "expand-realloc, ownership-based-deallocation, dealloc-simplification, double-buffer, simplify-loop-results, write-into-destination, elide-copies, buffer-reuse, hoist-allocs",
        "expand-realloc,ownership-based-deallocation,dealloc-simplification,double-buffer,simplify-loop-results,write-into-destination,elide-copies,buffer-reuse,hoist-allocs",
    );
}
