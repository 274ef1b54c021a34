//! Streaming ONNX writer for `onnxc fold`: initializer payloads go from
//! their buffers (slices of the mapped input, heap results) straight to the
//! file, and compact views (splats, broadcasts, transposes) are expanded one
//! at a time while writing, so the model is never held whole in memory.
//!
//! The protobuf framing is written by hand: every length is known up front
//! (`encoded_len` of the message without its payloads plus the payload
//! sizes), and field order does not matter to protobuf readers.

use bytes::Bytes;
use frontend::proto::{GraphProto, ModelProto, TensorProto};
use ir::attr::Attribute;
use ir::elements::Elements;
use ir::{Diagnostic, Module, OpId, Result};
use prost::encoding::{encode_key, encode_varint, encoded_len_varint, key_len, WireType};
use prost::Message;
use std::io::Write;
use std::path::Path;

/// Views smaller than this are simply materialized by the exporter.
const STREAM_MIN_BYTES: usize = 4096;
/// Chunk for expanding splats.
const CHUNK: usize = 1 << 16;

/// Payload of one initializer: shared bytes, or a view expanded on write.
enum Payload {
    Bytes(Bytes),
    View(Elements),
}

impl Payload {
    fn len(&self) -> usize {
        match self {
            Payload::Bytes(b) => b.len(),
            Payload::View(e) => e.dtype().storage_bytes(e.len()).unwrap_or(0),
        }
    }
    fn write_to(&self, w: &mut impl Write) -> std::io::Result<()> {
        match self {
            Payload::Bytes(b) => w.write_all(b),
            // Sub-byte splats pack two values a byte: expanded below.
            Payload::View(e) if e.is_splat() && e.dtype().bits() >= 8 => {
                let ones = vec![1; e.shape().len()];
                let one = e
                    .broadcast_core(&ones)
                    .map(|c| c.to_contiguous_bytes())
                    .unwrap_or_default();
                let total = self.len();
                let per = one.len().max(1);
                let mut chunk = Vec::with_capacity(CHUNK.div_ceil(per) * per);
                while chunk.len() < CHUNK.min(total) {
                    chunk.extend_from_slice(&one);
                }
                let mut left = total;
                while left > 0 {
                    let n = left.min(chunk.len());
                    w.write_all(&chunk[..n])?;
                    left -= n;
                }
                Ok(())
            }
            // One view at a time: the peak is the largest such constant.
            Payload::View(e) => w.write_all(&e.to_contiguous_bytes()),
        }
    }
}

fn len_field(tag: u32, len: usize) -> usize {
    key_len(tag) + encoded_len_varint(len as u64) + len
}

fn put_len(w: &mut impl Write, tag: u32, len: usize) -> std::io::Result<()> {
    let mut head = Vec::with_capacity(16);
    encode_key(tag, WireType::LengthDelimited, &mut head);
    encode_varint(len as u64, &mut head);
    w.write_all(&head)
}

/// Writes `model`, taking the main graph's initializer payloads from
/// `payloads` (by initializer index) instead of their `raw_data`.
fn write_streamed(
    w: &mut impl Write,
    mut model: ModelProto,
    views: &[(usize, Elements)],
) -> std::io::Result<()> {
    let mut graph: GraphProto = model.graph.take().unwrap_or_default();
    let inits = std::mem::take(&mut graph.initializer);
    let mut heads: Vec<(TensorProto, Payload)> = Vec::with_capacity(inits.len());
    let mut view_iter = views.iter().peekable();
    for (i, mut t) in inits.into_iter().enumerate() {
        let raw = std::mem::take(&mut t.raw_data);
        let payload = match view_iter.peek() {
            Some((j, e)) if *j == i => {
                view_iter.next();
                Payload::View(e.clone())
            }
            _ => Payload::Bytes(raw),
        };
        heads.push((t, payload));
    }
    let tensor_len = |t: &TensorProto, p: &Payload| -> usize {
        t.encoded_len()
            + if p.len() > 0 {
                len_field(9, p.len())
            } else {
                0
            }
    };
    let graph_len = graph.encoded_len()
        + heads
            .iter()
            .map(|(t, p)| len_field(5, tensor_len(t, p)))
            .sum::<usize>();
    w.write_all(&model.encode_to_vec())?;
    put_len(w, 7, graph_len)?;
    w.write_all(&graph.encode_to_vec())?;
    // A second thread expands the dense views ahead of the writer (a
    // bounded queue keeps at most a few of them in memory).
    let (tx, rx) = std::sync::mpsc::sync_channel::<Bytes>(2);
    std::thread::scope(|s| {
        let heads = &heads;
        s.spawn(move || {
            for (_, p) in heads {
                if let Payload::View(e) = p {
                    if !e.is_splat() && tx.send(e.to_contiguous_bytes()).is_err() {
                        return;
                    }
                }
            }
        });
        for (t, p) in heads {
            put_len(w, 5, tensor_len(t, p))?;
            w.write_all(&t.encode_to_vec())?;
            if p.len() == 0 {
                continue;
            }
            put_len(w, 9, p.len())?;
            match p {
                Payload::View(e) if !e.is_splat() => {
                    let b = rx.recv().map_err(std::io::Error::other)?;
                    w.write_all(&b)?;
                }
                _ => p.write_to(w)?,
            }
        }
        drop(rx);
        Ok(())
    })
}

