//! The plane copy: each channel's input rows into its `sh × sw` padded
//! polyphase planes (see `planes`), the pads the neutral value.
//!
//! Which plane rows hold input rows, and which vectors of a plane row's
//! columns lie wholly inside the input, is worked out once per plane.
//! The copy then goes a column vector at a time down the rows: a vector
//! crossing the input's edge computes its lane masks once for all rows,
//! and no loop is a row-long copy that LLVM would turn into a `memcpy`
//! call of runtime length (a call per row of a vector or two, where a
//! static row is a few inline moves).

use super::{Geometry, PlaneSource};
use ir::{Builder, ValueId};

/// Where a column phase's plane columns read the input: plane column `j`
/// is input column `sw·j - shift`; `lo..hi` are whole vectors inside it.
struct ColumnSpan {
    shift: ValueId,
    lo: ValueId,
    hi: ValueId,
    wq: ValueId,
}

/// Plane rows `top..bottom` of row phase `phase` (the ones holding input
/// rows), their plane from `base` in the scratch buffer.
struct PlaneRows {
    base: ValueId,
    phase: i64,
    top: ValueId,
    bottom: ValueId,
}

impl PlaneRows {
    /// The scratch position of plane row `i`, column `j`.
    fn at(&self, b: &mut Builder<'_>, g: &Geometry, (i, j): (ValueId, ValueId)) -> ValueId {
        let row = b.muli(i, g.wq);
        let row = b.addi(self.base, row);
        b.addi(row, j)
    }
}

/// A masked column vector's masks: its loads' lanes inside the input row
/// (two loads at stride 2), and its lanes inside the plane row.
struct ColumnMasks {
    load: LoadMask,
    store: ValueId,
}

enum LoadMask {
    One(ValueId),
    /// Stride 2: two plain vectors, then their even lanes.
    Pair(ValueId, ValueId),
}

