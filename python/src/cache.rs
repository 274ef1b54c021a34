//! The key of the sessions' library cache: like the daemon's, a sha256 of
//! the model's bytes, the options and the compiler; an entry is
//! `DIR/<key>/libmodel.so` (installed by rename, so a reader never sees
//! half a file). Its lock file makes concurrent sessions on one model, in
//! this process or others, compile it once; the directory's layout and
//! bound are `pipeline::session_cache`'s.

use frontend::import::ImportOptions;
use frontend::load::LoadedModel;
use frontend::proto::ModelProto;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::OnceLock;

/// The library's file name; its stem gives the C prefix `model_`.
pub const LIB_NAME: &str = "libmodel.so";
pub const PREFIX: &str = "model";

/// sha256 over a format tag, the compiler (version and this build's file,
/// clang), the CPU the code is built for (`target`: the host's instruction
/// sets for a native build, so a cache shared between machines never
/// hands one a library it cannot run), the import options, the model's
/// bytes and the identity of its external data files (path, size, inode,
/// modification and change times: hashing their bytes took 5 s per
/// session for an 8.5 GB model; any write to a file changes its change
/// time).
pub fn key(
    bytes: &[u8],
    model: &LoadedModel,
    opts: &ImportOptions,
    (clang, target): (&Path, &str),
) -> String {
    let mut h = Sha256::new();
    h.update(b"onnxc-python-lib-v3\0");
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update(build_stamp().as_bytes());
    h.update(file_stamp(clang).as_bytes());
    h.update(format!("\0{target}\0").as_bytes());
    let mut shapes: Vec<String> = opts
        .input_shapes
        .iter()
        .map(|s| format!("{}={:?}", s.name, s.dims))
        .collect();
    shapes.sort();
    h.update(format!("\0{}\0", shapes.join("\0")).as_bytes());
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
    let mut locations: Vec<&str> = external_tensors(&model.proto)
        .iter()
        .flat_map(|t| &t.external_data)
        .filter(|e| e.key == "location")
        .map(|e| e.value.as_str())
        .collect();
    locations.sort_unstable();
    locations.dedup();
    for location in locations {
        // Unreadable data fails the compile later, with a diagnostic.
        let stamp = model
            .external()
            .path_of(location)
            .map(|p| file_identity(&p));
        h.update(format!("{location}\0{}\0", stamp.unwrap_or_default()).as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The initializers and Constant values of `model` kept in external data.
pub(crate) fn external_tensors(model: &ModelProto) -> Vec<&frontend::proto::TensorProto> {
    let Some(g) = &model.graph else {
        return Vec::new();
    };
    let external = |t: &&frontend::proto::TensorProto| !t.external_data.is_empty();
    g.initializer
        .iter()
        .chain(
            g.node
                .iter()
                .flat_map(|n| n.attribute.iter())
                .filter_map(|a| a.t.as_ref()),
        )
        .filter(external)
        .collect()
}

/// `file_stamp` with the inode and the change time, which every write
/// updates.
fn file_identity(path: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok();
    let (ino, ctime) = meta.map_or((0, 0), |m| {
        (m.ino(), m.ctime() * 1_000_000_000 + m.ctime_nsec())
    });
    format!("{}{ino}\0{ctime}\0", file_stamp(path))
}

/// Path, size and modification time of a file: a rebuilt or reinstalled
/// compiler gets new keys.
fn file_stamp(path: &Path) -> String {
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let meta = std::fs::metadata(&path).ok();
    let mtime = meta
        .as_ref()
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!(
        "{}\0{}\0{mtime}\0",
        path.display(),
        meta.map_or(0, |m| m.len())
    )
}

/// What the host CPU runs: the instruction-set flags the kernel reports
/// (`/proc/cpuinfo`, first processor), sorted; None when unknown.
pub fn host_isa() -> Option<String> {
    static ISA: OnceLock<Option<String>> = OnceLock::new();
    ISA.get_or_init(|| {
        let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
        let line = info
            .lines()
            .find(|l| l.starts_with("flags") || l.starts_with("Features"))?;
        let mut flags: Vec<&str> = line.split(':').nth(1)?.split_whitespace().collect();
        flags.sort_unstable();
        flags.dedup();
        (!flags.is_empty()).then(|| flags.join(" "))
    })
    .clone()
}

/// The stamp of the file this extension module was loaded from.
fn build_stamp() -> &'static str {
    static STAMP: OnceLock<String> = OnceLock::new();
    STAMP.get_or_init(|| {
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        let addr = build_stamp as *const () as *const libc::c_void;
        // SAFETY: dladdr only reads the loader's tables; `info` is valid.
        let found = unsafe { libc::dladdr(addr, &mut info) } != 0 && !info.dli_fname.is_null();
        if !found {
            return String::new();
        }
        // SAFETY: dli_fname is a NUL-terminated path owned by the loader.
        let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
        file_stamp(Path::new(&*name.to_string_lossy()))
    })
}

pub use pipeline::session_cache::{default_dir, Lock};
