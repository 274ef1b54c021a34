//! Loading a model: memory-map the file and decode it without copying the
//! weights, plus the resolver for external data files.

use crate::proto::{self, TensorProto};
use bytes::Bytes;
use ir::Diagnostic;
use prost::Message;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

/// How a diagnostic about bytes that are not an ONNX model begins.
pub const MALFORMED: &str = "malformed ONNX protobuf";
/// The diagnostic of an empty file.
pub const EMPTY: &str = "empty file is not an ONNX model";

/// A decoded model whose `raw_data` fields are slices of `mapping`.
#[derive(Debug)]
pub struct LoadedModel {
    pub proto: proto::ModelProto,
    /// Directory external data locations are relative to.
    pub dir: PathBuf,
    /// The whole encoded model (a memory map for files).
    mapping: Bytes,
    external: ExternalData,
}

impl LoadedModel {
    /// Byte range of the encoded model in memory (for zero-copy checks).
    pub fn mapped_range(&self) -> std::ops::Range<*const u8> {
        self.mapping.as_ptr_range()
    }

    /// Payload of an initializer stored with `data_location = EXTERNAL`.
    pub fn external_bytes(&self, t: &TensorProto) -> Result<Bytes, Diagnostic> {
        self.external.load(t)
    }

    pub fn external(&self) -> &ExternalData {
        &self.external
    }
}

/// Opens `path` for reading only if it is a regular file. The open does
/// not block (a FIFO would wait for a writer forever) and the check is on
/// the opened file, so a path swapped meanwhile cannot slip through.
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(file)
}

/// Maps a regular file read-only; an empty file gives empty bytes (mmap
/// refuses it).
pub fn map_file(path: &Path) -> std::io::Result<Bytes> {
    let file = open_regular(path)?;
    if file.metadata()?.len() == 0 {
        return Ok(Bytes::new());
    }
    // SAFETY: the file is opened read-only and the mapping is never written.
    // Like every mmap-based loader we accept the documented caveat that
    // another process truncating or modifying the file meanwhile is UB.
    let map = unsafe { memmap2::Mmap::map(&file)? };
    Ok(Bytes::from_owner(map))
}

/// Loads and decodes an ONNX model file (zero copy for `raw_data`).
pub fn load_model(path: &Path) -> Result<LoadedModel, Diagnostic> {
    let bytes = map_file(path)
        .map_err(|e| Diagnostic::error(format!("cannot read '{}': {e}", path.display())))?;
    load_model_bytes(bytes, parent_dir(path))
        .map_err(|d| Diagnostic::error(format!("{}: {}", path.display(), d.message)))
}

/// The directory holding `path` (`.` for a bare file name).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Decodes a model held in memory; `dir` resolves external data.
pub fn load_model_bytes(bytes: Bytes, dir: PathBuf) -> Result<LoadedModel, Diagnostic> {
    load_model_bytes_with(bytes, ExternalData::new(dir))
}

/// Like [`load_model_bytes`], with external data read into memory (at most
/// `limit` bytes in all) instead of mapped: a long-running process that
/// must survive a file truncated under it (a mapping then faults with
/// SIGBUS) reads it whole (`onnxc serve`).
pub fn load_model_bytes_copying(
    bytes: Bytes,
    dir: PathBuf,
    limit: u64,
) -> Result<LoadedModel, Diagnostic> {
    let mut external = ExternalData::new(dir);
    external.copy_limit = Some(limit);
    load_model_bytes_with(bytes, external)
}

fn load_model_bytes_with(bytes: Bytes, external: ExternalData) -> Result<LoadedModel, Diagnostic> {
    if bytes.is_empty() {
        return Err(Diagnostic::error(EMPTY));
    }
    let proto = proto::ModelProto::decode(bytes.clone())
        .map_err(|e| Diagnostic::error(format!("{MALFORMED}: {e}")))?;
    if proto.graph.is_none() {
        return Err(Diagnostic::error("malformed ONNX model: it has no graph"));
    }
    Ok(LoadedModel {
        proto,
        dir: external.dir.clone(),
        external,
        mapping: bytes,
    })
}

/// Resolves external tensor data relative to a directory, mapping each
/// referenced file once.
#[derive(Debug)]
pub struct ExternalData {
    dir: PathBuf,
    /// Mapped files by `location` and by canonical path.
    files: Mutex<HashMap<String, Bytes>>,
    /// Read files into memory, at most this many bytes in all, instead of
    /// mapping them.
    copy_limit: Option<u64>,
}

