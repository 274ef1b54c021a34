//! Subcommands, and the flags they share.

pub mod cache;
pub mod client;
pub mod compile;
pub mod fold;
pub mod opt;
pub mod run;
pub mod serve;
pub mod zoo;

pub use pipeline::{io_err, write_output, CmdResult, Failure, PassFlags, ShapeFlags};
