//! 2-D windows (depthwise Conv, MaxPool, AveragePool) over padded
//! polyphase planes.
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
//! copied out to the result, an average's divided by its taps counted
//! per row and per column. The copy into the planes is `fill`.
//!
//! Why: a mobile net's late layers have rows of 7 or 14 outputs, a vector
//! of 16 left most lanes idle, and a stride-2 window needed a gather per
//! tap; the copy reads the input once, with plain or deinterleaving
//! (stride 2) vector loads.

mod fill;

use super::{Channel, Reduction, Sliding};
use crate::kernels::convolution::window::{Placement, Spatial};
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
            // Only convs fuse an activation: an average divides at copy-out.
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
