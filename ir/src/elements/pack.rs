//! Reading a range of a view in bulk: decoded values or packed bytes, so
//! large views are written a chunk at a time instead of all at once.

use super::codec::push_raw;
use super::lazy::Positions;
use super::{decode, read_raw, Elements, WideNum};

impl Elements {
    /// Elements `[start, start + n)` in row-major order (clamped to the
    /// view): bulk decoding of contiguous data, an odometer over strided
    /// views, the chunked transform of lazy ones.
    pub fn iter_range(&self, start: usize, n: usize) -> impl Iterator<Item = WideNum> + '_ {
        let len = self.len();
        let start = start.min(len);
        let n = n.min(len - start);
        let dtype = self.0.dtype;
        let it: Box<dyn Iterator<Item = WideNum> + '_> = if let Some(l) = &self.0.lazy {
            Box::new(l.values(start, n))
        } else if let Some(s) = self.stored_copy() {
            Box::new((start..start + n).map_while(move |i| s.get(i)))
        } else if let (Some(b), true) = (self.contiguous_bytes(), dtype.bits() >= 8) {
            let w = dtype.bits() as usize / 8;
            let b = b.get(start * w..).unwrap_or_default();
            Box::new(b.chunks_exact(w).take(n).map(move |c| {
                let mut buf = [0u8; 8];
                buf[..w].copy_from_slice(c);
                decode(dtype, u64::from_le_bytes(buf))
            }))
        } else {
            let bytes = &self.0.bytes;
            let d = &self.0;
            Box::new(
                Positions::starting_at(&d.shape, &d.strides, d.offset, start)
                    .take(n)
                    .map(move |p| decode(dtype, read_raw(bytes, dtype, p).unwrap_or(0))),
            )
        };
        it
    }

    /// Appends the packed little-endian bytes of elements `[start, start +
    /// n)` (clamped to the view) to `out`. For sub-byte dtypes `start` must
    /// be a multiple of 8 so the range begins on a byte.
    pub fn pack_range(&self, start: usize, n: usize, out: &mut Vec<u8>) {
        let len = self.len();
        let start = start.min(len);
        let n = n.min(len - start);
        let d = &self.0;
        let dtype = d.dtype;
        let bits = dtype.bits() as usize;
        if let Some(l) = &d.lazy {
            return l.pack_range(start, n, dtype, out);
        }
        if start == 0 && n == len && self.fill_generated(out) {
            return;
        }
        if let Some(s) = self.stored_copy() {
            return s.pack_range(start, n, out);
        }
        if bits >= 8 {
            let w = bits / 8;
            if let Some(b) = self.contiguous_bytes() {
                out.extend_from_slice(b.get(start * w..(start + n) * w).unwrap_or_default());
                return;
            }
            if self.is_splat() {
                let raw = read_raw(&d.bytes, dtype, d.offset).unwrap_or(0);
                let one = &raw.to_le_bytes()[..w];
                out.reserve(n * w);
                for _ in 0..n {
                    out.extend_from_slice(one);
                }
                return;
            }
        }
        let positions = Positions::starting_at(&d.shape, &d.strides, d.offset, start);
        for (i, p) in positions.take(n).enumerate() {
            push_raw(out, dtype, i, read_raw(&d.bytes, dtype, p).unwrap_or(0));
        }
    }
}