/// Exports `m` to `path` (temp file + rename), streaming initializers.
pub fn write_model(m: &mut Module, path: &Path) -> Result<()> {
    // Large compact views would be expanded by the exporter: hand it a
    // placeholder over never-touched zero pages, and expand them on write.
    let mut swapped: Vec<(OpId, Elements)> = Vec::new();
    // Only the main graph's constants become initializers written here.
    let main = m
        .top_level_ops("func.func")
        .first()
        .and_then(|&f| m.region(f, 0))
        .and_then(|r| m.entry_block(r));
    let top: Vec<OpId> = main.map(|b| m.block_ops(b).collect()).unwrap_or_default();
    for op in top {
        if !m.is(op, "onnx.Constant") {
            continue;
        }
        let Some(Attribute::Elements(e)) = m.attr(op, "value") else {
            continue;
        };
        let bytes = e.dtype().storage_bytes(e.len()).unwrap_or(0);
        if e.contiguous_bytes().is_none() && bytes >= STREAM_MIN_BYTES {
            swapped.push((op, e.clone()));
        }
    }
    let max = swapped
        .iter()
        .map(|(_, e)| e.dtype().storage_bytes(e.len()).unwrap_or(0))
        .max()
        .unwrap_or(0);
    // calloc'ed zeros: untouched pages cost no memory. Each placeholder
    // starts at its own offset so its pointer names the view it stands for.
    let zeros = Bytes::from(vec![0u8; max + swapped.len()]);
    let base = zeros.as_ptr() as usize;
    for (i, (op, e)) in swapped.iter().enumerate() {
        let n = e.dtype().storage_bytes(e.len()).unwrap_or(0);
        let ph = Elements::from_bytes(e.dtype(), e.shape().to_vec(), zeros.slice(i..i + n))
            .map_err(|er| Diagnostic::error(er.to_string()))?;
        m.set_attr(*op, "value", Attribute::Elements(ph));
    }
    let exported = frontend::export::export_model(m);
    for (op, e) in &swapped {
        m.set_attr(*op, "value", Attribute::Elements(e.clone()));
    }
    let mut model = exported?;
    // Which initializers are placeholders, by their payload's position.
    let mut views: Vec<(usize, Elements)> = Vec::new();
    if let Some(g) = &model.graph {
        for (i, t) in g.initializer.iter().enumerate() {
            let p = t.raw_data.as_ptr() as usize;
            if !t.raw_data.is_empty() && p >= base && p < base + zeros.len() {
                if let Some((_, e)) = swapped.get(p - base) {
                    views.push((i, e.clone()));
                }
            }
        }
    }
    if views.len() != swapped.len() {
        // A placeholder went somewhere else (copied, or not exported as an
        // initializer): never write zeros, export the real values instead.
        model = frontend::export::export_model(m)?;
        views.clear();
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| Diagnostic::error(format!("'{}' is not a file path", path.display())))?;
    let dir = frontend::load::parent_dir(path);
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let fail = |what: &str, e: std::io::Error| {
        Diagnostic::error(format!("cannot {what} '{}': {e}", path.display()))
    };
    let file = std::fs::File::create(&tmp).map_err(|e| fail("create", e))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    let written = write_streamed(&mut w, model, &views).and_then(|()| w.flush());
    drop(w);
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(fail("write", e));
    }
    std::fs::rename(&tmp, path).map_err(|e| fail("rename into", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::elements::{DType, WideNum};

    #[test]
    fn streamed_model_decodes_like_the_original() {
        let splat = Elements::splat(DType::F32, vec![64, 64], WideNum::from_f64(1.5)).unwrap();
        let model = ModelProto {
            ir_version: 8,
            graph: Some(GraphProto {
                name: "g".into(),
                initializer: vec![
                    TensorProto {
                        name: "a".into(),
                        dims: vec![2],
                        data_type: 1,
                        raw_data: Bytes::from(vec![0u8, 0, 128, 63, 0, 0, 0, 64]),
                        ..TensorProto::default()
                    },
                    TensorProto {
                        name: "b".into(),
                        dims: vec![64, 64],
                        data_type: 1,
                        raw_data: Bytes::from(vec![0u8; 64 * 64 * 4]),
                        ..TensorProto::default()
                    },
                ],
                ..GraphProto::default()
            }),
            ..ModelProto::default()
        };
        let mut out = Vec::new();
        write_streamed(&mut out, model.clone(), &[(1, splat.clone())]).unwrap();
        let back = ModelProto::decode(Bytes::from(out)).unwrap();
        let g = back.graph.unwrap();
        assert_eq!(
            g.initializer[0],
            model.graph.as_ref().unwrap().initializer[0]
        );
        assert_eq!(g.initializer[1].raw_data, splat.to_contiguous_bytes());
        assert_eq!(g.name, "g");
    }
}
