//! The compile a worker runs: the same pipeline as `onnxc compile`
//! (cli/src/driver.rs), from bytes in memory to artifact bytes.

use crate::cmd::{Failure, PassFlags};
use crate::driver;
use std::path::PathBuf;

/// What a request asks for; part of the cache key.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Emit {
    Onnx,
    OnnxIr,
    Memref,
    Llvm,
}

impl Emit {
    pub fn parse(name: &str) -> Result<Emit, String> {
        Ok(match name {
            "onnx" => Emit::Onnx,
            "onnx-ir" => Emit::OnnxIr,
            "memref" => Emit::Memref,
            "llvm" => Emit::Llvm,
            "obj" | "lib" => {
                return Err(format!(
                    "emit '{name}' is not served by the daemon: emit llvm and build it locally"
                ))
            }
            _ => {
                return Err(format!(
                    "unknown emit kind '{name}' (onnx, onnx-ir, memref, llvm)"
                ))
            }
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Emit::Onnx => "onnx",
            Emit::OnnxIr => "onnx-ir",
            Emit::Memref => "memref",
            Emit::Llvm => "llvm",
        }
    }

    /// Text artifacts are returned inline as strings, others in base64.
    pub fn is_text(self) -> bool {
        self != Emit::Onnx
    }
}

#[derive(Clone, Debug)]
pub struct Job {
    pub emit: Emit,
    pub stop_after: Option<String>,
    /// Where external data files are looked up (never outside the root).
    pub dir: PathBuf,
    pub expansion_bound: Option<f64>,
}

pub struct Compiled {
    pub data: Vec<u8>,
    /// False when the model reads external data files: their contents are
    /// not part of the cache key.
    pub cacheable: bool,
}

/// Compiles a model held in memory. Everything it builds (IR, constants)
/// is dropped before it returns.
pub fn compile(model: bytes::Bytes, job: &Job) -> Result<Compiled, Failure> {
    let loaded = frontend::load::load_model_bytes(model, job.dir.clone())?;
    let cacheable = !uses_external_data(&loaded.proto);
    let mut m = frontend::import::import_model(&loaded)?;
    drop(loaded);
    let stop = job.stop_after.as_deref().or(match job.emit {
        Emit::Onnx | Emit::OnnxIr => Some("constprop"),
        Emit::Memref => Some("dealloc"),
        Emit::Llvm => None,
    });
    driver::run_stages_bounded(
        &mut m,
        stop,
        &PassFlags::default(),
        job.expansion_bound,
        &crate::target::Codegen::default(),
    )?;
    let data = if job.emit == Emit::Onnx {
        frontend::export::encode(&frontend::export::export_model(&m)?)
    } else if stop.is_some() {
        ir::text::print_module(&m, &ir::text::PrintOptions::default()).into_bytes()
    } else {
        driver::emit_llvm(&m)?.into_bytes()
    };
    Ok(Compiled { data, cacheable })
}

fn uses_external_data(model: &frontend::proto::ModelProto) -> bool {
    let Some(g) = &model.graph else {
        return false;
    };
    let external = |t: &frontend::proto::TensorProto| !t.external_data.is_empty();
    g.initializer.iter().any(external)
        || g.node
            .iter()
            .flat_map(|n| n.attribute.iter())
            .filter_map(|a| a.t.as_ref())
            .any(external)
}
