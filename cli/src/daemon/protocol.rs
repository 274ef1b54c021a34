//! The wire format: one JSON object per line each way (docs/DAEMON.md).

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Compile,
    Fold,
    Stats,
    Health,
    Shutdown,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Compile => "compile",
            Op::Fold => "fold",
            Op::Stats => "stats",
            Op::Health => "health",
            Op::Shutdown => "shutdown",
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// Echoed back verbatim; any JSON value.
    #[serde(default)]
    pub id: Value,
    pub op: Op,
    /// A model file, relative to the daemon's root or absolute inside it.
    pub model_path: Option<String>,
    /// The model bytes, base64.
    pub model_base64: Option<String>,
    /// onnx | onnx-ir | memref | llvm (default llvm; `fold` implies onnx).
    pub emit: Option<String>,
    /// Stop after this pipeline stage and return its IR.
    pub stop_after: Option<String>,
    /// Write the artifact to this path (confined to the root) instead of
    /// returning it inline.
    pub output: Option<String>,
    /// Tighter deadline than the daemon's --request-timeout.
    pub timeout_ms: Option<u64>,
    /// Like `--fold-expansion-bound` (default: compile 16, fold unbounded).
    pub fold_expansion_bound: Option<f64>,
    /// Like `--input-shape`: `["x=1x3x224x224", ...]`.
    #[serde(default)]
    pub input_shapes: Vec<String>,
    /// `emit: lib`: the C API prefix (default: the stem of `output`, else
    /// `model`), as `onnxc compile --emit lib -o libNAME.so` derives it.
    pub lib_name: Option<String>,
    /// The daemon's `--auth-token-file` contents (not needed for `health`).
    pub token: Option<String>,
}

#[derive(Serialize, Clone, Copy, PartialEq, Eq, Debug, Default)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    #[default]
    Ok,
    Error,
    Busy,
    Timeout,
    ShuttingDown,
}

#[derive(Serialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Not valid JSON, unknown op or field, bad option.
    BadRequest,
    /// The model was refused before compiling: too large, path outside root.
    Refused,
    /// The compiler reported diagnostics.
    Compile,
    /// A compiler bug (panic) or an I/O failure of the daemon.
    Internal,
    /// Missing or wrong `token` (the connection is closed).
    Unauthorized,
}

#[derive(Serialize, Clone, Debug)]
pub struct DiagOut {
    pub severity: &'static str,
    pub message: String,
}

impl DiagOut {
    pub fn error(message: impl Into<String>) -> Self {
        DiagOut {
            severity: "error",
            message: message.into(),
        }
    }

    pub fn from_diag(d: &ir::Diagnostic) -> Self {
        DiagOut {
            severity: match d.severity {
                ir::diag::Severity::Error => "error",
                ir::diag::Severity::Warning => "warning",
                ir::diag::Severity::Note => "note",
            },
            message: d.to_string(),
        }
    }
}

#[derive(Serialize, Clone, Copy, Debug, Default)]
pub struct Timings {
    pub queue_ms: f64,
    pub compile_ms: f64,
    pub total_ms: f64,
}

#[derive(Serialize, Debug, Default)]
pub struct Response {
    pub id: Value,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorKind>,
    /// hit | miss | joined (an identical request was already compiling).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<&'static str>,
    /// Content address of the artifact: sha256 of model bytes and options.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact_base64: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact_path: Option<String>,
    /// `emit: lib`: the C header of the library (also written next to
    /// `output` as `NAME.h`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    pub diagnostics: Vec<DiagOut>,
    pub timings: Timings,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<Value>,
}

impl Response {
    pub fn ok(id: Value) -> Self {
        Response {
            id,
            ..Response::default()
        }
    }

    pub fn error(id: Value, kind: ErrorKind, message: impl Into<String>) -> Self {
        Response {
            id,
            status: Status::Error,
            error: Some(kind),
            diagnostics: vec![DiagOut::error(message)],
            ..Response::default()
        }
    }

    pub fn status(id: Value, status: Status, message: impl Into<String>) -> Self {
        Response {
            id,
            status,
            diagnostics: vec![DiagOut::error(message)],
            ..Response::default()
        }
    }

    /// One line of JSON, newline included.
    pub fn to_line(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec(self).unwrap_or_else(|e| {
            format!(r#"{{"id":null,"status":"error","error":"internal","diagnostics":[{{"severity":"error","message":"cannot encode response: {e}"}}]}}"#).into_bytes()
        });
        v.push(b'\n');
        v
    }
}

/// Parses one request line; on failure, the error response (with the id
/// when the line was at least a JSON object carrying one).
pub fn parse(line: &[u8]) -> Result<Request, Box<Response>> {
    let value: Value = serde_json::from_slice(line).map_err(|e| {
        Box::new(Response::error(
            Value::Null,
            ErrorKind::BadRequest,
            format!("malformed JSON: {e}"),
        ))
    })?;
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    serde_json::from_value(value).map_err(|e| {
        Box::new(Response::error(
            id,
            ErrorKind::BadRequest,
            format!("invalid request: {e}"),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_reports() {
        let r = parse(br#"{"id":7,"op":"compile","model_path":"a.onnx","emit":"memref"}"#).unwrap();
        assert_eq!(r.op, Op::Compile);
        assert_eq!(r.id, Value::from(7));
        let e = parse(b"{nope").unwrap_err();
        assert_eq!(e.error, Some(ErrorKind::BadRequest));
        let e = parse(br#"{"id":"x","op":"launch"}"#).unwrap_err();
        assert_eq!(e.id, Value::from("x"));
        let e = parse(br#"{"id":1,"op":"health","modle_path":"a"}"#).unwrap_err();
        assert!(e.diagnostics[0].message.contains("unknown field"));
        let line = Response::ok(Value::from(1)).to_line();
        assert!(line.ends_with(b"\n"));
        let back: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(back["status"], "ok");
    }
}
