//! Request inputs and outputs on disk: paths confined to the root
//! (symlinks resolved), size limits checked before reading, atomic writes.

use super::protocol::{ErrorKind, Response};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A request's model: read from a file, or decoded from base64 into the
/// connection's per-request scratch (copied out only when it is compiled,
/// so a cache hit allocates nothing for it).
pub enum Model<'s> {
    File(bytes::Bytes),
    Scratch(&'s [u8]),
}

impl Model<'_> {
    pub fn bytes(&self) -> &[u8] {
        match self {
            Model::File(b) => b,
            Model::Scratch(s) => s,
        }
    }

    /// Owned bytes for a compile, which may outlive the request.
    pub fn to_owned_bytes(&self) -> bytes::Bytes {
        match self {
            Model::File(b) => b.clone(),
            Model::Scratch(s) => bytes::Bytes::copy_from_slice(s),
        }
    }
}

/// The model bytes and the directory its external data may come from;
/// an inline model is decoded into `scratch`.
pub fn load_model<'s>(
    root: &Path,
    max: u64,
    path: Option<&str>,
    inline: Option<&str>,
    scratch: &'s bumpalo::Bump,
) -> Result<(Model<'s>, PathBuf), Box<Response>> {
    let refuse = |msg: String| Box::new(Response::error(Value::Null, ErrorKind::Refused, msg));
    let too_big = |n: u64| {
        refuse(format!(
            "model of {n} bytes exceeds --max-model-bytes {max}"
        ))
    };
    match (path, inline) {
        (Some(p), None) => {
            let real = confine(root, p)?;
            // Only regular files: a FIFO would block the connection.
            let file = frontend::load::open_regular(&real)
                .map_err(|e| refuse(format!("cannot open '{p}': {e}")))?;
            let meta = file
                .metadata()
                .map_err(|e| refuse(format!("cannot open '{p}': {e}")))?;
            if meta.len() > max {
                return Err(too_big(meta.len()));
            }
            let mut data = Vec::new();
            use std::io::Read;
            file.take(max + 1)
                .read_to_end(&mut data)
                .map_err(|e| refuse(format!("cannot read '{p}': {e}")))?;
            if data.len() as u64 > max {
                return Err(too_big(data.len() as u64));
            }
            Ok((Model::File(data.into()), frontend::load::parent_dir(&real)))
        }
        (None, Some(b)) => {
            let bad = |e: String| {
                Box::new(Response::error(
                    Value::Null,
                    ErrorKind::BadRequest,
                    format!("model_base64: {e}"),
                ))
            };
            let data = super::b64::decode_bounded(b, max, scratch)
                .map_err(bad)?
                .ok_or_else(|| too_big(base64::decoded_len_estimate(b.len()) as u64))?;
            // Inline models have no directory: external data is refused.
            Ok((
                Model::Scratch(data),
                root.join(".onnxc-inline-model-has-no-directory"),
            ))
        }
        _ => Err(Box::new(Response::error(
            Value::Null,
            ErrorKind::BadRequest,
            "give exactly one of model_path and model_base64",
        ))),
    }
}

/// Resolves a request path (symlinks included) and refuses it unless
/// it lies inside the root.
pub fn confine(root: &Path, p: &str) -> Result<PathBuf, Box<Response>> {
    let refuse = || {
        Box::new(Response::error(
            Value::Null,
            ErrorKind::Refused,
            format!("'{p}' is not a file inside the daemon root"),
        ))
    };
    let real = root.join(p).canonicalize().map_err(|_| refuse())?;
    if !real.starts_with(root) {
        return Err(refuse());
    }
    Ok(real)
}

/// An output path: its directory must exist inside the root.
pub fn confine_output(root: &Path, p: &str) -> Result<PathBuf, Box<Response>> {
    let refuse = || {
        Box::new(Response::error(
            Value::Null,
            ErrorKind::Refused,
            format!("output '{p}' is not in a directory inside the daemon root"),
        ))
    };
    let full = root.join(p);
    let name = match full.file_name() {
        Some(n) if Path::new(n).components().count() == 1 && n != ".." => n.to_os_string(),
        _ => return Err(refuse()),
    };
    let parent = full.parent().ok_or_else(refuse)?;
    let real = parent.canonicalize().map_err(|_| refuse())?;
    if !real.starts_with(root) {
        return Err(refuse());
    }
    Ok(real.join(name))
}
