//! Streaming ONNX writer for `onnxc fold`: the exporter leaves the large
//! initializers of the main graph without data, and their payloads go to
//! the file directly: untouched slices of the input file by
//! `copy_file_range` (in the kernel, never faulted in), computed views
//! (BatchNormalization-fused weights, casts, broadcasts) packed in chunks by
//! worker threads ahead of the writing main thread (`chunks.rs`), so no
//! payload is ever held whole in memory.
//!
//! The protobuf framing is written by hand: every length is known up front
//! (`encoded_len` of the message without its payloads plus the payload
//! sizes), and field order does not matter to protobuf readers.

use frontend::export::{export_model_with, ExportOptions};
use frontend::load::LoadedModel;
use frontend::proto::{GraphProto, ModelProto, TensorProto};
use ir::elements::Elements;
use ir::{Diagnostic, Module, Result};
use prost::encoding::{encode_key, encode_varint, encoded_len_varint, key_len, WireType};
use prost::Message;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Initializers smaller than this are encoded inline by the exporter.
const STREAM_MIN_BYTES: usize = 4096;
/// Slices of the input at least this large are copied in the kernel.
const COPY_MIN_BYTES: usize = 1 << 16;
/// Buffer for the framing and small payloads.
const BUF_BYTES: usize = 1 << 18;
/// Protobuf messages are limited to 2 GiB.
const MAX_PROTO_BYTES: usize = i32::MAX as usize;

/// The file a model was mapped from: payloads that are slices of its
/// mapping are copied file to file.
pub struct MappedSource {
    file: File,
    /// Keeps the mapping alive, so addresses inside it stay its own.
    loaded: LoadedModel,
}

impl MappedSource {
    /// Opens `path` again for reading; `loaded` must be its mapping.
    pub fn open(path: &Path, loaded: LoadedModel) -> std::io::Result<MappedSource> {
        let file = File::open(path)?;
        let r = loaded.mapped_range();
        let len = (r.end as usize).saturating_sub(r.start as usize);
        if file.metadata()?.len() != len as u64 {
            return Err(std::io::Error::other(
                "the model file changed while folding",
            ));
        }
        Ok(MappedSource { file, loaded })
    }
    /// File offset of `b` when it lies inside the mapping.
    fn offset_of(&self, b: &[u8]) -> Option<u64> {
        let r = self.loaded.mapped_range();
        let (start, end) = (r.start as usize, r.end as usize);
        let p = b.as_ptr() as usize;
        (p >= start && p.checked_add(b.len())? <= end).then(|| (p - start) as u64)
    }
}

/// The output file with a small buffer for the framing.
struct Out {
    file: File,
    buf: Vec<u8>,
}

