//! 2-D windows (depthwise Conv, MaxPool) over padded polyphase planes.
//!
//! Per channel, the input is first copied into `sh × sw` planes, plane
//! `(a, b)` holding the padded input's rows `sh·i + a` and columns
//! `sw·j + b` (the pad positions hold the neutral value). Tap `(u, v)` of
//! output `(oh, ow)` is then element `(oh + (dh·u)/sh, ow + (dw·v)/sw)` of
//! plane `((dh·u) % sh, (dw·v) % sw)`: a stride-1, border-free window.
//! Outputs are computed with the row pitch `wq` of the planes, so output
//! `q = oh·wq + ow` reads `q + offset(tap)`: every tap is one unmasked
//! vector load whatever the row length, and the lanes that fall in the
//! pitch's spare columns are computed and dropped. The rows are then
//! copied out to the result.
//!
//! Why: a mobile net's late layers have rows of 7 or 14 outputs, a vector
//! of 16 left most lanes idle, and a stride-2 window needed a gather per
//! tap; the copy reads the input once, with plain or deinterleaving
//! (stride 2) vector loads.

use super::super::window::{Placement, Spatial};
use super::{Channel, Reduction, Sliding};
use crate::loops::{loop_nest_by_work, Bounds, PARALLEL_MIN_WORK};
use ir::{Builder, Type, ValueId, DYN};

/// Chunks of channels per image at most: one scratch buffer per chunk.
const CHUNKS_PER_IMAGE: i64 = 16;

/// The runtime geometry of the planes and the flat outputs in one
/// scratch buffer: `planes · hq · wq` input elements, slack for the last
/// loads' spare lanes, then the outputs at pitch `wq`.
pub(super) struct Geometry {
    pub(super) wq: ValueId,
    hq: ValueId,
    pub(super) plane_len: ValueId,
    /// Every phase's plane of one channel.
    pub(super) planes: ValueId,
    /// Past the last plane: room for `SLACK_VECTORS` vectors and a row.
    pub(super) slack: ValueId,
    out_base: ValueId,
    len: ValueId,
}

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

/// An average's tap counts as elements: `rows[oh]`, and `cols[ow]` for
/// `wq + lanes` columns.
pub(super) struct Divisors {
    rows: ValueId,
    cols: ValueId,
}

/// Vectors a flat output loop reads past its last whole output.
pub(super) const SLACK_VECTORS: i64 = 2;

/// A 2-D input (`[N, C, H, W]`) and its window, for the plane copy.
pub(super) struct PlaneSource<'a> {
    pub(super) x: ValueId,
    pub(super) spatial: &'a Spatial,
    pub(super) place: &'a Placement,
    pub(super) lanes: i64,
    /// A vector of the pads' value.
    pub(super) neutral: ValueId,
}

impl Sliding {
    /// Whether this window runs on planes: two spatial axes and vectors.
    pub(super) fn on_planes(&self) -> bool {
        self.rank() == 2 && self.lanes > 0
    }

    /// Every output, a chunk of channels per scratch buffer.
    pub(super) fn run_planes(&self, b: &mut Builder<'_>, batch_channels: &[ValueId]) {
        let src = self.plane_source(b);
        let g = src.geometry(b);
        let divisors = self.divisors(b, &g);
        let bounds = Bounds::new(b);
        let channels = batch_channels[1];
        let most = b.const_index(CHUNKS_PER_IMAGE);
        let chunk = b.ceildivsi(channels, most);
        let chunk = b.maxsi(chunk, bounds.one);
        let chunks = b.ceildivsi(channels, chunk);
        let mut work = batch_channels.to_vec();
        work.extend(&self.place.outs);
        let ubs = [batch_channels[0], chunks];
        let zero = bounds.zero;
        loop_nest_by_work(b, &bounds, &ubs, &work, PARALLEL_MIN_WORK, &mut |b, ivs| {
            let ty = Type::memref(vec![DYN], self.elem.clone());
            let scratch = b.alloc_aligned(&ty, &[g.len], 64);
            let first = b.muli(ivs[1], chunk);
            let end = b.addi(first, chunk);
            let end = b.minsi(end, channels);
            b.scf_for(first, end, bounds.one, &[], |b, m, _| {
                let c = match self.red {
                    Reduction::Depthwise { mult, .. } => b.divui(m, mult),
                    _ => m,
                };
                let ch = Channel {
                    out: [ivs[0], m],
                    input: [ivs[0], c],
                };
                src.fill(b, &g, ch.input, (scratch, zero));
                self.flat_outputs(b, (&src, &g), &ch, scratch);
                let flat = (scratch, g.out_base);
                src.copy_rows(b, g.wq, (self.out, ch.out), flat, divisors.as_ref());
                Vec::new()
            });
        });
    }

