//! The compile a worker runs: the same pipeline as `onnxc compile`
//! (cli/src/driver.rs), from bytes in memory to artifact bytes.

use super::reaper::{self, Deferred};
use frontend::import::ImportOptions;
use pipeline::{Failure, PassFlags};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// What a request asks for (part of the cache key): `--emit`'s kinds.
pub use pipeline::Emit;

#[derive(Clone, Debug)]
pub struct Job {
    pub emit: Emit,
    pub stop_after: Option<String>,
    /// Where external data files are looked up (never outside the root).
    pub dir: PathBuf,
    pub expansion_bound: Option<f64>,
    /// `input_shapes` of the request.
    pub import: ImportOptions,
    /// `emit: lib`: the library's C prefix.
    pub lib_name: String,
    /// Bound of the external data read into memory (`--max-model-bytes`).
    pub max_external_bytes: u64,
}

pub struct Compiled {
    pub data: Vec<u8>,
    /// False when the model reads external data files: their contents are
    /// not part of the cache key.
    pub cacheable: bool,
}

/// Compiles a model held in memory. Everything it builds (IR, constants)
/// is dropped before it returns. Stops early once the thread's
/// cancellation token is set (ir::cancel).
pub fn compile(model: bytes::Bytes, job: &Job) -> Result<Compiled, Failure> {
    // External data is read, not mapped: a file truncated under --root
    // during the compile must fail the request, not SIGBUS the daemon.
    let loaded =
        frontend::load::load_model_bytes_copying(model, job.dir.clone(), job.max_external_bytes)?;
    job.import.check(&loaded).map_err(Failure::Usage)?;
    let cacheable = !uses_external_data(&loaded.proto);
    // Freed by the reaper, also when a cancelled compile unwinds: the
    // worker answers (or takes its next job) without walking the IR.
    let mut m = Deferred::new(frontend::import::import_model_with(&loaded, &job.import)?);
    reaper::drop_later(loaded);
    hold_for_tests()?;
    let stop = job.stop_after.as_deref().or(job.emit.last_stage());
    pipeline::run_stages_bounded(&mut m, stop, &PassFlags::default(), job.expansion_bound)?;
    if job.emit == Emit::Onnx {
        pipeline::prepare_export(&mut m)?;
    }
    let data = if job.emit == Emit::Onnx {
        frontend::export::encode(&frontend::export::export_model(&m)?)
    } else if stop.is_some() {
        let text = ir::text::print_module(&m, &ir::text::PrintOptions::default());
        ir::cancel::check()?; // the printer stops early when cancelled
        text.into_bytes()
    } else if matches!(job.emit, Emit::Obj | Emit::Lib) {
        native(m.into_inner(), job)?
    } else {
        pipeline::emit_llvm(&m)?.into_bytes()
    };
    Ok(Compiled { data, cacheable })
}

/// Test hook of debug builds: while the file `ONNXC_TEST_HOLD` names
/// exists, a compile waits after the import, before its first stage
/// (cancellable), so a test can have a compile still running at a
/// deadline whatever the machine's speed; it creates `<hold>.waiting` when
/// it starts to wait. Release builds have no hook.
fn hold_for_tests() -> Result<(), Failure> {
    if !cfg!(debug_assertions) {
        return Ok(());
    }
    let Some(path) = std::env::var_os("ONNXC_TEST_HOLD") else {
        return Ok(());
    };
    let mut waiting = path.clone();
    waiting.push(".waiting");
    if std::path::Path::new(&path).exists() {
        let _ = std::fs::write(&waiting, b"");
    }
    while std::path::Path::new(&path).exists() {
        ir::cancel::check()?;
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    Ok(())
}

/// Builds with clang in a private temp directory (removed afterwards) and
/// returns the object, or the library bundled with its header.
fn native(m: ir::Module, job: &Job) -> Result<Vec<u8>, Failure> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "onnxc-serve-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).map_err(|e| pipeline::io_err("create", &dir, e))?;
    let result = (|| {
        let lib = job.emit == Emit::Lib;
        let out = dir.join(if lib {
            format!("lib{}.so", job.lib_name)
        } else {
            format!("{}.o", job.lib_name)
        });
        // One clang process per worker: `--workers` bounds them.
        let cg = pipeline::Codegen {
            clang_jobs: 1,
            ..pipeline::Codegen::default()
        };
        pipeline::native::build(m, lib, &out, None, &cg)?;
        let read = |p: &Path| std::fs::read(p).map_err(|e| pipeline::io_err("read", p, e));
        let bytes = read(&out)?;
        if !lib {
            return Ok(bytes);
        }
        let prefix = lower::capi::c_prefix(&format!("lib{}", job.lib_name));
        let header = read(&dir.join(format!("{prefix}.h")))?;
        Ok(lib_bundle(&bytes, &header))
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

const LIB_MAGIC: &[u8; 11] = b"ONNXC-LIB1\n";

/// One cache entry for a library: magic, length of the `.so`, the `.so`,
/// then the header.
pub fn lib_bundle(so: &[u8], header: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(LIB_MAGIC.len() + 8 + so.len() + header.len());
    v.extend_from_slice(LIB_MAGIC);
    v.extend_from_slice(&(so.len() as u64).to_le_bytes());
    v.extend_from_slice(so);
    v.extend_from_slice(header);
    v
}

/// Where the `.so` and the header of a [`lib_bundle`] lie in it.
pub fn split_lib(data: &[u8]) -> Option<(Range<usize>, Range<usize>)> {
    let rest = data.strip_prefix(LIB_MAGIC)?;
    let len = u64::from_le_bytes(rest.get(..8)?.try_into().ok()?);
    let start = LIB_MAGIC.len() + 8;
    let end = usize::try_from(len)
        .ok()
        .and_then(|l| start.checked_add(l))
        .filter(|&e| e <= data.len())?;
    Some((start..end, end..data.len()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lib_bundles_split_back() {
        let b = lib_bundle(b"\x7fELF...", b"#include <stdint.h>\n");
        let (so, h) = split_lib(&b).unwrap();
        assert_eq!(&b[so], b"\x7fELF...");
        assert_eq!(&b[h], b"#include <stdint.h>\n");
        assert!(split_lib(&b[..15]).is_none());
        assert!(split_lib(b"nope").is_none());
    }
}
