//! Resize of NCHW f32 images whose batch and channel dims map to
//! themselves (every exporter's upsampling), linear or nearest: the
//! columns' taps are a table made once per call; per output row the two
//! input rows are blended into a row buffer (vectors along the input
//! width), and each output vector gathers its two taps from that row.
//! The element-by-element nest computed every dim's coordinates and taps
//! per element in f64 (16 loads for a bilinear 4-D element): 1.6 ms of
//! LRASPP's 7.3 upsampling 21 classes to 224×224.

use super::{source_coord, taps, Cfg};
use crate::kernels::{
    linalg::gemm, support::call_per_level, support::kernel_symbol, support::vector_lanes,
};
use crate::loops::{loop_nest_by_work, Bounds, PARALLEL_MIN_WORK};
use ir::builder::CmpF;
use ir::{Builder, Type, ValueId};

/// Whether the row kernel computes `cfg` on a rank-`rank` `elem` input
/// (when the batch and channel dims keep their sizes, [`lead_kept`]).
/// Coordinates of an unscaled dim are then the output index itself:
/// not under `tf_half_pixel_for_nn` (half a pixel off) or
/// `tf_crop_and_resize` (the roi's).
pub(super) fn eligible(cfg: &Cfg, rank: usize, elem: &Type) -> bool {
    let coord = !matches!(
        cfg.coord.as_str(),
        "tf_half_pixel_for_nn" | "tf_crop_and_resize"
    );
    let mode = matches!(cfg.mode.as_str(), "linear" | "nearest");
    rank == 4 && *elem == Type::f32() && coord && mode
}

/// At run time: dims 0 and 1 keep their size at scale 1.
pub(super) fn lead_kept(
    b: &mut Builder<'_>,
    scale: &[ValueId],
    dx: &[ValueId],
    out: &[ValueId],
) -> ValueId {
    let one = b.constant(&Type::f64(), 1.0);
    let mut kept = b.const_bool(true);
    for d in 0..2 {
        let unscaled = b.cmpf(CmpF::Oeq, scale[d], one);
        let same = b.cmp(ir::builder::Cmp::Eq, dx[d], out[d]);
        kept = b.andi(kept, unscaled);
        kept = b.andi(kept, same);
    }
    kept
}

/// The runtime operands: the flat input and output, then N, C, the
/// input's and output's H and W, and per spatial dim the scale and the
/// output length the coordinate transform sees.
pub(super) struct Operands {
    pub x: ValueId,
    pub out: ValueId,
    pub dims: [ValueId; 6],
    pub scales: [ValueId; 2],
    pub lens: [ValueId; 2],
}

/// Resizes through the row kernel: a function per x86-64 level in the
/// portable build (gathers and masked loads need AVX2 or AVX-512).
pub(super) fn resize(cx: &crate::convert::Lowering, b: &mut Builder<'_>, cfg: &Cfg, o: &Operands) {
    let mut args = vec![o.x, o.out];
    args.extend(o.dims);
    args.extend(o.scales);
    args.extend(o.lens);
    if cx.gemm != gemm::Isa::X86Levels {
        let lanes = vector_lanes(&Type::f32(), cx.vector_bits).max(1);
        return body(b, cfg, &args, lanes);
    }
    let key = format!("{} {} {}", cfg.mode, cfg.coord, cfg.nearest);
    let name = kernel_symbol(b, "resize_rows", &key, &args);
    let levels = ir::dialects::func::X86_LEVELS;
    call_per_level(b, (&name, &args), &levels, &|fb, params, l| {
        let lanes = vector_lanes(&Type::f32(), l.vector_bits).max(1);
        body(fb, cfg, &params, lanes);
    });
}

/// Taps of one spatial dim at output index `i`: indices and weights (f32),
/// the second tap's weight 0 for nearest.
fn dim_taps(
    b: &mut Builder<'_>,
    cfg: &Cfg,
    i: ValueId,
    (scale, len): (ValueId, ValueId),
    (in_len, out_len): (ValueId, ValueId),
) -> [(ValueId, ValueId); 2] {
    let at = source_coord(b, cfg, i, scale, in_len, (len, out_len), None);
    let t = taps(b, cfg, at, in_len);
    let f32 = Type::f32();
    let first = (t[0].idx, b.truncf(t[0].w, f32.clone()));
    let second = match t.get(1) {
        Some(s) => (s.idx, b.truncf(s.w, f32)),
        None => (first.0, b.zero(&f32)),
    };
    [first, second]
}

