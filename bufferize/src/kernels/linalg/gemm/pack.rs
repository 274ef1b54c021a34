//! Packing: A into panels of MR rows (`ap[ir·kcur + kk·MR + r]`), B into
//! panels of NR columns (`bp[jr·kcur + kk·NR + col]`), zero beyond the
//! edges so the micro-kernel never tests bounds. A constant A (a
//! convolution's weights) is packed once, at compile time, every depth
//! block after the other (`PackedA`), and so is a constant B (a
//! MatMul's weights, `PackedB`): depth block `pc` at `pc · Npad`
//! (N rounded up to NR), the panel of columns `c..c + NR` in it at
//! `c · kcur`.
//!
//! B of a convolution is the im2col view of an image, read while
//! packing: a panel's columns are output positions whose input window
//! origins (`o·s - p` per spatial axis) are computed once per panel as
//! vectors; per kernel tap the lanes that fall in the padding are masked
//! once, and each packed row (a channel with that tap) reads its lanes
//! contiguously output row by output row (`RowReads`), gathering only
//! what spans too many rows.

use super::{BSource, Params, Variant};
use ir::builder::{Cmp, CmpI, Reduce};
use ir::{Builder, Type, ValueId};

/// The static geometry of a convolution's im2col view. Its runtime
/// arguments (`Call::b_args`) are, per spatial axis, the input extents,
/// then the output extents, then the begin pads.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConvGeometry {
    pub kernel: Vec<i64>,
    pub strides: Vec<i64>,
    pub dilations: Vec<i64>,
}

impl ConvGeometry {
    pub fn tag(&self) -> String {
        let j = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join("x");
        format!(
            "k{}s{}d{}",
            j(&self.kernel),
            j(&self.strides),
            j(&self.dilations)
        )
    }
    /// Taps per channel.
    fn taps(&self) -> i64 {
        self.kernel.iter().product()
    }
}

/// `v` as a vector of `n` lanes of `i64`.
fn splat_i64(b: &mut Builder<'_>, v: ValueId, n: i64) -> ValueId {
    let x = b.index_cast(v, Type::i64());
    b.broadcast(x, n)
}

fn const_vec(b: &mut Builder<'_>, v: i64, n: i64) -> ValueId {
    let x = b.const_int(v, Type::i64());
    b.broadcast(x, n)
}

/// The layout of `groups` row-major `[rows, k]` matrices of `width`-byte
/// elements packed as the micro-kernel reads A, each padded to `rows`
/// rounded up to MR: per group, per depth block `pc` (KC deep, `kcur` for
/// the last), per panel of MR rows, per depth step, the MR rows' elements
/// (zero past the last row). Group `g` starts at `g · padded · k`; block
/// `pc` of a group at `pc · padded`, row panel `i` of it at `i · kcur`.
/// Bytes are moved as they are: no conversion of a model's weights.
#[derive(Clone, Copy, Debug)]
pub struct PackedA {
    width: usize,
    groups: usize,
    rows: usize,
    k: usize,
    mr: usize,
    kc: usize,
    /// Rows per group, rounded up to MR.
    pub padded: usize,
}

impl PackedA {
    /// `None` for an element width other than 1, 2, 4 or 8 bytes.
    pub fn new(
        width: usize,
        (groups, rows, k): (usize, usize, usize),
        bl: super::Blocking,
    ) -> Option<Self> {
        let (mr, kc) = (bl.panel_rows.max(1) as usize, bl.kc.max(1) as usize);
        matches!(width, 1 | 2 | 4 | 8).then_some(PackedA {
            width,
            groups,
            rows,
            k,
            mr,
            kc,
            padded: rows.div_ceil(mr) * mr,
        })
    }

    /// Packed elements.
    pub fn elements(&self) -> usize {
        self.groups * self.padded * self.k
    }

    /// Appends `src` packed to `out`.
    pub fn pack(&self, src: &[u8], out: &mut Vec<u8>) {
        let at = out.len();
        out.resize(at + self.elements() * self.width, 0);
        let dst = out.get_mut(at..).unwrap_or_default();
        // Elements of a known width copy as fixed-size arrays (no memcpy
        // call per element).
        match self.width {
            1 => pack_elements::<1>(src, dst, self),
            2 => pack_elements::<2>(src, dst, self),
            4 => pack_elements::<4>(src, dst, self),
            _ => pack_elements::<8>(src, dst, self),
        }
    }
}

