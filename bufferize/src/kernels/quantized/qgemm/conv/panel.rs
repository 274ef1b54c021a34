//! Packing one panel of a convolution's im2col view: for each depth quad,
//! four rows of the view over the panel's positions, interleaved into one
//! i32 word per position (or, without VNNI, into two planes of byte
//! pairs). A row that stays inside one image row (2-D,
//! in bounds) is one load, every stride-th byte taken; the rest gather
//! per lane, padding read as the zero point.

use super::{QConvCall, QConvVariant, Unit};
use crate::kernels::linalg::gemm::window_origins;
use crate::kernels::support::index::product;
use ir::builder::{Cmp, CmpI};
use ir::{Builder, Type, ValueId};

/// `v` as `n` lanes of i64.
fn splat_i64(b: &mut Builder<'_>, v: ValueId, n: i64) -> ValueId {
    let x = b.index_cast(v, Type::i64());
    b.broadcast(x, n)
}

/// Gathers the panel's im2col quads into `buf` (`[quad][NR]` words);
/// returns colsum(X') per vector when the variant needs it.
pub(super) fn pack_panel(
    b: &mut Builder<'_>,
    v: &QConvVariant,
    p: &QConvCall,
    buf: ValueId,
    at: &Unit,
) -> Vec<ValueId> {
    let (ins, outs, pads) = p.spatial();
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let s = ins.len();
    let mut strides = vec![one; s];
    for d in (0..s.saturating_sub(1)).rev() {
        strides[d] = b.muli(strides[d + 1], ins[d + 1]);
    }
    let chan = product(b, ins);
    let first_channel = {
        let c = b.const_index(v.groups * v.cg);
        let nc = b.muli(at.n, c);
        let cg = b.const_index(v.cg);
        let gc = b.muli(at.g, cg);
        b.addi(nc, gc)
    };
    let image = b.muli(first_channel, chan);
    let pos_vec = splat_i64(b, at.positions, v.vw);
    // Per vector: window origins per axis and the lanes that are positions.
    let lanes: Vec<Lanes> = (0..v.nv)
        .map(|j| {
            let origins = window_origins(b, &v.geometry, outs, pads, at.col0, j * v.vw, v.vw);
            let col = splat_i64(b, at.col0, v.vw);
            let lane = b.i64_lanes(j * v.vw, 1, v.vw);
            let col = b.addi(col, lane);
            let ok = b.cmpi(CmpI::Slt, col, pos_vec);
            let run = (outs.len() == 2).then(|| Run::new(b, v, (at, outs), j));
            let o = b.const_index(j * v.vw);
            let first = b.addi(at.col0, o);
            Lanes {
                origins,
                ok,
                run,
                first,
            }
        })
        .collect();
    let fill = Fill::new(b, v, p);
    let vzero = {
        let z = b.const_int(0, Type::i(32));
        b.broadcast(z, v.vw)
    };
    let inits = if v.col_sums {
        vec![vzero; v.nv as usize]
    } else {
        Vec::new()
    };
    let no_pads = v.pointwise().then(|| {
        let mut all = b.cmp(Cmp::Eq, zero, zero);
        for &pd in pads {
            let z = b.cmp(Cmp::Eq, pd, zero);
            all = b.andi(all, z);
        }
        all
    });
    let geo = PanelGeometry {
        positions: at.positions,
        no_pads,
        ins,
        pads,
        strides: &strides,
        chan,
        image,
        lanes: &lanes,
    };
    let quads = b.const_index(v.quads());
    let lp = b.scf_for(zero, quads, one, &inits, |b, q, sums| {
        let rows: Vec<Vec<ValueId>> = (0..4)
            .map(|t| quad_row(b, v, p, &geo, &fill, (q, t)))
            .collect();
        let nr = b.const_index(v.nr());
        let base = b.muli(q, nr);
        let mut next = sums.to_vec();
        for j in 0..v.nv as usize {
            let word = interleave(b, v, [rows[0][j], rows[1][j], rows[2][j], rows[3][j]]);
            let o = b.const_index(j as i64 * v.vw);
            let o = b.addi(base, o);
            b.vstore(word, buf, &[o]);
            if let Some(ones) = fill.ones {
                next[j] = v.dot(b, next[j], word, ones);
            }
        }
        next
    });
    b.m.results(lp).to_vec()
}

/// Where a panel's bytes come from.
struct PanelGeometry<'a> {
    /// Positions in the image (the output's plane).
    positions: ValueId,
    /// For a pointwise window, whether every begin pad is 0: positions
    /// are then the input plane's bytes in order.
    no_pads: Option<ValueId>,
    ins: &'a [ValueId],
    pads: &'a [ValueId],
    strides: &'a [ValueId],
    chan: ValueId,
    image: ValueId,
    lanes: &'a [Lanes],
}