impl ExternalData {
    pub fn new(dir: PathBuf) -> Self {
        ExternalData {
            dir,
            files: Mutex::new(HashMap::new()),
            copy_limit: None,
        }
    }

    /// `file` mapped, or read whole within what is left of the copy limit.
    fn open(&self, file: &Path, files: &HashMap<String, Bytes>) -> Result<Bytes, String> {
        let cannot = |e: std::io::Error| format!("cannot read '{}': {e}", file.display());
        let Some(limit) = self.copy_limit else {
            return map_file(file).map_err(cannot);
        };
        // Each file is held under two names: count distinct buffers once.
        let mut seen = std::collections::HashSet::new();
        let used: u64 = files
            .values()
            .filter(|b| seen.insert(b.as_ptr()))
            .map(|b| b.len() as u64)
            .sum();
        let left = limit.saturating_sub(used);
        let mut data = Vec::new();
        use std::io::Read;
        open_regular(file)
            .and_then(|f| f.take(left.saturating_add(1)).read_to_end(&mut data))
            .map_err(cannot)?;
        if data.len() as u64 > left {
            return Err(format!(
                "external data beyond {limit} bytes (reading '{}')",
                file.display()
            ));
        }
        Ok(Bytes::from(data))
    }

    /// The `[offset, offset + length)` bytes the tensor's entries point at.
    pub fn load(&self, t: &TensorProto) -> Result<Bytes, Diagnostic> {
        let err =
            |msg: String| Diagnostic::error(format!("external data of tensor '{}': {msg}", t.name));
        let mut location = None;
        let mut offset = 0u64;
        let mut length = None;
        for entry in &t.external_data {
            let parse = |v: &str| {
                v.trim()
                    .parse::<u64>()
                    .map_err(|_| err(format!("invalid {} '{v}'", entry.key)))
            };
            match entry.key.as_str() {
                "location" => location = Some(entry.value.as_str()),
                "offset" => offset = parse(&entry.value)?,
                "length" => length = Some(parse(&entry.value)?),
                _ => {}
            }
        }
        let location = location
            .filter(|l| !l.is_empty())
            .ok_or_else(|| err("no 'location' entry".into()))?;
        let data = self.map_cached(location).map_err(err)?;
        let size = data.len() as u64;
        let end = match length {
            Some(len) => offset.checked_add(len),
            None => Some(size),
        };
        match end {
            Some(end) if offset <= end && end <= size => {
                // Both bounds are <= the mapping's length, so they fit usize.
                Ok(data.slice(offset as usize..end as usize))
            }
            _ => Err(err(format!(
                "offset {offset} and length {} exceed the {size} bytes of '{location}'",
                length.map_or("(rest)".to_string(), |l| l.to_string())
            ))),
        }
    }

    /// The canonical path of external data file `location`, checked as
    /// loading checks it.
    pub fn path_of(&self, location: &str) -> Result<PathBuf, String> {
        self.resolve(location)
    }

    /// Checks that `location` stays inside the directory (no absolute path,
    /// no `..`, no symlink out) and returns its canonical path.
    fn resolve(&self, location: &str) -> Result<PathBuf, String> {
        let rel = Path::new(location);
        for c in rel.components() {
            match c {
                Component::Normal(_) | Component::CurDir => {}
                Component::ParentDir => return Err(format!("location '{location}' contains '..'")),
                Component::RootDir | Component::Prefix(_) => {
                    return Err(format!("location '{location}' is an absolute path"))
                }
            }
        }
        let dir = self
            .dir
            .canonicalize()
            .map_err(|e| format!("cannot open model directory '{}': {e}", self.dir.display()))?;
        let full = dir
            .join(rel)
            .canonicalize()
            .map_err(|e| format!("cannot open '{location}': {e}"))?;
        if !full.starts_with(&dir) {
            return Err(format!(
                "location '{location}' resolves outside the model directory"
            ));
        }
        Ok(full)
    }

    /// The mapping of `location`, checked and mapped on first use (one
    /// mapping per location, shared by all tensors that use it).
    fn map_cached(&self, location: &str) -> Result<Bytes, String> {
        let mut files = match self.files.lock() {
            Ok(f) => f,
            Err(p) => p.into_inner(),
        };
        if let Some(b) = files.get(location) {
            return Ok(b.clone());
        }
        let file = self.resolve(location)?;
        // Another spelling of a location already mapped shares its mapping.
        let key = file.to_string_lossy().into_owned();
        let b = match files.get(&key) {
            Some(b) => b.clone(),
            None => self.open(&file, &files)?,
        };
        files.insert(key, b.clone());
        files.insert(location.to_string(), b.clone());
        Ok(b)
    }
}
