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
    /// Whether this window runs on planes: two spatial axes, and not an
    /// average (whose divisor depends on the taps inside the input).
    pub(super) fn on_planes(&self) -> bool {
        self.rank() == 2 && self.lanes > 0 && !matches!(self.red, Reduction::Average)
    }

    /// Every output, a chunk of channels per scratch buffer.
    pub(super) fn run_planes(&self, b: &mut Builder<'_>, batch_channels: &[ValueId]) {
        let src = self.plane_source(b);
        let g = src.geometry(b);
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
                src.copy_rows(b, g.wq, (self.out, ch.out), (scratch, g.out_base));
                Vec::new()
            });
        });
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
                acc = match weight {
                    Some(w) => b.vfma(v, w, acc),
                    None => b.max(acc, v),
                };
            }
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
        let one = b.const_index(1);
        let spans: Vec<ColumnSpan> = (0..sw).map(|ph| self.column_span(b, g, ph)).collect();
        for a in 0..sh {
            let (top, bottom) = self.input_rows(b, g, a);
            for (col_phase, span) in (0..sw).zip(&spans) {
                let phase = b.const_index(a * sw + col_phase);
                let base = b.muli(phase, g.plane_len);
                let base = b.addi(first, base);
                let plane_row = |b: &mut Builder<'_>, i: ValueId| {
                    let row = b.muli(i, g.wq);
                    b.addi(base, row)
                };
                let zero = b.const_index(0);
                for (from, to) in [(zero, top), (bottom, g.hq)] {
                    b.scf_for(from, to, one, &[], |b, i, _| {
                        let row = plane_row(b, i);
                        self.pad_row(b, g, (scratch, row));
                        Vec::new()
                    });
                }
                b.scf_for(top, bottom, one, &[], |b, i, _| {
                    let at = crate::loops::scale_add(b, None, i, sh);
                    let phase_row = b.const_index(a);
                    let at = b.addi(at, phase_row);
                    let r = b.subi(at, self.place.begins[0]);
                    let row = plane_row(b, i);
                    self.copy_row(b, span, input, r, (scratch, row));
                    Vec::new()
                });
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

    /// A plane row of padding: the neutral value.
    fn pad_row(&self, b: &mut Builder<'_>, g: &Geometry, (scratch, row): (ValueId, ValueId)) {
        let zero = b.const_index(0);
        let lanes = b.const_index(self.lanes);
        b.scf_for(zero, g.wq, lanes, &[], |b, j, _| {
            let left = b.subi(g.wq, j);
            let mask = b.create_mask(left, self.lanes);
            let at = b.addi(row, j);
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

    /// Plane row `row` from input row `r`, columns per `span`.
    fn copy_row(
        &self,
        b: &mut Builder<'_>,
        span: &ColumnSpan,
        input: [ValueId; 2],
        r: ValueId,
        (scratch, row): (ValueId, ValueId),
    ) {
        let sw = self.spatial.strides[1];
        let l = self.lanes;
        let lanes = b.const_index(l);
        let zero = b.const_index(0);
        let column = |b: &mut Builder<'_>, j: ValueId| {
            let at = crate::loops::scale_add(b, None, j, sw);
            let c = b.subi(at, span.shift);
            let mut idx = input.to_vec();
            idx.extend([r, c]);
            idx
        };
        let masked = |b: &mut Builder<'_>, j: ValueId| {
            let idx = column(b, j);
            let v = self.load_columns(b, &idx, true);
            let left = b.subi(span.wq, j);
            let mask = b.create_mask(left, l);
            let at = b.addi(row, j);
            b.masked_store(v, scratch, &[at], mask);
        };
        for (from, to) in [(zero, span.lo), (span.hi, span.wq)] {
            b.scf_for(from, to, lanes, &[], |b, j, _| {
                masked(b, j);
                Vec::new()
            });
        }
        b.scf_for(span.lo, span.hi, lanes, &[], |b, j, _| {
            let idx = column(b, j);
            let v = self.load_columns(b, &idx, false);
            let at = b.addi(row, j);
            b.vstore(v, scratch, &[at]);
            Vec::new()
        });
    }

    /// `lanes` input elements `idx.last + sw·t`. When `masked`, lanes
    /// outside the input row read the neutral value and no memory; else
    /// all are inside.
    fn load_columns(&self, b: &mut Builder<'_>, idx: &[ValueId], masked: bool) -> ValueId {
        let sw = self.spatial.strides[1];
        let l = self.lanes;
        let c = idx[idx.len() - 1];
        let neutral = self.neutral;
        if !masked {
            if sw == 1 {
                return b.vload(self.x, idx, l);
            }
            if sw == 2 {
                let lo = b.vload(self.x, idx, l);
                let mut next = idx.to_vec();
                let step = b.const_index(l);
                next[idx.len() - 1] = b.addi(c, step);
                let hi = b.vload(self.x, &next, l);
                let evens: Vec<i64> = (0..l).map(|t| 2 * t).collect();
                return b.shuffle(lo, hi, &evens);
            }
            let on = b.const_bool(true);
            let all = b.broadcast(on, l);
            let offs = b.i64_lanes(0, sw, l);
            return b.gather(self.x, idx, offs, all, neutral);
        }
        if sw == 2 {
            let lo_offs = b.i64_lanes(0, 1, l);
            let lo_mask = self.inside_lanes(b, c, lo_offs);
            let lo = b.masked_load(self.x, idx, lo_mask, neutral);
            let mut next = idx.to_vec();
            let step = b.const_index(l);
            let c2 = b.addi(c, step);
            next[idx.len() - 1] = c2;
            let hi_mask = self.inside_lanes(b, c2, lo_offs);
            let hi = b.masked_load(self.x, &next, hi_mask, neutral);
            let evens: Vec<i64> = (0..l).map(|t| 2 * t).collect();
            return b.shuffle(lo, hi, &evens);
        }
        let offs = b.i64_lanes(0, sw, l);
        let mask = self.inside_lanes(b, c, offs);
        if sw == 1 {
            b.masked_load(self.x, idx, mask, neutral)
        } else {
            b.gather(self.x, idx, offs, mask, neutral)
        }
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
    /// from `base` in `scratch`: row `oh` is the first `wo` of `oh·wq..`.
    pub(super) fn copy_rows(
        &self,
        b: &mut Builder<'_>,
        wq: ValueId,
        (out, channel): (ValueId, [ValueId; 2]),
        (scratch, base): (ValueId, ValueId),
    ) {
        let (ho, wo) = (self.place.outs[0], self.place.outs[1]);
        let (zero, one) = (b.const_index(0), b.const_index(1));
        let lanes = b.const_index(self.lanes);
        let whole = b.floordivsi(wo, lanes);
        let whole = b.muli(whole, lanes);
        b.scf_for(zero, ho, one, &[], |b, oh, _| {
            let src = b.muli(oh, wq);
            let src = b.addi(base, src);
            let mut dst = channel.to_vec();
            dst.extend([oh, zero]);
            b.scf_for(zero, whole, lanes, &[], |b, ow, _| {
                let at = b.addi(src, ow);
                let v = b.vload(scratch, &[at], self.lanes);
                dst[3] = ow;
                b.vstore(v, out, &dst);
                Vec::new()
            });
            let left = b.subi(wo, whole);
            let partial = b.cmp(ir::builder::Cmp::Gt, left, zero);
            b.scf_if(
                partial,
                &[],
                &mut |b| {
                    let mask = b.create_mask(left, self.lanes);
                    let at = b.addi(src, whole);
                    let v = b.vload(scratch, &[at], self.lanes);
                    dst[3] = whole;
                    b.masked_store(v, out, &dst, mask);
                    Vec::new()
                },
                None,
            );
            Vec::new()
        });
    }
}