/// One vector of a panel's positions: each lane's window origin per
/// spatial axis and whether the lane is a position at all; for a 2-D
/// image, the first lane's output row and column and whether the vector
/// stays in that row (then an in-image window row is one load).
struct Lanes {
    origins: Vec<ValueId>,
    ok: ValueId,
    run: Option<Run>,
    /// The first lane's position.
    first: ValueId,
}

struct Run {
    oh: ValueId,
    ow: ValueId,
    one_row: ValueId,
}

impl Run {
    fn new(b: &mut Builder<'_>, v: &QConvVariant, (at, outs): (&Unit, &[ValueId]), j: i64) -> Run {
        let o = b.const_index(j * v.vw);
        let first = b.addi(at.col0, o);
        let oh = b.divui(first, outs[1]);
        let ow = b.remui(first, outs[1]);
        let vw = b.const_index(v.vw);
        let end = b.addi(ow, vw);
        let in_row = b.cmp(Cmp::Le, end, outs[1]);
        let last = b.addi(first, vw);
        let in_panel = b.cmp(Cmp::Le, last, at.positions);
        Run {
            oh,
            ow,
            one_row: b.andi(in_row, in_panel),
        }
    }
}

/// The raw bytes a panel holds where the image has none: the zero point
/// (padding), and past K a byte whose shifted value is 0.
struct Fill {
    pad: ValueId,
    past_k: ValueId,
    all: ValueId,
    ones: Option<ValueId>,
}

impl Fill {
    fn new(b: &mut Builder<'_>, v: &QConvVariant, p: &QConvCall) -> Fill {
        let shift = if v.x_signed() { 128 } else { 0 };
        let shift = b.const_int(shift, Type::i(32));
        let xz = b.subi(p.beta, shift);
        let xz = b.trunci(xz, v.x_elem.clone());
        let pad = b.broadcast(xz, v.vw);
        let past = b.const_int(if v.x_signed() { -128 } else { 0 }, v.x_elem.clone());
        let past_k = b.broadcast(past, v.vw);
        let n = b.const_index(v.vw);
        let all = b.create_mask(n, v.vw);
        let ones = v.col_sums.then(|| {
            let one = b.const_int(0x0101_0101, Type::i(32));
            b.broadcast(one, v.vw)
        });
        Fill {
            pad,
            past_k,
            all,
            ones,
        }
    }
}

/// Row `4q + t` of the im2col view over the panel: one byte vector per
/// vector of positions.
fn quad_row(
    b: &mut Builder<'_>,
    v: &QConvVariant,
    p: &QConvCall,
    geo: &PanelGeometry<'_>,
    fill: &Fill,
    (q, t): (ValueId, i64),
) -> Vec<ValueId> {
    let four = b.const_index(4);
    let k = b.muli(q, four);
    let tc = b.const_index(t);
    let k = b.addi(k, tc);
    let depth = b.const_index(v.k());
    let inside_k = b.cmp(Cmp::Lt, k, depth);
    let last = b.const_index(v.k() - 1);
    let k = b.minsi(k, last);
    let taps = b.const_index(v.taps());
    let c = b.divui(k, taps);
    let mut rest = b.remui(k, taps);
    let s = geo.ins.len();
    let mut tap = vec![rest; s];
    for d in (0..s).rev() {
        let kd = b.const_index(v.geometry.kernel[d]);
        let td = b.remui(rest, kd);
        rest = b.divui(rest, kd);
        let dil = b.const_index(v.geometry.dilations[d]);
        tap[d] = b.muli(td, dil);
    }
    let cterm = b.muli(c, geo.chan);
    let base = b.addi(geo.image, cterm);
    let zero_i = {
        let z = b.const_int(0, Type::i64());
        b.broadcast(z, v.vw)
    };
    let vt = Type::vector(v.vw, v.x_elem.clone());
    geo.lanes
        .iter()
        .map(|lanes| {
            let mut gathered = |b: &mut Builder<'_>| {
                let mut inb = lanes.ok;
                let mut off = zero_i;
                for (d, &t) in tap.iter().enumerate() {
                    let td = splat_i64(b, t, v.vw);
                    let pos = b.addi(lanes.origins[d], td);
                    let lo = b.cmpi(CmpI::Sge, pos, zero_i);
                    let ext = splat_i64(b, geo.ins[d], v.vw);
                    let hi = b.cmpi(CmpI::Slt, pos, ext);
                    let both = b.andi(lo, hi);
                    inb = b.andi(inb, both);
                    let sd = splat_i64(b, geo.strides[d], v.vw);
                    let term = b.muli(pos, sd);
                    off = b.addi(off, term);
                }
                // Out-of-image lanes read the image's first byte, then the pad.
                let off = b.select(inb, off, zero_i);
                let x = b.gather(p.x, &[base], off, fill.all, fill.pad);
                let x = b.select(inb, x, fill.pad);
                vec![b.select(inside_k, x, fill.past_k)]
            };
            if let Some(no_pads) = geo.no_pads {
                let ok = b.andi(no_pads, inside_k);
                let plane = |b: &mut Builder<'_>| {
                    let left = b.subi(geo.positions, lanes.first);
                    let mask = b.create_mask(left, v.vw);
                    let at = b.addi(base, lanes.first);
                    vec![b.masked_load(p.x, &[at], mask, fill.pad)]
                };
                return pick(b, ok, &vt, plane, &mut gathered);
            }
            let Some(run) = &lanes.run else {
                return gathered(b)[0];
            };
            let (ok, at) = row_load(b, v, geo, run, (&tap, inside_k));
            let row = |b: &mut Builder<'_>| {
                let at = b.addi(base, at);
                let stride = v.geometry.strides[1];
                let x = b.vload(p.x, &[at], v.vw * stride);
                if stride == 1 {
                    return vec![x];
                }
                let every: Vec<i64> = (0..v.vw).map(|i| i * stride).collect();
                vec![b.shuffle(x, x, &every)]
            };
            pick(b, ok, &vt, row, &mut gathered)
        })
        .collect()
}