impl Out {
    fn put(&mut self, b: &[u8]) -> std::io::Result<()> {
        if self.buf.len() + b.len() > BUF_BYTES {
            self.flush()?;
        }
        if b.len() >= BUF_BYTES {
            self.file.write_all(b)
        } else {
            self.buf.extend_from_slice(b);
            Ok(())
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }
    fn put_len(&mut self, tag: u32, len: usize) -> std::io::Result<()> {
        let mut head = Vec::with_capacity(16);
        encode_key(tag, WireType::LengthDelimited, &mut head);
        encode_varint(len as u64, &mut head);
        self.put(&head)
    }
    /// `b`, copied in the kernel when it is a large slice of the source.
    fn put_slice(&mut self, b: &[u8], source: Option<&MappedSource>) -> std::io::Result<()> {
        let at = source
            .filter(|_| b.len() >= COPY_MIN_BYTES)
            .and_then(|s| Some((s, s.offset_of(b)?)));
        let Some((s, off)) = at else {
            return self.put(b);
        };
        self.flush()?;
        let mut src = &s.file;
        src.seek(SeekFrom::Start(off))?;
        // std copies File to File with copy_file_range (falling back to
        // read/write where the kernel refuses).
        let copied = std::io::copy(&mut src.take(b.len() as u64), &mut self.file)?;
        if copied != b.len() as u64 {
            return Err(std::io::Error::other(
                "the model file changed while folding",
            ));
        }
        Ok(())
    }
}

fn len_field(tag: u32, len: usize) -> usize {
    key_len(tag) + encoded_len_varint(len as u64) + len
}

fn payload_len(e: &Elements) -> usize {
    e.dtype().storage_bytes(e.len()).unwrap_or(0)
}

/// Encoded bytes of an initializer with its payload.
fn tensor_len(t: &TensorProto, p: Option<&Elements>) -> usize {
    t.encoded_len()
        + p.map(payload_len)
            .filter(|&n| n > 0)
            .map_or(0, |n| len_field(9, n))
}

/// Writes `model` to `out`, taking the main graph's initializer payloads
/// listed in `deferred` (by initializer index) from their views.
fn write_streamed(
    out: &mut Out,
    mut model: ModelProto,
    deferred: &[(usize, Elements)],
    source: Option<&MappedSource>,
) -> std::io::Result<()> {
    let mut graph: GraphProto = model.graph.take().unwrap_or_default();
    let inits = std::mem::take(&mut graph.initializer);
    let mut payload: Vec<Option<&Elements>> = vec![None; inits.len()];
    for (i, e) in deferred {
        if let Some(p) = payload.get_mut(*i) {
            *p = Some(e);
        }
    }
    let graph_len = graph.encoded_len()
        + inits
            .iter()
            .zip(&payload)
            .map(|(t, p)| len_field(5, tensor_len(t, *p)))
            .sum::<usize>();
    let total = model.encoded_len() + len_field(7, graph_len);
    if total > MAX_PROTO_BYTES {
        return Err(std::io::Error::other(format!(
            "the model needs {total} bytes, over the 2 GiB protobuf limit; write large initializers as external data (--external-data-threshold)"
        )));
    }
    out.put(&model.encode_to_vec())?;
    out.put_len(7, graph_len)?;
    out.put(&graph.encode_to_vec())?;
    // Views without stored bytes are packed in chunks, in file order.
    let computed: Vec<&Elements> = payload
        .iter()
        .flatten()
        .copied()
        .filter(|e| e.contiguous_bytes().is_none())
        .collect();
    // The main thread writes (kernel time) and packs when it would wait.
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().clamp(2, 4) - 1);
    let chunks = Chunks::new(&computed, workers);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| chunks.work());
        }
        let written = write_payloads(out, &inits, &payload, &chunks, source);
        chunks.stop();
        written
    })
}

/// The initializers after the graph's head, payloads streamed.
fn write_payloads(
    out: &mut Out,
    inits: &[TensorProto],
    payload: &[Option<&Elements>],
    chunks: &Chunks<'_>,
    source: Option<&MappedSource>,
) -> std::io::Result<()> {
    for (t, p) in inits.iter().zip(payload) {
        out.put_len(5, tensor_len(t, *p))?;
        out.put(&t.encode_to_vec())?;
        let Some(e) = p.filter(|e| payload_len(e) > 0) else {
            continue;
        };
        out.put_len(9, payload_len(e))?;
        match e.contiguous_bytes() {
            Some(b) => out.put_slice(b, source)?,
            None => chunks.write_next(Chunks::count(e), &mut |b| out.put(b))?,
        }
    }
    out.flush()
}

/// Exports `m` to `path` (an `ir::output::OutputFile`), streaming the initializers;
/// `source` is the file the model was mapped from, if any.
pub fn write_model(m: &Module, path: &Path, source: Option<&MappedSource>) -> Result<()> {
    let opts = ExportOptions {
        defer_min: Some(STREAM_MIN_BYTES),
        ..ExportOptions::default()
    };
    let exported = export_model_with(m, &opts)?;
    if path.file_name().is_none() {
        return Err(Diagnostic::error(format!(
            "'{}' is not a file path",
            path.display()
        )));
    }
    let fail = |what: &str, e: std::io::Error| {
        Diagnostic::error(format!("cannot {what} '{}': {e}", path.display()))
    };
    let mut output = ir::output::OutputFile::create(path).map_err(|e| fail("create", e))?;
    let file = output.file().try_clone().map_err(|e| fail("create", e))?;
    let mut out = Out {
        file,
        buf: Vec::with_capacity(BUF_BYTES),
    };
    let written = write_streamed(&mut out, exported.model, &exported.deferred, source);
    drop(out);
    written.map_err(|e| fail("write", e))?;
    output.commit().map_err(|e| fail("write", e))
}

mod chunks;
use chunks::Chunks;

#[cfg(test)]
mod tests;
