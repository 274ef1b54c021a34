//! Emitting a lowered model: LLVM IR with its weights sidecar, an object
//! file, or a shared library with its C header (`compile --emit
//! llvm|obj|lib`, and the build of `onnxc run`).

use crate::driver::{ENTRY, MAIN_GRAPH};
use crate::{io_err, write_output, CmdResult, Failure};
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

/// `header` with `note` after its first line.
fn with_note(header: String, note: &str) -> String {
    match header.split_once('\n') {
        Some((first, rest)) => format!("{first}\n{note}{rest}"),
        None => format!("{header}\n{note}"),
    }
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

/// How many parts the module is split into: `cg.clang_jobs`, else one per
/// core.
fn part_count(cg: &crate::target::Codegen) -> usize {
    match cg.clang_jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
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

/// Whether some function is built for the VNNI level (int8 kernels of a
/// multi-level build).
fn has_vnni_kernels(m: &Module) -> bool {
    let vnni = ir::dialects::func::X86_VNNI.cpu;
    m.block_ops(m.body()).any(|f| {
        m.attr(f, ir::dialects::func::TARGET_CPU)
            .and_then(ir::Attribute::as_str)
            == Some(vnni)
    })
}

fn file_stem(out: &Path) -> String {
    out.file_stem()
        .map_or_else(|| "model".into(), |s| s.to_string_lossy().into_owned())
}

/// A spawned tool, killed and reaped if dropped before `finish` (or when
/// the compile is cancelled, see ir::cancel). Its stderr goes to a file
/// so that waiting can poll without a full pipe blocking the tool.
struct Job {
    child: Option<std::process::Child>,
    tool: PathBuf,
    log: PathBuf,
}

/// How often a wait on a tool looks at the cancellation token.
const POLL: std::time::Duration = std::time::Duration::from_millis(5);

impl Job {
    fn spawn(cmd: &mut Command, tool: &Path, log: PathBuf) -> Result<Job, Failure> {
        let err = std::fs::File::create(&log).map_err(|e| io_err("create", &log, e))?;
        let child = cmd
            .stdout(std::process::Stdio::null())
            .stderr(err)
            .spawn()
            .map_err(|e| io_err("run", tool, e))?;
        Ok(Job {
            child: Some(child),
            tool: tool.to_path_buf(),
            log,
        })
    }
    fn finish(mut self) -> CmdResult {
        let Some(child) = self.child.as_mut() else {
            return Ok(());
        };
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => {}
                Err(e) => return Err(io_err("run", &self.tool, e)),
            }
            // Dropping `self` kills the child.
            ir::cancel::check()?;
            std::thread::sleep(POLL);
        };
        self.child = None;
        if !status.success() {
            let log = std::fs::read(&self.log).unwrap_or_default();
            return Err(diag(format!(
                "clang failed:\n{}",
                String::from_utf8_lossy(&log)
            )));
        }
        Ok(())
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A file for the weights object, and the path the linker opens it by.
/// On Linux it lives in memory (memfd, inherited by the linker, which
/// opens `/proc/self/fd/N`): written to disk, the weights were dirty pages
/// the kernel made the linker's own output wait behind (ResNet-152's
/// link: 0.8 s against 0.2 s), and a killed compile leaves nothing behind.
/// Above this the weights object goes to disk: a memfd is RAM that
/// cannot be paged out without swap, and the weights can be gigabytes.
const MEMFD_MAX_BYTES: u64 = 512 << 20;

/// Where the weights object of `size` blob bytes is written: a memfd
/// (on disk, its dirty pages held up the linker's output writes) unless
/// it is large.
fn weights_file(tmp: &Path, size: u64) -> Result<(std::fs::File, PathBuf), Failure> {
    #[cfg(target_os = "linux")]
    if size <= MEMFD_MAX_BYTES {
        use std::os::fd::FromRawFd as _;
        // No MFD_CLOEXEC: the linker, spawned later, inherits it.
        // SAFETY: a NUL-terminated name and no flags.
        let fd = unsafe { libc::memfd_create(c"onnxc-weights".as_ptr(), 0) };
        if fd >= 0 {
            // SAFETY: `fd` is a fresh descriptor this process owns.
            let file = unsafe { std::fs::File::from_raw_fd(fd) };
            return Ok((file, PathBuf::from(format!("/proc/self/fd/{fd}"))));
        }
    }
    let path = tmp.join("weights.o");
    let file = std::fs::File::create(&path).map_err(|e| io_err("create", &path, e))?;
    Ok((file, path))
}

/// Writes the weights object for `layout` to `file` (at `path`).
fn write_weights_object(
    m: &Module,
    layout: &lower::WeightLayout,
    machine: u16,
    (file, path): (&std::fs::File, &Path),
) -> CmdResult {
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    lower::elf::write_weights_object(m, layout, machine, &mut w)?;
    use std::io::Write as _;
    w.flush().map_err(|e| io_err("write", path, e))?;
    Ok(())
}

/// `clang -c` of one source (`.ll` part or the C API's `.c`) into `obj`,
/// position-independent for a shared library; its log next to it.
fn compile_job(
    clang: &Path,
    cg: &crate::target::Codegen,
    lib: bool,
    src: &Path,
    obj: &Path,
) -> Result<Job, Failure> {
    Job::spawn(
        Command::new(clang)
            .args(["-O2", "-ffp-contract=fast", "-w", "-c"])
            .args(cg.clang_args())
            .args(lower::llvm::CODE_MODEL_ARGS)
            .args(lib.then_some("-fPIC"))
            .arg(src)
            .arg("-o")
            .arg(obj),
        clang,
        src.with_extension("log"),
    )
}

/// The link of `objects`: a shared library exporting only the `PREFIX_*`
/// C API (`lib`), else one relocatable object; the output path is added
/// by the caller.
fn link_command(
    clang: &Path,
    llvm_bin: Option<&Path>,
    (lib, prefix): (bool, &str),
    objects: &[PathBuf],
    tmp: &Path,
    cg: &crate::target::Codegen,
) -> Result<Command, Failure> {
    let mut cmd = Command::new(clang);
    cmd.args(["-O2", "-w"]);
    // LLVM's linker copies the weights into the output in half the time
    // of the system's (ResNet-152's 333 MB: 0.6 s against 1.1 s).
    if let Some(lld) = crate::tools::find_tool("ld.lld", llvm_bin) {
        cmd.arg(format!("--ld-path={}", lld.display()));
    }
    if lib {
        // Only the C API is exported; internal functions stay local, so
        // several models can be loaded into one process. No build-id: it
        // hashes the whole output (~0.5 s for 240 MB of weights).
        let vs = tmp.join("exports.map");
        let script = format!("{{ global: {prefix}_*; local: *; }};\n");
        std::fs::write(&vs, script).map_err(|e| io_err("write", &vs, e))?;
        cmd.args(["-shared", "-fPIC", "-Wl,--build-id=none"])
            .args(objects)
            .arg(format!("-Wl,--version-script={}", vs.display()))
            .args(lower::capi::LINK_ARGS)
            .arg("-lm")
            .args(cg.link_args());
    } else {
        // One relocatable object of the code and the weights.
        cmd.args(["-r", "-nostdlib"]).args(objects);
    }
    Ok(cmd)
}

/// `--emit obj`: the IR and its weights in one object exporting the
/// descriptor entry `onnxc_entry` (docs/ABI.md, "Low-level entry").
/// `--emit lib`: `libNAME.so` exporting only the `NAME_*` C API, and
/// `NAME.h` next to it.
///
/// The code is compiled by clang while onnxc writes the weights as an
/// object of their own (`lower::elf`), then both are linked; on a host
/// without that writer the weights go through `.incbin`.
pub fn build(
    m: Module,
    lib: bool,
    out: &Path,
    llvm_bin: Option<&Path>,
    cg: &crate::target::Codegen,
) -> CmdResult {
    let clang = clang(llvm_bin)?;
    let tmp = temp_dir(out)?;
    let prefix = lower::capi::c_prefix(&file_stem(out));
    let header = match lib {
        true => Some(with_note(
            lower::capi::header(&m, MAIN_GRAPH, &prefix)?,
            &cg.header_note(&prefix, has_vnni_kernels(&m)),
        )),
        false => None,
    };
    let machine = lower::elf::host_machine();
    let (mut parts, layout) = match machine {
        Some(_) => lower::emit_llvm_parts(&m, &lower::EmitOptions::default(), part_count(cg))?,
        None => {
            let sidecar = tmp.0.join("model.weights.bin");
            (
                vec![emit_ll(&m, ENTRY, Some(&sidecar))?],
                Default::default(),
            )
        }
    };
    if machine.is_some() {
        if let Some(first) = parts.first_mut() {
            first.push('\n');
            first.push_str(&lower::cabi::emit_entry(&m, MAIN_GRAPH, ENTRY)?);
        }
    }
    // One clang per part, running while the weights are written; beyond
    // `cg.clang_jobs` at once, the rest start as earlier ones finish.
    let limit = match cg.clang_jobs {
        0 => usize::MAX,
        n => n,
    };
    let mut jobs = std::collections::VecDeque::new();
    let mut queued = Vec::new();
    let mut objects = Vec::new();
    let mut sources: Vec<(String, String)> = parts
        .into_iter()
        .enumerate()
        .map(|(i, ll)| (format!("model{i}.ll"), ll))
        .collect();
    if lib {
        let c = lower::capi::wrapper(&m, MAIN_GRAPH, &prefix, ENTRY)?;
        sources.push(("capi.c".into(), c));
    }
    for (name, text) in sources {
        let src = tmp.0.join(&name);
        std::fs::write(&src, text).map_err(|e| io_err("write", &src, e))?;
        let obj = src.with_extension("o");
        match jobs.len() < limit {
            true => jobs.push_back(compile_job(&clang, cg, lib, &src, &obj)?),
            false => queued.push((src, obj.clone())),
        }
        objects.push(obj);
    }
    // Kept open until the link is done (a memfd lives as long as it).
    let mut weights = None;
    if let (Some(machine), false) = (machine, layout.is_empty()) {
        let (file, path) = weights_file(&tmp.0, layout.size)?;
        write_weights_object(&m, &layout, machine, (&file, &path))?;
        objects.push(path);
        weights = Some(file);
    }
    // The module (and the model file's mapped pages it holds) is no longer
    // needed: release it before the linker copies the weights.
    drop(m);
    for (src, obj) in queued {
        if let Some(oldest) = jobs.pop_front() {
            oldest.finish()?;
        }
        jobs.push_back(compile_job(&clang, cg, lib, &src, &obj)?);
    }
    for job in jobs {
        job.finish()?;
    }
    let tmp_out = tmp.0.join("out");
    let mut cmd = link_command(&clang, llvm_bin, (lib, &prefix), &objects, &tmp.0, cg)?;
    cmd.arg("-o").arg(&tmp_out);
    Job::spawn(&mut cmd, &clang, tmp.0.join("link.log"))?.finish()?;
    drop(weights);
    ir::output::install(&tmp_out, out).map_err(|e| io_err("write", out, e))?;
    if let Some(h) = header {
        let path = out.with_file_name(format!("{prefix}.h"));
        write_output(Some(&path), h.as_bytes())?;
    }
    Ok(())
}
