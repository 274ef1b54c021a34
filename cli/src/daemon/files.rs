//! Request inputs and outputs on disk: paths confined to the root
//! (symlinks resolved), size limits checked before reading, atomic writes.

use super::protocol::{ErrorKind, Response};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The model bytes and the directory its external data may come from.
pub fn load_model(
    root: &Path,
    max: u64,
    path: Option<&str>,
    inline: Option<&str>,
) -> Result<(bytes::Bytes, PathBuf), Box<Response>> {
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
            Ok((data.into(), frontend::load::parent_dir(&real)))
        }
        (None, Some(b)) => {
            if super::b64::decoded_len(b) as u64 > max + 3 {
                return Err(too_big(super::b64::decoded_len(b) as u64));
            }
            let data = super::b64::decode(b).map_err(|e| {
                Box::new(Response::error(
                    Value::Null,
                    ErrorKind::BadRequest,
                    format!("model_base64: {e}"),
                ))
            })?;
            if data.len() as u64 > max {
                return Err(too_big(data.len() as u64));
            }
            // Inline models have no directory: external data is refused.
            Ok((
                data.into(),
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
