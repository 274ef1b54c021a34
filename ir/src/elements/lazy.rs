//! Lazily transformed views and the odometer over strided views.

use super::{decode, encode, DType, Elements, WideNum};

/// `base * scale[b] + shift[b]` for block `b = flat / block`, rounded to
/// the view's dtype on read.
#[derive(Debug)]
pub(super) struct Affine {
    pub base: Elements,
    pub block: usize,
    pub scale: Vec<f64>,
    pub shift: Vec<f64>,
}

fn round(dtype: DType, v: f64) -> WideNum {
    let w = WideNum::from_f64(v);
    encode(dtype, w).map_or(w, |raw| decode(dtype, raw))
}

impl Affine {
    fn apply(&self, flat: usize, x: WideNum, dtype: DType) -> WideNum {
        let b = flat / self.block;
        let s = self.scale.get(b).copied().unwrap_or(1.0);
        let t = self.shift.get(b).copied().unwrap_or(0.0);
        round(dtype, x.f64() * s + t)
    }
    pub fn get(&self, flat: usize, dtype: DType) -> Option<WideNum> {
        Some(self.apply(flat, self.base.get(flat)?, dtype))
    }
    /// Fast path for f32 weights over contiguous f32 data: appends the
    /// transformed values; false when it does not apply.
    pub fn extend_f32(&self, dtype: DType, out: &mut Vec<u8>) -> bool {
        let Some(src) = self.base.contiguous_bytes() else {
            return false;
        };
        if dtype != DType::F32 || self.base.dtype() != DType::F32 {
            return false;
        }
        for (b, chunk) in src.chunks(self.block.saturating_mul(4).max(4)).enumerate() {
            let s = self.scale.get(b).copied().unwrap_or(1.0);
            let t = self.shift.get(b).copied().unwrap_or(0.0);
            for c in chunk.chunks_exact(4) {
                let x = f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]]));
                out.extend_from_slice(&((x * s + t) as f32).to_le_bytes());
            }
        }
        true
    }
    pub fn iter(&self, dtype: DType) -> impl Iterator<Item = WideNum> + '_ {
        self.base
            .iter()
            .enumerate()
            .map(move |(i, x)| self.apply(i, x, dtype))
    }
}

/// Buffer positions of a strided view in row-major order, without a
/// division per element.
pub(super) struct Positions {
    shape: Vec<i64>,
    strides: Vec<i64>,
    idx: Vec<i64>,
    pos: i64,
    done: bool,
}

impl Positions {
    pub fn new(shape: &[i64], strides: &[i64], offset: usize) -> Positions {
        Positions {
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            idx: vec![0; shape.len()],
            pos: offset as i64,
            done: shape.iter().any(|&d| d <= 0),
        }
    }
}

impl Iterator for Positions {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        if self.done {
            return None;
        }
        let here = self.pos.max(0) as usize;
        // Advance the odometer; past the last index the iterator ends.
        let mut d = self.shape.len();
        loop {
            if d == 0 {
                self.done = true;
                break;
            }
            d -= 1;
            self.idx[d] += 1;
            self.pos += self.strides[d];
            if self.idx[d] < self.shape[d] {
                break;
            }
            self.pos -= self.strides[d] * self.shape[d];
            self.idx[d] = 0;
        }
        Some(here)
    }
}