fn pack_elements<const W: usize>(src: &[u8], out: &mut [u8], p: &PackedA) {
    let (rows, k, mr, padded) = (p.rows, p.k, p.mr, p.padded);
    for g in 0..p.groups {
        let (from, to) = (g * rows * k, g * padded * k);
        for pc in (0..k).step_by(p.kc) {
            let kcur = p.kc.min(k - pc);
            // Depth steps outer: the panel is written front to back while
            // its MR source rows are read as MR streams.
            for i in (0..rows).step_by(mr) {
                let panel = to + pc * padded + i * kcur;
                for kk in 0..kcur {
                    for r in 0..mr.min(rows - i) {
                        let at = (panel + kk * mr + r) * W;
                        let s = (from + (i + r) * k + pc + kk) * W;
                        let x: Option<[u8; W]> = src.get(s..s + W).and_then(|x| x.try_into().ok());
                        if let (Some(o), Some(x)) = (out.get_mut(at..at + W), x) {
                            o.copy_from_slice(&x);
                        }
                    }
                }
            }
        }
    }
}

/// The layout of a row-major `[k, n]` matrix of `width`-byte elements
/// packed as the micro-kernel reads B: per depth block `pc` (KC deep,
/// `kcur` for the last) at `pc · npad`, per panel of NR columns at
/// `col · kcur` in it, per depth step NR elements (zero past column n).
/// The source may also be stored transposed, `[n, k]` (Gemm's transB).
#[derive(Clone, Copy, Debug)]
pub struct PackedB {
    width: usize,
    transposed: bool,
    k: usize,
    n: usize,
    nr: usize,
    kc: usize,
    /// Columns, rounded up to NR.
    pub npad: usize,
}

impl PackedB {
    /// `None` for an element width other than 1, 2, 4 or 8 bytes.
    pub fn new(width: usize, (k, n): (usize, usize), bl: super::Blocking) -> Option<Self> {
        let (nr, kc) = (bl.panel_cols.max(1) as usize, bl.kc.max(1) as usize);
        matches!(width, 1 | 2 | 4 | 8).then_some(PackedB {
            width,
            transposed: false,
            k,
            n,
            nr,
            kc,
            npad: n.div_ceil(nr) * nr,
        })
    }

    /// The same layout, from a source stored `[n, k]`.
    pub fn with_transposed_source(self) -> Self {
        PackedB {
            transposed: true,
            ..self
        }
    }

    /// Packed elements.
    pub fn elements(&self) -> usize {
        self.k * self.npad
    }

    /// Appends `src` packed to `out`.
    pub fn pack(&self, src: &[u8], out: &mut Vec<u8>) {
        let at = out.len();
        out.resize(at + self.elements() * self.width, 0);
        let dst = out.get_mut(at..).unwrap_or_default();
        let shape = (self.k, self.n, self.nr, self.kc, self.npad);
        let t = self.transposed;
        match self.width {
            1 => pack_panels::<1>(src, dst, shape, t),
            2 => pack_panels::<2>(src, dst, shape, t),
            4 => pack_panels::<4>(src, dst, shape, t),
            _ => pack_panels::<8>(src, dst, shape, t),
        }
    }
}

/// Each depth step of each NR-column panel: from a row of `[k, n]` in one
/// copy, or, `transposed`, column by column from the rows of `[n, k]`.
fn pack_panels<const W: usize>(
    src: &[u8],
    out: &mut [u8],
    (k, n, nr, kc, npad): (usize, usize, usize, usize, usize),
    transposed: bool,
) {
    let mut copy = |from: usize, at: usize, len: usize| {
        if let (Some(o), Some(x)) = (out.get_mut(at..at + len), src.get(from..from + len)) {
            o.copy_from_slice(x);
        }
    };
    for pc in (0..k).step_by(kc) {
        let kcur = kc.min(k - pc);
        for col in (0..n).step_by(nr) {
            let (panel, cols) = (pc * npad + col * kcur, nr.min(n - col));
            for kk in 0..kcur {
                let at = (panel + kk * nr) * W;
                if !transposed {
                    copy(((pc + kk) * n + col) * W, at, cols * W);
                    continue;
                }
                for j in 0..cols {
                    copy(((col + j) * k + pc + kk) * W, at + j * W, W);
                }
            }
        }
    }
}

