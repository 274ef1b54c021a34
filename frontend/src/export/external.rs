//! Large initializers written to a separate file (`data_location =
//! EXTERNAL`), next to the model.

use crate::proto::tensor_proto::DataLocation;
use crate::proto::{StringStringEntryProto, TensorProto};
use ir::elements::Elements;

/// Offsets in the data file are multiples of this (friendly to mappings
/// and vector loads).
const ALIGN: u64 = 64;

/// Collects the payloads of the initializers moved out of the model.
pub struct External {
    /// Tensors whose raw data has at least this many bytes move.
    threshold: usize,
    /// File name written into `location` (relative to the model).
    location: String,
    /// (offset, values) in file order; strided views are packed only when
    /// written, one at a time.
    pub chunks: Vec<(u64, Elements)>,
    len: u64,
}

impl External {
    pub fn new(threshold: usize, location: String) -> Self {
        External {
            threshold,
            location,
            chunks: Vec::new(),
            len: 0,
        }
    }

    /// Whether `e` is large enough to move out.
    pub fn wants(&self, e: &Elements) -> bool {
        let bytes = e.dtype().storage_bytes(e.len()).unwrap_or(0);
        bytes > 0 && bytes >= self.threshold
    }

    /// Points `t` (which holds no data) at `e`'s place in the data file.
    pub fn place(&mut self, t: &mut TensorProto, e: &Elements) {
        let length = e.dtype().storage_bytes(e.len()).unwrap_or(0) as u64;
        let offset = self.len.div_ceil(ALIGN) * ALIGN;
        self.len = offset + length;
        self.chunks.push((offset, e.clone()));
        let entry = |k: &str, v: String| StringStringEntryProto {
            key: k.into(),
            value: v,
        };
        t.data_location = DataLocation::External as i32;
        t.external_data = vec![
            entry("location", self.location.clone()),
            entry("offset", offset.to_string()),
            entry("length", length.to_string()),
        ];
    }

    /// Writes the data file's bytes to `w`.
    pub fn write_to(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        let mut pos = 0u64;
        for (offset, e) in &self.chunks {
            let pad = offset.saturating_sub(pos);
            w.write_all(&vec![0u8; pad as usize])?;
            let len = match e.contiguous_bytes() {
                Some(b) => {
                    w.write_all(b)?;
                    b.len()
                }
                None => write_packed(w, e)?,
            };
            pos = offset + len as u64;
        }
        Ok(())
    }
}

/// Packs a view a chunk at a time (never the whole view in memory).
fn write_packed(w: &mut impl std::io::Write, e: &Elements) -> std::io::Result<usize> {
    const CHUNK: usize = 1 << 16; // elements, a multiple of 8
    let mut buf = Vec::new();
    let mut written = 0;
    let mut at = 0;
    while at < e.len() {
        buf.clear();
        e.pack_range(at, CHUNK, &mut buf);
        w.write_all(&buf)?;
        written += buf.len();
        at += CHUNK;
    }
    Ok(written)
}