impl PlaneSource<'_> {
    /// Each plane row of input channel `input` (`[n, c]`), its planes
    /// from `first` in `scratch`: a row of the input, or the neutral value
    /// where the row is padding. Which rows and vectors of columns lie in
    /// the input is worked out per plane, not per row.
    pub(in crate::kernels::convolution::sliding) fn fill(
        &self,
        b: &mut Builder<'_>,
        g: &Geometry,
        input: [ValueId; 2],
        (scratch, first): (ValueId, ValueId),
    ) {
        let (sh, sw) = (self.spatial.strides[0], self.spatial.strides[1]);
        let spans: Vec<ColumnSpan> = (0..sw).map(|ph| self.column_span(b, g, ph)).collect();
        for a in 0..sh {
            let (top, bottom) = self.input_rows(b, g, a);
            for (col_phase, span) in (0..sw).zip(&spans) {
                let phase = b.const_index(a * sw + col_phase);
                let base = b.muli(phase, g.plane_len);
                let base = b.addi(first, base);
                let zero = b.const_index(0);
                for (from, to) in [(zero, top), (bottom, g.hq)] {
                    let start = b.muli(from, g.wq);
                    let start = b.addi(base, start);
                    let rows = b.subi(to, from);
                    let len = b.muli(rows, g.wq);
                    self.pad(b, (scratch, start), len);
                }
                let rows = PlaneRows {
                    base,
                    phase: a,
                    top,
                    bottom,
                };
                self.copy_rows_in(b, (g, span), input, &rows, scratch);
            }
        }
    }

    /// The plane rows `top..bottom` of row phase `a` that hold input rows:
    /// `0 <= sh·i + a - ph < in`.
    fn input_rows(&self, b: &mut Builder<'_>, g: &Geometry, a: i64) -> (ValueId, ValueId) {
        let (lead, top) = self.first_inside(b, 0, a);
        let top = b.minsi(top, g.hq);
        let s = b.const_index(self.spatial.strides[0]);
        let end = b.addi(self.place.ins[0], lead);
        let bottom = b.ceildivsi(end, s);
        let bottom = b.minsi(bottom, g.hq);
        (top, b.maxsi(bottom, top))
    }

    /// On axis `i`, plane index `j` of phase `phase` is input position
    /// `s·j - lead`: `lead` and the first `j` whose position is >= 0.
    fn first_inside(&self, b: &mut Builder<'_>, i: usize, phase: i64) -> (ValueId, ValueId) {
        let (zero, s) = (b.const_index(0), b.const_index(self.spatial.strides[i]));
        let ph = b.const_index(phase);
        let lead = b.subi(self.place.begins[i], ph);
        let first = b.ceildivsi(lead, s);
        (lead, b.maxsi(first, zero))
    }

    /// `len` elements of padding (whole plane rows) from `start`.
    fn pad(&self, b: &mut Builder<'_>, (scratch, start): (ValueId, ValueId), len: ValueId) {
        let zero = b.const_index(0);
        let lanes = b.const_index(self.lanes);
        b.scf_for(zero, len, lanes, &[], |b, j, _| {
            let left = b.subi(len, j);
            let mask = b.create_mask(left, self.lanes);
            let at = b.addi(start, j);
            b.masked_store(self.neutral, scratch, &[at], mask);
            Vec::new()
        });
    }

    /// The columns of column phase `phase`: plane column `j` is input
    /// column `sw·j - shift`. Whole vectors from `lo` (first column >= 0,
    /// rounded up to a vector) to `hi` (their last load ends inside the
    /// input) are plain loads; the rest (the borders, the row's end) are
    /// masked.
    fn column_span(&self, b: &mut Builder<'_>, g: &Geometry, phase: i64) -> ColumnSpan {
        let lanes = b.const_index(self.lanes);
        let (zero, s) = (b.const_index(0), b.const_index(self.spatial.strides[1]));
        let (shift, first) = self.first_inside(b, 1, phase);
        let lo = b.ceildivsi(first, lanes);
        let lo = b.muli(lo, lanes);
        let lo = b.minsi(lo, g.wq);
        let room = b.addi(self.place.ins[1], shift);
        let room = b.floordivsi(room, s);
        let room = b.minsi(room, g.wq);
        let n = b.subi(room, lo);
        let n = b.maxsi(n, zero);
        let n = b.floordivsi(n, lanes);
        let n = b.muli(n, lanes);
        ColumnSpan {
            shift,
            lo,
            hi: b.addi(lo, n),
            wq: g.wq,
        }
    }

    /// Input rows into plane rows `rows.top..rows.bottom`, columns per
    /// `span`, a column vector at a time down the rows.
    fn copy_rows_in(
        &self,
        b: &mut Builder<'_>,
        (g, span): (&Geometry, &ColumnSpan),
        input: [ValueId; 2],
        rows: &PlaneRows,
        scratch: ValueId,
    ) {
        let (zero, one) = (b.const_index(0), b.const_index(1));
        let lanes = b.const_index(self.lanes);
        // The borders and the row's end masked, the whole vectors plain.
        let parts = [
            (zero, span.lo, true),
            (span.hi, span.wq, true),
            (span.lo, span.hi, false),
        ];
        for (from, to, masked) in parts {
            b.scf_for(from, to, lanes, &[], |b, j, _| {
                let masks = masked.then(|| self.column_masks(b, span, j));
                b.scf_for(rows.top, rows.bottom, one, &[], |b, i, _| {
                    let idx = self.input_index(b, span, input, rows, (i, j));
                    let v = match &masks {
                        Some(masks) => self.load_masked(b, &idx, masks),
                        None => self.load_whole(b, &idx),
                    };
                    let at = rows.at(b, g, (i, j));
                    match &masks {
                        Some(masks) => b.masked_store(v, scratch, &[at], masks.store),
                        None => b.vstore(v, scratch, &[at]),
                    }
                    Vec::new()
                });
                Vec::new()
            });
        }
    }

    /// The input element `[n, c, r, col]` behind plane row `i`, column `j`.
    fn input_index(
        &self,
        b: &mut Builder<'_>,
        span: &ColumnSpan,
        input: [ValueId; 2],
        rows: &PlaneRows,
        (i, j): (ValueId, ValueId),
    ) -> Vec<ValueId> {
        let at = crate::loops::scale_add(b, None, i, self.spatial.strides[0]);
        let phase = b.const_index(rows.phase);
        let at = b.addi(at, phase);
        let r = b.subi(at, self.place.begins[0]);
        let at = crate::loops::scale_add(b, None, j, self.spatial.strides[1]);
        let c = b.subi(at, span.shift);
        let mut idx = input.to_vec();
        idx.extend([r, c]);
        idx
    }

    /// `lanes` input elements `idx.last + sw·t`, all inside the row.
    fn load_whole(&self, b: &mut Builder<'_>, idx: &[ValueId]) -> ValueId {
        let sw = self.spatial.strides[1];
        let l = self.lanes;
        match sw {
            1 => b.vload(self.x, idx, l),
            2 => {
                let lo = b.vload(self.x, idx, l);
                let next = Self::next_vector(b, idx, l);
                let hi = b.vload(self.x, &next, l);
                Self::evens(b, lo, hi, l)
            }
            _ => {
                let on = b.const_bool(true);
                let all = b.broadcast(on, l);
                let offs = b.i64_lanes(0, sw, l);
                b.gather(self.x, idx, offs, all, self.neutral)
            }
        }
    }

    /// The lane masks of the column vector at plane column `j`.
    fn column_masks(&self, b: &mut Builder<'_>, span: &ColumnSpan, j: ValueId) -> ColumnMasks {
        let (sw, l) = (self.spatial.strides[1], self.lanes);
        let at = crate::loops::scale_add(b, None, j, sw);
        let c = b.subi(at, span.shift);
        let step = if sw == 2 { 1 } else { sw };
        let offs = b.i64_lanes(0, step, l);
        let first = self.inside_lanes(b, c, offs);
        let load = if sw == 2 {
            let lanes = b.const_index(l);
            let c2 = b.addi(c, lanes);
            LoadMask::Pair(first, self.inside_lanes(b, c2, offs))
        } else {
            LoadMask::One(first)
        };
        let left = b.subi(span.wq, j);
        ColumnMasks {
            load,
            store: b.create_mask(left, l),
        }
    }

    /// `lanes` input elements `idx.last + sw·t`; lanes outside the input
    /// row (per `masks`) read the neutral value and no memory.
    fn load_masked(&self, b: &mut Builder<'_>, idx: &[ValueId], masks: &ColumnMasks) -> ValueId {
        let sw = self.spatial.strides[1];
        let (l, neutral) = (self.lanes, self.neutral);
        match masks.load {
            LoadMask::Pair(lo_mask, hi_mask) => {
                let lo = b.masked_load(self.x, idx, lo_mask, neutral);
                let next = Self::next_vector(b, idx, l);
                let hi = b.masked_load(self.x, &next, hi_mask, neutral);
                Self::evens(b, lo, hi, l)
            }
            LoadMask::One(mask) if sw == 1 => b.masked_load(self.x, idx, mask, neutral),
            LoadMask::One(mask) => {
                let offs = b.i64_lanes(0, sw, l);
                b.gather(self.x, idx, offs, mask, neutral)
            }
        }
    }

    /// `idx` moved `lanes` columns right.
    fn next_vector(b: &mut Builder<'_>, idx: &[ValueId], lanes: i64) -> Vec<ValueId> {
        let mut next = idx.to_vec();
        let step = b.const_index(lanes);
        if let Some(c) = next.last_mut() {
            *c = b.addi(*c, step);
        }
        next
    }

    /// The even lanes of `lo ++ hi`.
    fn evens(b: &mut Builder<'_>, lo: ValueId, hi: ValueId, lanes: i64) -> ValueId {
        let evens: Vec<i64> = (0..lanes).map(|t| 2 * t).collect();
        b.shuffle(lo, hi, &evens)
    }

    fn inside_lanes(&self, b: &mut Builder<'_>, at: ValueId, offsets: ValueId) -> ValueId {
        crate::kernels::support::lanes_inside(b, at, offsets, self.place.ins[1], self.lanes)
    }
}