/// Packs rows `ic..ic+mcur`, depth `pc..pc+kcur` of A.
#[allow(clippy::too_many_arguments)]
pub(super) fn pack_a(
    b: &mut Builder<'_>,
    v: &Variant,
    p: &Params,
    ap: ValueId,
    ic: ValueId,
    mcur: ValueId,
    pc: ValueId,
    kcur: ValueId,
) {
    let bl = v.blocking;
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let mr = b.const_index(bl.panel_rows);
    // A stored transposed (Gemm's transA, a MatMul reading through a
    // deferred Transpose): a panel's rows are adjacent, a vector per depth
    // step.
    let adjacent = b.cmp(Cmp::Eq, p.a_rs, one);
    b.scf_for(zero, mcur, mr, &[], |b, ir, _| {
        let rest = b.subi(mcur, ir);
        let valid = b.minsi(rest, mr);
        let row0 = b.addi(ic, ir);
        let panel = b.muli(ir, kcur);
        let rows = (row0, valid, panel);
        b.scf_if(
            adjacent,
            &[],
            &mut |b| {
                pack_a_adjacent(b, v, p, ap, rows, (pc, kcur));
                Vec::new()
            },
            Some(&mut |b| {
                pack_a_rows(b, v, p, ap, rows, (pc, kcur));
                Vec::new()
            }),
        );
        Vec::new()
    });
}

/// One MR-row panel of A, element by element.
fn pack_a_rows(
    b: &mut Builder<'_>,
    v: &Variant,
    p: &Params,
    ap: ValueId,
    (row0, valid, panel): (ValueId, ValueId, ValueId),
    (pc, kcur): (ValueId, ValueId),
) {
    let bl = v.blocking;
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let mr = b.const_index(bl.panel_rows);
    let last = b.subi(valid, one);
    let fzero = b.zero(&v.elem);
    b.scf_for(zero, kcur, one, &[], |b, kk, _| {
        let k = b.addi(pc, kk);
        let kterm = b.muli(k, p.a_cs);
        let kbase = b.addi(p.a_off, kterm);
        let dst0 = b.muli(kk, mr);
        let dst0 = b.addi(panel, dst0);
        for r in 0..bl.panel_rows {
            let rc = b.const_index(r);
            // Rows past the edge read the last row, then store 0.
            let rr = b.minsi(rc, last);
            let row = b.addi(row0, rr);
            let rterm = b.muli(row, p.a_rs);
            let idx = b.addi(kbase, rterm);
            let x = b.load(p.a, &[idx]);
            let inside = b.cmp(Cmp::Lt, rc, valid);
            let x = b.select(inside, x, fzero);
            let dst = b.addi(dst0, rc);
            b.store(x, ap, &[dst]);
        }
        Vec::new()
    });
}

/// One MR-row panel of A whose rows are adjacent (`a_rs` 1): a masked
/// vector of MR elements per depth step, zero past the last row.
fn pack_a_adjacent(
    b: &mut Builder<'_>,
    v: &Variant,
    p: &Params,
    ap: ValueId,
    (row0, valid, panel): (ValueId, ValueId, ValueId),
    (pc, kcur): (ValueId, ValueId),
) {
    let rows = v.blocking.panel_rows;
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let mr = b.const_index(rows);
    let mask = b.create_mask(valid, rows);
    let vzero = {
        let z = b.zero(&v.elem);
        b.broadcast(z, rows)
    };
    let first = b.addi(p.a_off, row0);
    b.scf_for(zero, kcur, one, &[], |b, kk, _| {
        let k = b.addi(pc, kk);
        let kterm = b.muli(k, p.a_cs);
        let at = b.addi(first, kterm);
        let x = b.masked_load(p.a, &[at], mask, vzero);
        let dst = b.muli(kk, mr);
        let dst = b.addi(panel, dst);
        b.vstore(x, ap, &[dst]);
        Vec::new()
    });
}

/// Packs depth `pc..pc+kcur`, columns `jc..jc+ncur` of B.
#[allow(clippy::too_many_arguments)]
pub(super) fn pack_b(
    b: &mut Builder<'_>,
    v: &Variant,
    p: &Params,
    bp: ValueId,
    pc: ValueId,
    kcur: ValueId,
    jc: ValueId,
    ncur: ValueId,
) {
    let bl = v.blocking;
    let zero = b.const_index(0);
    let nr = b.const_index(bl.panel_cols);
    b.scf_for(zero, ncur, nr, &[], |b, jr, _| {
        let rest = b.subi(ncur, jr);
        let valid = b.minsi(rest, nr);
        let col0 = b.addi(jc, jr);
        match &v.b {
            BSource::Matrix { unit_n } => {
                matrix_panel(b, v, p, bp, pc, kcur, jr, col0, valid, *unit_n);
            }
            BSource::Conv(g) => conv_panel(b, v, p, g, bp, pc, kcur, jr, col0, valid),
        }
        Vec::new()
    });
}