    /// An average's divisors, once for every channel: the tap count of
    /// each output row and column (the pitch's spare columns and the
    /// slack of the last vector count that of the last column).
    fn divisors(&self, b: &mut Builder<'_>, g: &Geometry) -> Option<Divisors> {
        if !matches!(self.red, Reduction::Average) {
            return None;
        }
        let ty = Type::memref(vec![DYN], self.elem.clone());
        let (zero, one) = (b.const_index(0), b.const_index(1));
        let lanes = b.const_index(self.lanes);
        let cols = b.addi(g.wq, lanes);
        let lens = [self.place.outs[0], cols];
        let bufs = lens.map(|len| b.alloc(&ty, &[len]));
        for (axis, (&buf, &len)) in bufs.iter().zip(&lens).enumerate() {
            let last = b.subi(self.place.outs[axis], one);
            b.scf_for(zero, len, one, &[], |b, o, _| {
                let at = b.minsi(o, last);
                let taps = self.taps(b, axis, at);
                let n = self.count(b, &[taps]);
                b.store(n, buf, &[o]);
                Vec::new()
            });
        }
        let [rows, cols] = bufs;
        Some(Divisors { rows, cols })
    }

    /// The plane machinery over this window's input; pads read the
    /// reduction's neutral value (the lowest for a max, else 0).
    pub(super) fn plane_source(&self, b: &mut Builder<'_>) -> PlaneSource<'_> {
        let n = match self.red {
            Reduction::Max => super::scalar::lowest(b, &self.elem),
            _ => b.zero(&self.elem),
        };
        PlaneSource {
            x: self.x,
            spatial: &self.spatial,
            place: &self.place,
            lanes: self.lanes,
            neutral: b.broadcast(n, self.lanes),
        }
    }

    /// The outputs at pitch `wq`, `lanes` at a time: each tap one load at
    /// a fixed offset from the output's own position.
    fn flat_outputs(
        &self,
        b: &mut Builder<'_>,
        (src, g): (&PlaneSource<'_>, &Geometry),
        ch: &Channel,
        scratch: ValueId,
    ) {
        let offs = src.tap_offsets(b, g);
        let kw = self.spatial.kernel[1];
        let taps: Vec<(ValueId, Option<ValueId>)> = (0..)
            .zip(offs)
            .map(|(t, off)| {
                let weight = match self.red {
                    Reduction::Depthwise { w, .. } => {
                        let zero = b.const_index(0);
                        let (ku, kv) = (b.const_index(t / kw), b.const_index(t % kw));
                        let s = b.load(w, &[ch.out[1], zero, ku, kv]);
                        Some(b.broadcast(s, self.lanes))
                    }
                    _ => None,
                };
                (off, weight)
            })
            .collect();
        let init = self.init(b, ch);
        let init = b.broadcast(init, self.lanes);
        let zero = b.const_index(0);
        let lanes = b.const_index(self.lanes);
        let total = b.muli(self.place.outs[0], g.wq);
        b.scf_for(zero, total, lanes, &[], |b, q, _| {
            let mut acc = init;
            for &(off, weight) in &taps {
                let at = b.addi(q, off);
                let v = b.vload(scratch, &[at], self.lanes);
                acc = match (weight, self.red) {
                    (Some(w), _) => b.vfma(v, w, acc),
                    (None, Reduction::Average) => b.add(acc, v),
                    (None, _) => b.max(acc, v),
                };
            }
            // Pools fuse no activation, so an average's follows no division.
            let r = self.act.apply(b, acc);
            let at = b.addi(g.out_base, q);
            b.vstore(r, scratch, &[at]);
            Vec::new()
        });
    }
}

impl PlaneSource<'_> {
    pub(super) fn geometry(&self, b: &mut Builder<'_>) -> Geometry {
        let sp = self.spatial;
        // The planes reach (d·(k-1))/s past the outputs on each axis.
        let reach = |i: usize| sp.dilations[i] * (sp.kernel[i] - 1) / sp.strides[i];
        let (eh, ew) = (b.const_index(reach(0)), b.const_index(reach(1)));
        let hq = b.addi(self.place.outs[0], eh);
        let wq = b.addi(self.place.outs[1], ew);
        let plane_len = b.muli(hq, wq);
        let phases = b.const_index(sp.strides[0] * sp.strides[1]);
        let planes = b.muli(phases, plane_len);
        let vectors = b.const_index(SLACK_VECTORS * self.lanes);
        let slack = b.addi(vectors, wq);
        let out_base = b.addi(planes, slack);
        let outs = b.muli(self.place.outs[0], wq);
        let end = b.addi(out_base, outs);
        let len = b.addi(end, slack);
        Geometry {
            wq,
            hq,
            plane_len,
            planes,
            slack,
            out_base,
            len,
        }
    }

    /// Each plane row of input channel `input` (`[n, c]`), its planes
    /// from `first` in `scratch`: a row of the input, or the neutral value
    /// where the row is padding. Which rows and vectors of columns lie in
    /// the input is worked out per plane, not per row.
    pub(super) fn fill(
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
    /// `span`, a column vector at a time down the rows. A masked column
    /// vector (the borders, the row's end) works out its lane masks once
    /// for all rows, and no loop is a row-long copy that LLVM would turn
    /// into a `memcpy` call of runtime length (a call per row of a vector
    /// or two, where a static row is a few inline moves).
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
        for (from, to) in [(zero, span.lo), (span.hi, span.wq)] {
            b.scf_for(from, to, lanes, &[], |b, j, _| {
                let masks = self.column_masks(b, span, j);
                b.scf_for(rows.top, rows.bottom, one, &[], |b, i, _| {
                    let idx = self.input_index(b, span, input, rows, (i, j));
                    let v = self.load_masked(b, &idx, &masks);
                    let at = rows.at(b, g, (i, j));
                    b.masked_store(v, scratch, &[at], masks.store);
                    Vec::new()
                });
                Vec::new()
            });
        }
        b.scf_for(span.lo, span.hi, lanes, &[], |b, j, _| {
            b.scf_for(rows.top, rows.bottom, one, &[], |b, i, _| {
                let idx = self.input_index(b, span, input, rows, (i, j));
                let v = self.load_whole(b, &idx);
                let at = rows.at(b, g, (i, j));
                b.vstore(v, scratch, &[at]);
                Vec::new()
            });
            Vec::new()
        });
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

    /// Each tap's offset from an output's flat position, `(u, v)`
    /// row-major: its plane, then `(d·u)/sh` rows and `(d·v)/sw` columns.
    pub(super) fn tap_offsets(&self, b: &mut Builder<'_>, g: &Geometry) -> Vec<ValueId> {
        let sp = self.spatial;
        let (sh, sw) = (sp.strides[0], sp.strides[1]);
        let mut offs = Vec::new();
        for u in 0..sp.kernel[0] {
            for v in 0..sp.kernel[1] {
                let (ru, rv) = (sp.dilations[0] * u, sp.dilations[1] * v);
                let phase = b.const_index((ru % sh) * sw + rv % sw);
                let base = b.muli(phase, g.plane_len);
                let down = b.const_index(ru / sh);
                let down = b.muli(down, g.wq);
                let right = b.const_index(rv / sw);
                let off = b.addi(base, down);
                offs.push(b.addi(off, right));
            }
        }
        offs
    }

    fn inside_lanes(&self, b: &mut Builder<'_>, at: ValueId, offsets: ValueId) -> ValueId {
        super::super::lanes_inside(b, at, offsets, self.place.ins[1], self.lanes)
    }
    /// Rows of `out[n, m]` (`channel`) from flat outputs at pitch `wq`
    /// from `base` in `scratch`: row `oh` is the first `wo` of `oh·wq..`,
    /// divided by the tap counts when `divisors` are given (sums). A
    /// column vector at a time down the rows, as the planes are filled.
    pub(super) fn copy_rows(
        &self,
        b: &mut Builder<'_>,
        wq: ValueId,
        (out, channel): (ValueId, [ValueId; 2]),
        (scratch, base): (ValueId, ValueId),
        divisors: Option<&Divisors>,
    ) {
        let (ho, wo) = (self.place.outs[0], self.place.outs[1]);
        let (zero, one) = (b.const_index(0), b.const_index(1));
        let lanes = b.const_index(self.lanes);
        let whole = b.floordivsi(wo, lanes);
        let whole = b.muli(whole, lanes);
        let left = b.subi(wo, whole);
        let partial = b.cmp(ir::builder::Cmp::Gt, left, zero);
        let mask = b.create_mask(left, self.lanes);
        let column = |b: &mut Builder<'_>, ow: ValueId, mask: Option<ValueId>| {
            let col_counts = divisors.map(|d| (d.rows, b.vload(d.cols, &[ow], self.lanes)));
            b.scf_for(zero, ho, one, &[], |b, oh, _| {
                let at = b.muli(oh, wq);
                let at = b.addi(base, at);
                let at = b.addi(at, ow);
                let v = b.vload(scratch, &[at], self.lanes);
                let v = match col_counts {
                    Some((rows, cols)) => {
                        let n = b.load(rows, &[oh]);
                        let n = b.broadcast(n, self.lanes);
                        let n = b.mulf(cols, n);
                        b.divf(v, n)
                    }
                    None => v,
                };
                let dst = [channel[0], channel[1], oh, ow];
                match mask {
                    Some(mask) => b.masked_store(v, out, &dst, mask),
                    None => b.vstore(v, out, &dst),
                }
                Vec::new()
            });
        };
        b.scf_for(zero, whole, lanes, &[], |b, ow, _| {
            column(b, ow, None);
            Vec::new()
        });
        b.scf_if(
            partial,
            &[],
            &mut |b| {
                column(b, whole, Some(mask));
                Vec::new()
            },
            None,
        );
    }
}
