//! The compile pipeline of onnxc, shared by the `onnxc` CLI and the Python
//! package: loading and importing a model, the pass stages in order
//! (constprop → scrub → bufferize → dealloc → lower), and emission as
//! ONNX, IR text, LLVM IR, an object or a shared library with its C API.

mod compile;
mod driver;
mod flags;
mod fold;
pub mod native;
mod passes;
pub mod session_cache;
pub mod target;
pub mod tools;

pub use compile::{compile, compile_module, CompileOptions, Emit};
pub use driver::{
    constprop_pipeline, emit_llvm, import, import_bytes, load, run_stages, run_stages_bounded,
    run_stages_with, stage_names, DEFAULT_FOLD_EXPANSION_BOUND, ENTRY, MAIN_GRAPH, STAGES,
};
pub use flags::{
    io_err, write_output, CmdResult, Failure, PassFlags, Reports, ShapeFlags, WarningSink,
};
pub use fold::{fold, prepare_export, FoldOptions, FoldTimes};
pub use passes::{registry, LLVM_LOWERING};
pub use target::{Codegen, CodegenFlags};

/// The message a panic carried (`panic!` with a literal or a format).
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into())
}

/// The examples of docs/ARCHITECTURE.md, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/ARCHITECTURE.md")]
pub struct ArchitectureExamples;

/// The examples of CONTRIBUTING.md, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../CONTRIBUTING.md")]
pub struct ContributingExamples;