fn body(b: &mut Builder<'_>, cfg: &Cfg, p: &[ValueId], lanes: i64) {
    let [x, out, n, c, hin, win, hout, wout, sh, sw, lh, lw] = p else {
        return;
    };
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let linear = cfg.mode == "linear";
    // The columns' taps: indices (i32, gather offsets) and weights.
    let alloc = |b: &mut Builder<'_>, elem: Type, len: ValueId| {
        b.alloc_aligned(&Type::memref(vec![ir::DYN], elem), &[len], 64)
    };
    let cols: Vec<(ValueId, ValueId)> = (0..2)
        .map(|_| (alloc(b, Type::i(32), *wout), alloc(b, Type::f32(), *wout)))
        .collect();
    b.scf_for(zero, *wout, one, &[], |b, ox, _| {
        let taps = dim_taps(b, cfg, ox, (*sw, *lw), (*win, *wout));
        for (&(idx, w), &(ib, wb)) in taps.iter().zip(&cols) {
            let i = b.index_cast(idx, Type::i(32));
            b.store(i, ib, &[ox]);
            b.store(w, wb, &[ox]);
        }
        Vec::new()
    });
    let bounds = Bounds::new(b);
    let work = [*n, *c, *hout, *wout];
    loop_nest_by_work(
        b,
        &bounds,
        &[*n, *c],
        &work,
        PARALLEL_MIN_WORK,
        &mut |b, ivs| {
            let plane = b.muli(ivs[0], *c);
            let plane = b.addi(plane, ivs[1]);
            let in_size = b.muli(*hin, *win);
            let out_size = b.muli(*hout, *wout);
            let in_plane = b.muli(plane, in_size);
            let out_plane = b.muli(plane, out_size);
            let row = linear.then(|| alloc(b, Type::f32(), *win));
            b.scf_for(zero, *hout, one, &[], |b, oy, _| {
                let [(y0, w0), (y1, w1)] = dim_taps(b, cfg, oy, (*sh, *lh), (*hin, *hout));
                let start = |b: &mut Builder<'_>, y: ValueId| {
                    let r = b.muli(y, *win);
                    b.addi(in_plane, r)
                };
                let (src, src_at) = match row {
                    Some(buf) => {
                        let rows = [(start(b, y0), w0), (start(b, y1), w1)];
                        blend(b, (*x, rows), (buf, *win), lanes);
                        (buf, zero)
                    }
                    None => (*x, start(b, y0)),
                };
                let r = b.muli(oy, *wout);
                let dst = b.addi(out_plane, r);
                let taps = match linear {
                    true => &cols[..],
                    false => &cols[..1],
                };
                gather_row(b, (src, src_at), taps, (*out, dst, *wout), lanes);
                Vec::new()
            });
        },
    );
}

/// `buf[j] = w0·x[r0 + j] + w1·x[r1 + j]` for `j < width`.
fn blend(
    b: &mut Builder<'_>,
    (x, rows): (ValueId, [(ValueId, ValueId); 2]),
    (buf, width): (ValueId, ValueId),
    lanes: i64,
) {
    let (zero, step) = (b.const_index(0), b.const_index(lanes));
    let vzero = splat(b, 0.0, lanes);
    let weights: Vec<ValueId> = rows.iter().map(|&(_, w)| b.broadcast(w, lanes)).collect();
    b.scf_for(zero, width, step, &[], |b, j, _| {
        let left = b.subi(width, j);
        let mask = b.create_mask(left, lanes);
        let mut acc = vzero;
        for (&(r, _), &w) in rows.iter().zip(&weights) {
            let at = b.addi(r, j);
            let v = b.masked_load(x, &[at], mask, vzero);
            let p = b.mulf(v, w);
            acc = b.addf(acc, p);
        }
        b.masked_store(acc, buf, &[j], mask);
        Vec::new()
    });
}

/// `out[dst + i] = Σ_t w_t[i]·src[at + x_t[i]]` for `i < width`, over the
/// column taps `(x_t, w_t)`.
fn gather_row(
    b: &mut Builder<'_>,
    (src, at): (ValueId, ValueId),
    taps: &[(ValueId, ValueId)],
    (out, dst, width): (ValueId, ValueId, ValueId),
    lanes: i64,
) {
    let (zero, step) = (b.const_index(0), b.const_index(lanes));
    let vzero = splat(b, 0.0, lanes);
    let izero = {
        let z = b.const_int(0, Type::i(32));
        b.broadcast(z, lanes)
    };
    b.scf_for(zero, width, step, &[], |b, i, _| {
        let left = b.subi(width, i);
        let mask = b.create_mask(left, lanes);
        let mut acc: Option<ValueId> = None;
        for &(xs, ws) in taps {
            let off = b.masked_load(xs, &[i], mask, izero);
            let v = b.gather(src, &[at], off, mask, vzero);
            // Nearest copies its one tap exactly.
            let v = match taps.len() {
                1 => v,
                _ => {
                    let w = b.masked_load(ws, &[i], mask, vzero);
                    b.mulf(v, w)
                }
            };
            acc = Some(match acc {
                Some(a) => b.addf(a, v),
                None => v,
            });
        }
        let acc = acc.unwrap_or(vzero);
        let o = b.addi(dst, i);
        b.masked_store(acc, out, &[o], mask);
        Vec::new()
    });
}

fn splat(b: &mut Builder<'_>, v: f64, lanes: i64) -> ValueId {
    let s = b.constant(&Type::f32(), v);
    b.broadcast(s, lanes)
}
