//! Emitting a lowered model: LLVM IR with its weights sidecar, an object
//! file, or a shared library with its C header (`compile --emit
//! llvm|obj|lib`, and the build of `onnxc run`).

use super::{io_err, write_output, CmdResult, Failure};
use crate::driver::{ENTRY, MAIN_GRAPH};
use ir::{Diagnostic, Module};
use std::path::{Path, PathBuf};
use std::process::Command;

fn diag(msg: impl Into<String>) -> Failure {
    Failure::Diagnostic(Diagnostic::error(msg))
}

/// LLVM IR of the model with the descriptor entry `entry`; large constants
/// go to `weights` (created) and are pulled in by `.incbin` of its absolute
/// path. Without `weights`, everything is inline text.
pub fn emit_ll(m: &Module, entry: &str, weights: Option<&Path>) -> Result<String, Failure> {
    let opts = lower::EmitOptions::default();
    let mut ll = match weights {
        None => lower::emit_llvm(m, &opts)?,
        Some(path) => {
            let file = std::fs::File::create(path).map_err(|e| io_err("create", path, e))?;
            let mut w = std::io::BufWriter::new(file);
            let abs = std::path::absolute(path).map_err(|e| io_err("resolve", path, e))?;
            let mut sink = lower::WeightSink {
                incbin_path: abs.to_string_lossy().into_owned(),
                out: &mut w,
            };
            let ll = lower::emit_llvm_with_weights(m, &opts, &mut sink)?;
            use std::io::Write as _;
            w.flush().map_err(|e| io_err("write", path, e))?;
            if !ll.contains(lower::llvm::WEIGHTS_SYM) {
                // Nothing large: no sidecar.
                let _ = std::fs::remove_file(path);
            }
            ll
        }
    };
    ll.push('\n');
    ll.push_str(&lower::cabi::emit_entry(m, MAIN_GRAPH, entry)?);
    Ok(ll)
}

/// The sidecar next to an `.ll` output: `model.ll` → `model.weights.bin`.
pub fn sidecar_path(out: &Path) -> PathBuf {
    let stem = out
        .file_stem()
        .map_or_else(|| "model".to_string(), |s| s.to_string_lossy().into_owned());
    out.with_file_name(format!("{stem}.weights.bin"))
}

/// `--emit llvm`: to a file, with the weights sidecar next to it; to
/// stdout, self-contained.
pub fn write_llvm(m: &Module, output: Option<&Path>) -> CmdResult {
    match output.filter(|p| p.as_os_str() != "-") {
        Some(out) => {
            let ll = emit_ll(m, ENTRY, Some(&sidecar_path(out)))?;
            write_output(Some(out), ll.as_bytes())
        }
        None => write_output(None, emit_ll(m, ENTRY, None)?.as_bytes()),
    }
}

/// clang: `--llvm-bin DIR`, else LLVM 19, else PATH; a clear error if none.
pub fn clang(llvm_bin: Option<&Path>) -> Result<PathBuf, Failure> {
    crate::tools::find_tool("clang", llvm_bin).ok_or_else(|| {
        let where_ = match llvm_bin {
            Some(d) => format!("in {}", d.display()),
            None => "in /usr/lib/llvm-19/bin or on PATH".to_string(),
        };
        diag(format!(
            "clang not found {where_}: --emit obj|lib and run need LLVM's clang \
             (install LLVM 19 with scripts/setup-llvm.sh, or pass --llvm-bin DIR)"
        ))
    })
}

/// A build directory removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir(near: &Path) -> Result<TempDir, Failure> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let parent = near
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = parent.join(format!(".onnxc-build-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| io_err("create", &dir, e))?;
    Ok(TempDir(dir))
}

fn run_clang(cmd: &mut Command, clang: &Path) -> CmdResult {
    let out = cmd.output().map_err(|e| io_err("run", clang, e))?;
    if !out.status.success() {
        return Err(diag(format!(
            "clang failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(())
}

/// `--emit obj`: the IR and its weights in one object exporting the
/// descriptor entry `onnxc_entry` (docs/ABI.md, "Low-level entry").
/// `--emit lib`: `libNAME.so` exporting only the `NAME_*` C API, and
/// `NAME.h` next to it.
pub fn build(m: &Module, lib: bool, out: &Path, llvm_bin: Option<&Path>) -> CmdResult {
    let clang = clang(llvm_bin)?;
    let tmp = temp_dir(out)?;
    let stem = out
        .file_stem()
        .map_or_else(|| "model".into(), |s| s.to_string_lossy().into_owned());
    let prefix = lower::capi::c_prefix(&stem);
    // In a library the entry is local (version script below).
    let entry = ENTRY;
    let ll = emit_ll(m, entry, Some(&tmp.0.join("model.weights.bin")))?;
    let ll_path = tmp.0.join("model.ll");
    std::fs::write(&ll_path, &ll).map_err(|e| io_err("write", &ll_path, e))?;
    drop(ll);
    let tmp_out = tmp.0.join("out");
    let mut cmd = Command::new(&clang);
    cmd.args(["-O2", "-w"]);
    if lib {
        let c_path = tmp.0.join("capi.c");
        let c = lower::capi::wrapper(m, MAIN_GRAPH, &prefix, entry)?;
        std::fs::write(&c_path, c).map_err(|e| io_err("write", &c_path, e))?;
        // Only the C API is exported; internal functions stay local, so
        // several models can be loaded into one process.
        let vs = tmp.0.join("exports.map");
        let script = format!("{{ global: {prefix}_*; local: *; }};\n");
        std::fs::write(&vs, script).map_err(|e| io_err("write", &vs, e))?;
        cmd.args(["-shared", "-fPIC"])
            .arg(&ll_path)
            .arg(&c_path)
            .arg(format!("-Wl,--version-script={}", vs.display()))
            .arg("-lm");
    } else {
        cmd.arg("-c").arg(&ll_path);
    }
    cmd.arg("-o").arg(&tmp_out);
    run_clang(&mut cmd, &clang)?;
    std::fs::rename(&tmp_out, out)
        .or_else(|_| std::fs::copy(&tmp_out, out).map(|_| ()))
        .map_err(|e| io_err("write", out, e))?;
    if lib {
        let header = out.with_file_name(format!("{prefix}.h"));
        let h = lower::capi::header(m, MAIN_GRAPH, &prefix)?;
        write_output(Some(&header), h.as_bytes())?;
    }
    Ok(())
}
