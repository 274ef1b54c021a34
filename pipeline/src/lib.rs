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
pub mod tools;

pub use compile::{compile, compile_module, CompileOptions, Emit};
pub use driver::{
    emit_llvm, import, import_bytes, load, run_stages, run_stages_bounded, stage_names,
    DEFAULT_FOLD_EXPANSION_BOUND, ENTRY, MAIN_GRAPH, STAGES,
};
pub use flags::{io_err, write_output, CmdResult, Failure, PassFlags, Reports, WarningSink};
pub use fold::{fold, FoldOptions, FoldTimes};
pub use passes::{registry, LLVM_LOWERING};
