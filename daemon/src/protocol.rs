//! The wire format: one JSON object per line each way (docs/DAEMON.md).

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Compile,
    Fold,
    Stats,
    Health,
    Shutdown,
    /// Proves the token (`--auth-token-file`) for the rest of the
    /// connection: before that, request lines are kept small.
    Auth,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Compile => "compile",
            Op::Fold => "fold",
            Op::Stats => "stats",
            Op::Health => "health",
            Op::Shutdown => "shutdown",
            Op::Auth => "auth",
        }
    }
}

/// Borrows from the request line where it can: the model's base64 is
/// not copied (it holds no JSON escapes unless a client adds some).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Request<'a> {
    /// Echoed back verbatim; any JSON value.
    #[serde(default)]
    pub id: Value,
    pub op: Op,
    /// A model file, relative to the daemon's root or absolute inside it.
    pub model_path: Option<String>,
    /// The model bytes, base64.
    #[serde(default, borrow, deserialize_with = "borrowed_str")]
    pub model_base64: Option<Cow<'a, str>>,
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

/// A string borrowed from the input when it has no escapes (serde's own
/// `Cow` support borrows only a bare `Cow` field, not one in an `Option`).
fn borrowed_str<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Cow<'de, str>>, D::Error> {
    struct V;
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = Option<Cow<'de, str>>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a string")
        }
        fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
            Ok(Some(Cow::Borrowed(v)))
        }
        fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
            Ok(Some(Cow::Owned(v.to_owned())))
        }
        fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
            Ok(Some(Cow::Owned(v)))
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    }
    d.deserialize_any(V)
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
    /// sha256 of the model's bytes (compile and fold requests).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_sha256: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact: Option<Text>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact_base64: Option<Base64>,
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
        let mut v = Vec::with_capacity(self.line_estimate());
        self.write_line(&mut v);
        v
    }

    /// The line in `scratch` (the connection's per-request arena): the
    /// buffer of a large artifact's line is reused from one request to the
    /// next instead of being allocated and faulted in each time.
    pub fn line_in<'s>(&self, scratch: &'s bumpalo::Bump) -> &'s [u8] {
        let mut v = bumpalo::collections::Vec::with_capacity_in(self.line_estimate(), scratch);
        self.write_line(&mut v);
        v.into_bump_slice()
    }

    /// Room for the artifact (escaped text grows a little) and the rest.
    fn line_estimate(&self) -> usize {
        let text = self.artifact.as_ref().map_or(0, |t| t.0.len() / 16 * 17);
        let b64 = self
            .artifact_base64
            .as_ref()
            .map_or(0, |b| b.1.len() / 3 * 4);
        text + b64 + 4096
    }

    fn write_line(&self, w: &mut impl std::io::Write) {
        if let Err(e) = serde_json::to_writer(&mut *w, self) {
            let _ = write!(
                w,
                r#"{{"id":null,"status":"error","error":"internal","diagnostics":[{{"severity":"error","message":"cannot encode response: {e}"}}]}}"#
            );
        }
        let _ = w.write_all(b"\n");
    }
}

/// A text artifact, shared with the cache (not copied into the response).
#[derive(Debug)]
pub struct Text(pub Arc<Vec<u8>>);

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(&self.0) {
            Ok(t) => s.serialize_str(t),
            Err(_) => s.serialize_str(&String::from_utf8_lossy(&self.0)),
        }
    }
}

/// A binary artifact (a range of a cache entry), encoded while the line is
/// written.
#[derive(Debug)]
pub struct Base64(pub Arc<Vec<u8>>, pub Range<usize>);

impl Serialize for Base64 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let data = self.0.get(self.1.clone()).unwrap_or_default();
        s.collect_str(&super::b64::display(data))
    }
}

/// Parses one request line, borrowing from it; on failure, the error
/// response (with the id when the line was at least a JSON object
/// carrying one).
pub fn parse(line: &[u8]) -> Result<Request<'_>, Box<Response>> {
    let invalid = match serde_json::from_slice::<Request>(line) {
        Ok(r) => return Ok(r),
        Err(e) => e,
    };
    // Only failures parse the line again, to tell bad JSON from a bad
    // request and to echo the id.
    let value: Value = serde_json::from_slice(line).map_err(|e| {
        Box::new(Response::error(
            Value::Null,
            ErrorKind::BadRequest,
            format!("malformed JSON: {e}"),
        ))
    })?;
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    Err(Box::new(Response::error(
        id,
        ErrorKind::BadRequest,
        format!("invalid request: {invalid}"),
    )))
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
        // The model's base64 is borrowed from the line, escapes or not.
        let r = parse(br#"{"op":"compile","model_base64":"QUJD"}"#).unwrap();
        assert!(matches!(r.model_base64, Some(Cow::Borrowed("QUJD"))));
        let r = parse(br#"{"op":"compile","model_base64":"QU\/D"}"#).unwrap();
        assert_eq!(r.model_base64.as_deref(), Some("QU/D"));
        let r = parse(br#"{"op":"compile","model_base64":null}"#).unwrap();
        assert!(r.model_base64.is_none());
        let e = parse(br#"{"id":4,"op":"compile","model_base64":17}"#).unwrap_err();
        assert_eq!(
            (e.id.clone(), e.error),
            (Value::from(4), Some(ErrorKind::BadRequest))
        );
    }

    #[test]
    fn artifacts_are_written_into_the_line() {
        let data = Arc::new(b"\x00\x01binary\"quote\"".to_vec());
        let r = Response {
            artifact: Some(Text(data.clone())),
            artifact_base64: Some(Base64(data.clone(), 2..8)),
            ..Response::ok(Value::from(3))
        };
        let scratch = bumpalo::Bump::new();
        let line = r.line_in(&scratch);
        assert_eq!(line, &r.to_line()[..]);
        let back: Value = serde_json::from_slice(line).unwrap();
        assert_eq!(back["artifact"], "\u{0}\u{1}binary\"quote\"");
        assert_eq!(
            back["artifact_base64"],
            super::super::b64::encode(b"binary")
        );
    }
}