/// `fast` where `ok` holds, else `slow`: one byte vector.
fn pick(
    b: &mut Builder<'_>,
    ok: ValueId,
    vt: &Type,
    mut fast: impl FnMut(&mut Builder<'_>) -> Vec<ValueId>,
    slow: &mut dyn FnMut(&mut Builder<'_>) -> Vec<ValueId>,
) -> ValueId {
    let op = b.scf_if(ok, std::slice::from_ref(vt), &mut fast, Some(slow));
    b.m.results(op)[0]
}

/// Whether the vector's window row for this tap lies inside the image
/// (rows and columns) and the depth, and its offset in the channel: then
/// its bytes are `stride · vw` consecutive ones, every stride-th taken.
fn row_load(
    b: &mut Builder<'_>,
    v: &QConvVariant,
    geo: &PanelGeometry<'_>,
    run: &Run,
    (tap, inside_k): (&[ValueId], ValueId),
) -> (ValueId, ValueId) {
    let zero = b.const_index(0);
    let (sh, sw) = (v.geometry.strides[0], v.geometry.strides[1]);
    let ih = crate::loops::scale_add(b, Some(tap[0]), run.oh, sh);
    let ih = b.subi(ih, geo.pads[0]);
    let iw = crate::loops::scale_add(b, Some(tap[1]), run.ow, sw);
    let iw = b.subi(iw, geo.pads[1]);
    let span = b.const_index(v.vw * sw);
    let end = b.addi(iw, span);
    let conds = [
        b.cmp(Cmp::Ge, ih, zero),
        b.cmp(Cmp::Lt, ih, geo.ins[0]),
        b.cmp(Cmp::Ge, iw, zero),
        b.cmp(Cmp::Le, end, geo.ins[1]),
    ];
    let mut ok = b.andi(run.one_row, inside_k);
    for c in conds {
        ok = b.andi(ok, c);
    }
    let row = b.muli(ih, geo.ins[1]);
    (ok, b.addi(row, iw))
}

/// Four byte vectors as one vector of words: byte `t` of word `i` is
/// `rows[t][i]` (for VNNI); else two planes of byte pairs, rows 0 and 1
/// then rows 2 and 3 (`micro::dot_planar`). An s8 image is shifted to
/// unsigned.
fn interleave(b: &mut Builder<'_>, v: &QConvVariant, rows: [ValueId; 4]) -> ValueId {
    let vw = v.vw;
    let pairs: Vec<i64> = (0..vw).flat_map(|i| [i, vw + i]).collect();
    let lo = b.shuffle(rows[0], rows[1], &pairs);
    let hi = b.shuffle(rows[2], rows[3], &pairs);
    let quads: Vec<i64> = match v.vnni {
        true => (0..vw)
            .flat_map(|i| [2 * i, 2 * i + 1, 2 * vw + 2 * i, 2 * vw + 2 * i + 1])
            .collect(),
        false => (0..4 * vw).collect(),
    };
    let bytes = b.shuffle(lo, hi, &quads);
    let word = b.vbitcast(bytes, vw, Type::i(32));
    if v.x_signed() {
        let flip = b.const_int(0x8080_8080_u32 as i32 as i64, Type::i(32));
        let flip = b.broadcast(flip, vw);
        b.xori(word, flip)
    } else {
        word
    }
}
