//! Subcommands, and the flags they share.

pub mod bench;
pub mod cache;
pub mod client;
pub mod compile;
pub mod fold;
pub mod opt;
pub mod run;
pub mod serve;
pub mod zoo;

pub use pipeline::{io_err, write_output, CmdResult, Failure, PassFlags};

/// `--input-shape NAME=DIMS` (repeatable), shared by the commands that
/// import a model.
#[derive(clap::Args, Clone, Default)]
pub struct ShapeFlags {
    /// Fix an input's dims before compiling: `NAME=1x3x640x640`; `?` keeps
    /// a dim dynamic (`NAME=?x3x224x224`). Repeatable.
    #[arg(long = "input-shape", value_name = "NAME=DIMS", value_parser = frontend::import::InputShape::parse)]
    pub input_shapes: Vec<frontend::import::InputShape>,
}

impl ShapeFlags {
    pub fn options(&self) -> frontend::import::ImportOptions {
        frontend::import::ImportOptions {
            input_shapes: self.input_shapes.clone(),
            ..Default::default()
        }
    }
}
