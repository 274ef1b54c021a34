//! The model pipeline lives in the `pipeline` crate (shared with the
//! Python package); this is its name inside the CLI.

pub use pipeline::{
    constprop_pipeline, emit_llvm, import, run_stages_bounded, stage_names,
    DEFAULT_FOLD_EXPANSION_BOUND, ENTRY, MAIN_GRAPH, STAGES,
};