/// Masks of the panel's vectors: lanes below `valid` columns.
fn lane_masks(b: &mut Builder<'_>, bl: super::Blocking, valid: ValueId) -> Vec<ValueId> {
    (0..bl.panel_vectors())
        .map(|k| {
            let off = b.const_index(k * bl.vw);
            let n = b.subi(valid, off);
            b.create_mask(n, bl.vw)
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn matrix_panel(
    b: &mut Builder<'_>,
    v: &Variant,
    p: &Params,
    bp: ValueId,
    pc: ValueId,
    kcur: ValueId,
    jr: ValueId,
    col0: ValueId,
    valid: ValueId,
    unit_n: bool,
) {
    let bl = v.blocking;
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let nr = b.const_index(bl.panel_cols);
    let (b_rs, b_cs) = (p.b_args[0], p.b_args[1]);
    let masks = lane_masks(b, bl, valid);
    let vzero = {
        let z = b.zero(&v.elem);
        b.broadcast(z, bl.vw)
    };
    // Lane offsets of a strided row: (col) · cs per vector.
    let strided: Vec<ValueId> = if unit_n {
        Vec::new()
    } else {
        let cs = splat_i64(b, b_cs, bl.vw);
        (0..bl.panel_vectors())
            .map(|k| {
                let lanes = b.i64_lanes(k * bl.vw, 1, bl.vw);
                b.muli(lanes, cs)
            })
            .collect()
    };
    let panel = b.muli(jr, kcur);
    let cterm = b.muli(col0, b_cs);
    let cbase = b.addi(p.b_off, cterm);
    b.scf_for(zero, kcur, one, &[], |b, kk, _| {
        let k = b.addi(pc, kk);
        let rterm = b.muli(k, b_rs);
        let base = b.addi(cbase, rterm);
        let dst0 = b.muli(kk, nr);
        let dst0 = b.addi(panel, dst0);
        for k in 0..bl.panel_vectors() {
            let off = b.const_index(k * bl.vw);
            let x = if unit_n {
                let at = b.addi(base, off);
                b.masked_load(p.b, &[at], masks[k as usize], vzero)
            } else {
                b.gather(p.b, &[base], strided[k as usize], masks[k as usize], vzero)
            };
            let dst = b.addi(dst0, off);
            b.vstore(x, bp, &[dst]);
        }
        Vec::new()
    });
}

/// One panel of a convolution's im2col view. `b_args` holds the input
/// extents, the output extents and the begin pads of each spatial axis.
#[allow(clippy::too_many_arguments)]
fn conv_panel(
    b: &mut Builder<'_>,
    v: &Variant,
    p: &Params,
    g: &ConvGeometry,
    bp: ValueId,
    pc: ValueId,
    kcur: ValueId,
    jr: ValueId,
    col0: ValueId,
    valid: ValueId,
) {
    let bl = v.blocking;
    let s = g.kernel.len();
    let (ins, rest) = p.b_args.split_at(s);
    let (outs, pads) = rest.split_at(s);
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let nr = b.const_index(bl.panel_cols);
    let masks = lane_masks(b, bl, valid);
    // Per vector: each axis' window origin `o·s - p` and the lane mask.
    let origins: Vec<Vec<ValueId>> = (0..bl.panel_vectors())
        .map(|k| window_origins(b, g, outs, pads, col0, k * bl.vw, bl.vw))
        .collect();
    let in_vecs: Vec<ValueId> = ins.iter().map(|&d| splat_i64(b, d, bl.vw)).collect();
    // Element strides of the input's spatial axes, and one channel's size.
    let mut strides = vec![one; s];
    for d in (0..s.saturating_sub(1)).rev() {
        strides[d] = b.muli(strides[d + 1], ins[d + 1]);
    }
    let chan = b.muli(strides[0], ins[0]);
    // Per vector, the origins' offset in a channel: a row then adds its
    // tap's offset, one scalar (the multiplies leave the depth loop).
    let origin_offsets: Vec<ValueId> = origins
        .iter()
        .map(|o| {
            let mut off = const_vec(b, 0, bl.vw);
            for (&od, &sd) in o.iter().zip(&strides) {
                let sd = splat_i64(b, sd, bl.vw);
                let term = b.muli(od, sd);
                off = b.addi(off, term);
            }
            off
        })
        .collect();
    let rows = RowReads::new(b, g, bl, (col0, valid), outs, &origin_offsets);
    let panel = b.muli(jr, kcur);
    // Depth row k is channel k / taps, tap k % taps. Taps outer, channels
    // inner: a tap's padding masks and offsets serve all the block's
    // channels (per row, they cost more than the loads).
    let taps = b.const_index(g.taps());
    let below = b.subi(taps, one);
    let first = b.addi(pc, below);
    let end = b.addi(first, kcur);
    b.scf_for(zero, taps, one, &[], |b, t, _| {
        let (tap, tap_offset) = tap_offsets(b, g, t, &strides);
        let tap_vec = splat_i64(b, tap_offset, bl.vw);
        let tap_vecs: Vec<ValueId> = tap.iter().map(|&td| splat_i64(b, td, bl.vw)).collect();
        // Per vector: lanes in the image along every axis (0 <= pos <
        // extent as one unsigned compare: a position in the padding
        // before is negative, so above any extent unsigned), and their
        // offsets in a channel.
        let lanes: Vec<(ValueId, ValueId)> = (0..bl.panel_vectors() as usize)
            .map(|k| {
                let mut mask = masks[k];
                for d in 0..s {
                    let pos = b.addi(origins[k][d], tap_vecs[d]);
                    let inside = b.cmpi(CmpI::Ult, pos, in_vecs[d]);
                    mask = b.andi(mask, inside);
                }
                (mask, b.addi(origin_offsets[k], tap_vec))
            })
            .collect();
        // The block's channels with this tap: pc <= c·taps + t < pc + kcur.
        let from = b.subi(first, t);
        let from = b.divui(from, taps);
        let to = b.subi(end, t);
        let to = b.divui(to, taps);
        b.scf_for(from, to, one, &[], |b, c, _| {
            let row = b.muli(c, taps);
            let row = b.addi(row, t);
            let kk = b.subi(row, pc);
            let cterm = b.muli(c, chan);
            let cbase = b.addi(p.b_off, cterm);
            let dst0 = b.muli(kk, nr);
            let dst0 = b.addi(panel, dst0);
            let at = b.addi(cbase, tap_offset);
            pack_row(b, (p.b, cbase, at), &rows, &lanes, (bp, dst0), valid);
            Vec::new()
        });
        Vec::new()
    });
}

/// One depth row of a panel into `bp` at `dst`: vector `k` of the
/// channel at `cbase` (the tap's elements from `at`) under its mask,
/// gathered at its offsets if `rows` cannot read it.
fn pack_row(
    b: &mut Builder<'_>,
    (m, cbase, at): (ValueId, ValueId, ValueId),
    rows: &RowReads,
    lanes: &[(ValueId, ValueId)],
    (bp, dst): (ValueId, ValueId),
    valid: ValueId,
) {
    let vw = rows.vw;
    let vzero = {
        let elem = b.m.value_type(m).element_type().clone();
        let z = b.zero(&elem);
        b.broadcast(z, vw)
    };
    for (k, &(mask, off)) in lanes.iter().enumerate() {
        let lane0 = b.const_index(k as i64 * vw);
        let mut pack = |b: &mut Builder<'_>| {
            let gather = |b: &mut Builder<'_>| b.gather(m, &[cbase], off, mask, vzero);
            let x = rows.read(b, k, (m, at), mask, vzero, &gather);
            let dst = b.addi(dst, lane0);
            b.vstore(x, bp, &[dst]);
            Vec::new()
        };
        // The micro-kernels read a panel's vectors up to its last column
        // (a 7×7 image's second panel is one column).
        if k == 0 {
            pack(b);
        } else {
            let used = b.cmp(Cmp::Lt, lane0, valid);
            b.scf_if(used, &[], &mut pack, None);
        }
    }
}

/// Tap `t`'s offset along each axis (dilated), and in elements of the
/// input.
fn tap_offsets(
    b: &mut Builder<'_>,
    g: &ConvGeometry,
    t: ValueId,
    strides: &[ValueId],
) -> (Vec<ValueId>, ValueId) {
    let s = g.kernel.len();
    let zero = b.const_index(0);
    let mut t = t;
    let mut tap = vec![zero; s];
    for d in (0..s).rev() {
        let kd = b.const_index(g.kernel[d]);
        let td = b.remui(t, kd);
        t = b.divui(t, kd);
        let dil = b.const_index(g.dilations[d]);
        tap[d] = b.muli(td, dil);
    }
    let mut offset = zero;
    for (&td, &sd) in tap.iter().zip(strides) {
        let term = b.muli(td, sd);
        offset = b.addi(offset, term);
    }
    (tap, offset)
}

/// Row pieces a panel vector is read in before it gathers: a 16-lane
/// vector over a 7-wide output spans up to four rows.
const MAX_PIECES: usize = 4;

/// Contiguous reads for the panel vectors: within one output row, lane
/// `i` reads `the row's first lane's element + i · stride`, which for a
/// stride of 1 is one masked load and for 2 two and a shuffle, instead of
/// a gather (a gather of 16 lanes cost as much as 16 FMA steps; most of
/// a 7×7 stride-2 stem's time went to them). A vector that wraps to the
/// next rows is read row piece by row piece (grouped 3×3 convolutions on
/// 7×7 and 14×14 images spent half their time gathering); other strides,
/// and vectors over more than [`MAX_PIECES`] rows, gather.
struct RowReads {
    vectors: Vec<VectorRows>,
    stride: i64,
    vw: i64,
}

/// One panel vector's row pieces.
struct VectorRows {
    /// Output rows its valid lanes span.
    rows: ValueId,
    /// Per piece: its lanes, and where lane 0 would read (in a channel,
    /// before the tap's offset) were the whole vector in the piece's row.
    pieces: Vec<(ValueId, ValueId)>,
}

impl RowReads {
    fn new(
        b: &mut Builder<'_>,
        g: &ConvGeometry,
        bl: super::Blocking,
        (col0, valid): (ValueId, ValueId),
        outs: &[ValueId],
        origin_offsets: &[ValueId],
    ) -> Self {
        let stride = g.strides.last().copied().unwrap_or(0);
        let (vw, zero) = (bl.vw, b.const_index(0));
        let mut vectors = Vec::new();
        if let (1 | 2, Some(&width)) = (stride, outs.last()) {
            // Within a row, lane i's offset is lane 0's plus i · stride.
            let steps = b.i64_lanes(0, stride, vw);
            for (k, &offsets) in origin_offsets.iter().enumerate() {
                let first = b.const_index(k as i64 * vw);
                let col = b.addi(col0, first);
                // A panel has columns, so the output row is not empty.
                let x = b.remui(col, width);
                let left = b.subi(valid, first);
                let left = b.maxsi(left, zero);
                let lanes = b.const_index(vw);
                let lanes = b.minsi(left, lanes);
                let end = b.addi(x, lanes);
                let rows = b.ceildivsi(end, width);
                let starts = b.subi(offsets, steps);
                let pieces = row_pieces(b, (starts, vw), (x, width), rows);
                vectors.push(VectorRows { rows, pieces });
            }
        }
        RowReads {
            vectors,
            stride,
            vw,
        }
    }

    /// Vector `k`'s lanes: from `m` at `at` (the channel's and tap's
    /// offset) plus each row piece's start, or `gather`.
    fn read(
        &self,
        b: &mut Builder<'_>,
        k: usize,
        (m, at): (ValueId, ValueId),
        mask: ValueId,
        pass: ValueId,
        gather: &dyn Fn(&mut Builder<'_>) -> ValueId,
    ) -> ValueId {
        match self.vectors.get(k) {
            Some(v) => self.by_rows(b, v, &[1, 2, MAX_PIECES], (m, at), (mask, pass), gather),
            None => gather(b),
        }
    }

    /// The read of as few pieces as the vector's rows need, of the
    /// `counts` (ascending), else `gather`.
    fn by_rows(
        &self,
        b: &mut Builder<'_>,
        v: &VectorRows,
        counts: &[usize],
        (m, at): (ValueId, ValueId),
        (mask, pass): (ValueId, ValueId),
        gather: &dyn Fn(&mut Builder<'_>) -> ValueId,
    ) -> ValueId {
        let Some((&n, rest)) = counts.split_first() else {
            return gather(b);
        };
        let ty = b.m.value_type(pass).clone();
        let most = b.const_index(n as i64);
        let fits = b.cmp(Cmp::Le, v.rows, most);
        let pick = b.scf_if(
            fits,
            &[ty],
            &mut |b| vec![self.pieces(b, &v.pieces[..n], (m, at), mask, pass)],
            Some(&mut |b| vec![self.by_rows(b, v, rest, (m, at), (mask, pass), gather)]),
        );
        b.m.results(pick)[0]
    }

    /// The lanes of `pieces`, each read contiguously from its start.
    fn pieces(
        &self,
        b: &mut Builder<'_>,
        pieces: &[(ValueId, ValueId)],
        (m, at): (ValueId, ValueId),
        mask: ValueId,
        pass: ValueId,
    ) -> ValueId {
        if let [(_, start)] = pieces {
            let at = b.addi(at, *start);
            return self.contiguous(b, m, at, mask, pass);
        }
        let mut acc = pass;
        for &(lanes, start) in pieces {
            let at = b.addi(at, start);
            let on = b.andi(mask, lanes);
            acc = match self.stride {
                // A masked load keeps the other lanes as they were.
                1 => b.masked_load(m, &[at], on, acc),
                _ => {
                    let x = self.contiguous(b, m, at, on, pass);
                    b.select(lanes, x, acc)
                }
            };
        }
        acc
    }

    fn contiguous(
        &self,
        b: &mut Builder<'_>,
        m: ValueId,
        at: ValueId,
        mask: ValueId,
        pass: ValueId,
    ) -> ValueId {
        let vw = self.vw;
        if self.stride == 1 {
            return b.masked_load(m, &[at], mask, pass);
        }
        // Lane i is element 2i of two vectors: its mask bit moves there,
        // the odd elements are not read.
        let zero = b.const_index(0);
        let none = b.create_mask(zero, vw);
        let spread = |half: i64| -> Vec<i64> {
            (0..vw)
                .map(|j| {
                    if j % 2 == 0 {
                        half * vw / 2 + j / 2
                    } else {
                        vw
                    }
                })
                .collect()
        };
        let (lo_mask, hi_mask) = (spread(0), spread(1));
        let lo_mask = b.shuffle(mask, none, &lo_mask);
        let hi_mask = b.shuffle(mask, none, &hi_mask);
        let lo = b.masked_load(m, &[at], lo_mask, pass);
        let next = b.const_index(vw);
        let next = b.addi(at, next);
        let hi = b.masked_load(m, &[next], hi_mask, pass);
        let evens: Vec<i64> = (0..vw).map(|i| 2 * i).collect();
        b.shuffle(lo, hi, &evens)
    }
}

/// The first `MAX_PIECES` output rows of a vector whose lane 0 lies `x`
/// into a row of `width`: row `r` has lanes `r·width - x ..
/// (r+1)·width - x`, and its start is any of its lanes' `starts` (all
/// equal within a row). Rows past `rows` take row 0's start, so that no
/// address lies beyond the image.
fn row_pieces(
    b: &mut Builder<'_>,
    (starts, vw): (ValueId, i64),
    (x, width): (ValueId, ValueId),
    rows: ValueId,
) -> Vec<(ValueId, ValueId)> {
    let lane0 = b.extract(starts, 0);
    let none = const_vec(b, i64::MIN, vw);
    let mut below = {
        let zero = b.const_index(0);
        b.create_mask(zero, vw)
    };
    let mut end = b.subi(width, x);
    let mut pieces = Vec::new();
    for r in 0..MAX_PIECES {
        let upto = b.create_mask(end, vw);
        let lanes = b.xori(upto, below);
        let start = match r {
            0 => lane0,
            _ => {
                let mine = b.select(lanes, starts, none);
                let start = b.reduction(Reduce::MaxSi, mine);
                let r = b.const_index(r as i64);
                let real = b.cmp(Cmp::Lt, r, rows);
                b.select(real, start, lane0)
            }
        };
        pieces.push((lanes, b.index_cast(start, Type::Index)));
        below = upto;
        end = b.addi(end, width);
    }
    pieces
}

/// The window origins `o_d · s_d - p_d` of the output positions `col0 +
/// first + lane` (one vector per spatial axis), decomposing the flat
/// position over the output extents `outs`.
pub(in crate::kernels) fn window_origins(
    b: &mut Builder<'_>,
    g: &ConvGeometry,
    outs: &[ValueId],
    pads: &[ValueId],
    col0: ValueId,
    first: i64,
    vw: i64,
) -> Vec<ValueId> {
    let lanes = b.i64_lanes(first, 1, vw);
    let base = splat_i64(b, col0, vw);
    let mut n = b.addi(base, lanes);
    let s = g.kernel.len();
    let mut out = vec![n; s];
    for d in (0..s).rev() {
        let ext = splat_i64(b, outs[d], vw);
        let od = b.remsi(n, ext);
        n = b.divsi(n, ext);
        let st = const_vec(b, g.strides[d], vw);
        let pd = splat_i64(b, pads[d], vw);
        let scaled = b.muli(od, st);
        out[d] = b.subi(scaled, pd);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Element `(row, kk)` of group `g` lands where the documented layout
    /// puts it, rows past the last are zero, for 2- and 4-byte elements.
    /// Packing `[n, k]` as transposed gives what packing its transpose,
    /// `[k, n]`, gives (ragged depth blocks and panels, 4 and 8 bytes).
    #[test]
    fn packed_b_from_a_transposed_source() {
        let bl = super::super::Blocking {
            vw: 4,
            mr: 3,
            nv: 1,
            panel_rows: 3,
            panel_cols: 4,
            kc: 3,
            mc: 6,
            nc: 8,
            compact: false,
        };
        let (k, n) = (7usize, 10usize);
        for width in [4usize, 8] {
            let bytes = |e: usize| (e as u64 + 1).to_le_bytes()[..width].to_vec();
            let kn: Vec<u8> = (0..k * n).flat_map(bytes).collect();
            let nk: Vec<u8> = (0..n * k)
                .flat_map(|i| bytes((i % k) * n + i / k))
                .collect();
            let layout = PackedB::new(width, (k, n), bl).unwrap();
            let (mut a, mut b) = (Vec::new(), Vec::new());
            layout.pack(&kn, &mut a);
            layout.with_transposed_source().pack(&nk, &mut b);
            assert_eq!(a, b, "width {width}");
            assert_eq!(a.len(), k * 12 * width, "N padded to 3 panels");
        }
    }

    #[test]
    fn packed_constant_follows_the_panel_layout() {
        let (groups, rows, k) = (2usize, 7usize, 5usize);
        let bl = super::super::Blocking {
            vw: 4,
            mr: 3,
            nv: 1,
            panel_rows: 3,
            panel_cols: 4,
            kc: 2,
            mc: 6,
            nc: 4,
            compact: false,
        };
        for width in [2usize, 4] {
            let n = groups * rows * k;
            // Element e's bytes are e (little-endian), so each is unique.
            let src: Vec<u8> = (0..n)
                .flat_map(|e| (e as u32).to_le_bytes()[..width].to_vec())
                .collect();
            let layout = PackedA::new(width, (groups, rows, k), bl).unwrap();
            let mut out = vec![7u8];
            layout.pack(&src, &mut out);
            // Appended after what `out` held.
            let out = &out[1..];
            let padded = layout.padded;
            assert_eq!((padded, out.len()), (9, groups * 9 * k * width));
            let read = |at: usize| {
                let mut b = [0u8; 4];
                b[..width].copy_from_slice(&out[at * width..(at + 1) * width]);
                u32::from_le_bytes(b) as usize
            };
            for g in 0..groups {
                for pc in (0..k).step_by(2) {
                    let kcur = 2.min(k - pc);
                    for row in 0..padded {
                        for kk in 0..kcur {
                            let (i, r) = (row / 3 * 3, row % 3);
                            let at = g * padded * k + pc * padded + i * kcur + kk * 3 + r;
                            let want = match row < rows {
                                true => g * rows * k + row * k + pc + kk,
                                false => 0,
                            };
                            assert_eq!(read(at), want, "g {g} row {row} depth {}", pc + kk);
                        }
                    }
                }
            }
        }
        assert!(PackedA::new(3, (1, 1, 1), bl).is_none());
    }

    /// Element `(kk, col)` of B lands in its depth block's column panel,
    /// zero past the last column.
    #[test]
    fn packed_constant_b_follows_the_panel_layout() {
        let (k, n) = (5usize, 10usize);
        let bl = super::super::Blocking {
            vw: 2,
            mr: 2,
            nv: 2,
            panel_rows: 2,
            panel_cols: 4,
            kc: 2,
            mc: 4,
            nc: 8,
            compact: false,
        };
        let src: Vec<u8> = (0..k * n)
            .flat_map(|e| (e as u32 + 1).to_le_bytes())
            .collect();
        let layout = PackedB::new(4, (k, n), bl).unwrap();
        let mut out = Vec::new();
        layout.pack(&src, &mut out);
        let npad = layout.npad;
        assert_eq!((npad, out.len()), (12, k * 12 * 4));
        let read = |at: usize| u32::from_le_bytes(out[at * 4..at * 4 + 4].try_into().unwrap());
        for pc in (0..k).step_by(2) {
            let kcur = 2.min(k - pc);
            for kk in 0..kcur {
                for col in 0..npad {
                    let at = pc * npad + (col / 4 * 4) * kcur + kk * 4 + col % 4;
                    let want = match col < n {
                        true => ((pc + kk) * n + col) as u32 + 1,
                        false => 0,
                    };
                    assert_eq!(read(at), want, "depth {} column {col}", pc + kk);
                }
            }
        }
    }
}
