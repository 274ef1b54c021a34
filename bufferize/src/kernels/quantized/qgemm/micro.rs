//! The int8 micro-kernel: `rows · nv` i32 vector accumulators; per depth
//! quad, `nv` loads of the packed B panel and, per row, one 4-byte load of
//! A broadcast to every lane and `nv` byte dot products. Rows past M read
//! the last row again and are not stored.

use super::{QCall, QOut, QVariant};
use ir::builder::Cmp;
use ir::{Builder, Type, ValueId};

/// The tile at rows `row0..` of panel `panel`, `nv` vectors wide.
pub(super) fn kernel(
    b: &mut Builder<'_>,
    v: &QVariant,
    p: &QCall,
    (row0, panel): (ValueId, ValueId),
    nv: i64,
) {
    let (sums, row_sums) = accumulate(b, v, p, (row0, panel), nv);
    store(b, v, p, (&sums, &row_sums), (row0, panel), nv);
}

/// The K loop over whole quads, then the last partial quad (K is static);
/// returns the product sums (row-major) and the rows' byte sums.
fn accumulate(
    b: &mut Builder<'_>,
    v: &QVariant,
    p: &QCall,
    (row0, panel): (ValueId, ValueId),
    nv: i64,
) -> (Vec<ValueId>, Vec<ValueId>) {
    let rows = v.rows();
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let k = b.const_index(v.k);
    let last = b.subi(p.m, one);
    let row_at: Vec<ValueId> = (0..rows)
        .map(|r| {
            let r = b.const_index(r);
            let i = b.addi(row0, r);
            let i = b.minsi(i, last);
            b.muli(i, k)
        })
        .collect();
    let panel_words = b.const_index(v.quads() * v.nr());
    let b_base = b.muli(panel, panel_words);
    let vzero = {
        let z = b.const_int(0, Type::i(32));
        b.broadcast(z, v.vw)
    };
    let n_sums = if v.row_sums { rows } else { 0 };
    let inits = vec![vzero; (rows * nv + n_sums) as usize];
    let step = Step {
        row_at: &row_at,
        b_base,
        nv,
    };
    let full = b.const_index(v.k / 4);
    let lp = b.scf_for(zero, full, one, &inits, |b, q, acc| {
        step.apply(b, v, p, q, acc, None)
    });
    let mut acc = b.m.results(lp).to_vec();
    if v.k % 4 != 0 {
        acc = step.apply(b, v, p, full, &acc, Some(v.k % 4));
    }
    let sums = acc.split_off((rows * nv) as usize);
    (acc, sums)
}

/// One depth quad of the tile.
struct Step<'a> {
    row_at: &'a [ValueId],
    b_base: ValueId,
    nv: i64,
}

impl Step<'_> {
    fn apply(
        &self,
        b: &mut Builder<'_>,
        v: &QVariant,
        p: &QCall,
        q: ValueId,
        acc: &[ValueId],
        tail: Option<i64>,
    ) -> Vec<ValueId> {
        let nr = b.const_index(v.nr());
        let at = b.muli(q, nr);
        let at = b.addi(self.b_base, at);
        let bvec: Vec<ValueId> = (0..self.nv)
            .map(|j| {
                let o = b.const_index(j * v.vw);
                let o = b.addi(at, o);
                b.vload(p.b, &[o], v.vw)
            })
            .collect();
        let four = b.const_index(4);
        let a_at = b.muli(q, four);
        let ones = v.row_sums.then(|| {
            let one = b.const_int(0x0101_0101, Type::i(32));
            b.broadcast(one, v.vw)
        });
        let n_prod = self.row_at.len() * self.nv as usize;
        let mut next = acc.to_vec();
        for (r, &row) in self.row_at.iter().enumerate() {
            let at = b.addi(row, a_at);
            let word = quad(b, v, p.a, at, tail);
            let wide = b.broadcast(word, v.vw);
            for (j, &bv) in bvec.iter().enumerate() {
                let i = r * self.nv as usize + j;
                next[i] = dot(b, (v.vw, v.vnni), next[i], wide, bv);
            }
            if let Some(ones) = ones {
                next[n_prod + r] = dot(b, (v.vw, v.vnni), next[n_prod + r], wide, ones);
            }
        }
        next
    }
}

/// A's four bytes at `at` as one i32 (unsigned: an s8 A gets +128 per byte
/// by an xor); a partial last quad reads `tail` bytes and pads with bytes
/// that are 0 after the shift, so the row sums see only A's elements.
fn quad(b: &mut Builder<'_>, v: &QVariant, a: ValueId, at: ValueId, tail: Option<i64>) -> ValueId {
    let elem = b.m.value_type(a).element_type().clone();
    let bytes = match tail {
        None => b.vload(a, &[at], 4),
        Some(t) => {
            let n = b.const_index(t);
            let mask = b.create_mask(n, 4);
            let pad = b.const_int(if v.a_signed { -128 } else { 0 }, elem);
            let pad = b.broadcast(pad, 4);
            b.masked_load(a, &[at], mask, pad)
        }
    };
    let word = b.vbitcast(bytes, 1, Type::i(32));
    let word = b.extract(word, 0);
    if v.a_signed {
        let flip = b.const_int(0x8080_8080_u32 as i32 as i64, Type::i(32));
        b.xori(word, flip)
    } else {
        word
    }
}

/// `acc + Σ` of the four products of `u`'s unsigned bytes by `s`'s signed
/// bytes, per i32 lane: VNNI's `vpdpbusd`, else [`dot_by_pairs`].
pub(super) fn dot(
    b: &mut Builder<'_>,
    (vw, vnni): (i64, bool),
    acc: ValueId,
    u: ValueId,
    s: ValueId,
) -> ValueId {
    if vnni {
        return b.vpdpbusd(acc, u, s);
    }
    dot_by_pairs(b, vw, acc, u, s)
}

/// The exact byte dot without VNNI: the bytes widened to i16, the
/// products of each i16 pair summed in i32 (`x86vector.pmaddwd`, SSE2's
/// `pmaddwd` joined by LLVM to the function's widest form), then each
/// lane's two pair sums added. Unlike `pmaddubsw` nothing saturates. The
/// widening of an operand shared by a tile's rows or columns is one
/// value, computed once.
fn dot_by_pairs(b: &mut Builder<'_>, vw: i64, acc: ValueId, u: ValueId, s: ValueId) -> ValueId {
    let (x, y) = (widen(b, u, vw, false), widen(b, s, vw, true));
    let pairs = b.pmaddwd(x, y);
    let (lo, hi): (Vec<i64>, Vec<i64>) = (0..vw).map(|i| (2 * i, 2 * i + 1)).unzip();
    add_pair_sums(b, acc, pairs, (&lo, &hi))
}

/// The exact byte dot without VNNI of a vector `u` whose lanes' bytes lie
/// in two planes (lane `i`'s (b0, b1) at bytes `2i, 2i+1`, its (b2, b3)
/// at `2vw + 2i, ...`: the convolution's panels) by a broadcast word `s`:
/// each plane's pair sums land in their lanes, so, unlike
/// [`dot_by_pairs`], no lanes are combined across.
pub(super) fn dot_planar(
    b: &mut Builder<'_>,
    vw: i64,
    acc: ValueId,
    u: ValueId,
    s: ValueId,
) -> ValueId {
    let x = widen(b, u, vw, false);
    let planes: Vec<i64> = [0, 2]
        .into_iter()
        .flat_map(|t| (0..vw).flat_map(move |_| [t, t + 1]))
        .collect();
    let sb = b.vbitcast(s, 4 * vw, Type::i(8));
    let sp = b.shuffle(sb, sb, &planes);
    let y = b.extsi(sp, Type::vector(4 * vw, Type::i(16)));
    let pairs = b.pmaddwd(x, y);
    let lo: Vec<i64> = (0..vw).collect();
    let hi: Vec<i64> = (vw..2 * vw).collect();
    add_pair_sums(b, acc, pairs, (&lo, &hi))
}

/// The `4·vw` bytes of the word vector `x` as i16.
fn widen(b: &mut Builder<'_>, x: ValueId, vw: i64, signed: bool) -> ValueId {
    let bytes = b.vbitcast(x, 4 * vw, Type::i(8));
    let to = Type::vector(4 * vw, Type::i(16));
    match signed {
        true => b.extsi(bytes, to),
        false => b.extui(bytes, to),
    }
}

/// `acc` plus the pair sums at lanes `lo` and at lanes `hi`.
fn add_pair_sums(
    b: &mut Builder<'_>,
    acc: ValueId,
    pairs: ValueId,
    (lo, hi): (&[i64], &[i64]),
) -> ValueId {
    let lo = b.shuffle(pairs, pairs, lo);
    let hi = b.shuffle(pairs, pairs, hi);
    let both = b.addi(lo, hi);
    b.addi(acc, both)
}

/// Applies the zero-point corrections and stores the rows that exist.
fn store(
    b: &mut Builder<'_>,
    v: &QVariant,
    p: &QCall,
    (sums, row_sums): (&[ValueId], &[ValueId]),
    (row0, panel): (ValueId, ValueId),
    nv: i64,
) {
    let rows = v.rows();
    let nr = b.const_index(v.nr());
    let n = b.const_index(v.n);
    let col0 = b.muli(panel, nr);
    let alpha = b.broadcast(p.alpha, v.vw);
    // Per vector: its columns, their mask, and `-α·colsum(B')`.
    let cols: Vec<(ValueId, ValueId, ValueId)> = (0..nv)
        .map(|j| {
            let o = b.const_index(j * v.vw);
            let col = b.addi(col0, o);
            let left = b.subi(n, col);
            let mask = b.create_mask(left, v.vw);
            let cs = b.vload(p.colsum, &[col], v.vw);
            let fix = b.muli(alpha, cs);
            (col, mask, fix)
        })
        .collect();
    let k_alpha = {
        let k = b.const_int(v.k, Type::i(32));
        b.muli(k, p.alpha)
    };
    let rows_c = b.const_index(rows);
    let left = b.subi(p.m, row0);
    let valid = b.minsi(left, rows_c);
    for r in 0..rows {
        let rc = b.const_index(r);
        let inside = b.cmp(Cmp::Lt, rc, valid);
        b.scf_if(
            inside,
            &[],
            &mut |b| {
                let row = b.addi(row0, rc);
                // β·(K·α - rowsum(A')) for this row.
                let row_fix = row_sums.get(r as usize).map(|&s| {
                    let s = b.extract(s, 0);
                    let t = b.subi(k_alpha, s);
                    b.broadcast(t, v.vw)
                });
                for (j, &(col, mask, fix)) in cols.iter().enumerate() {
                    let acc = sums[(r * nv) as usize + j];
                    let mut y = b.subi(acc, fix);
                    if let (Some(t), Some(beta)) = (row_fix, p.beta) {
                        let bv = b.vload(beta, &[col], v.vw);
                        let bt = b.muli(bv, t);
                        y = b.addi(y, bt);
                    }
                    let y = finish(b, v, p, y, col);
                    let at = b.muli(row, n);
                    let at = b.addi(at, col);
                    b.masked_store(y, p.c, &[at], mask);
                }
                Vec::new()
            },
            None,
        );
    }
}

/// The stored vector: the i32 sums, or them requantized with the
/// column's scale `sa·sb[n]/sy`.
fn finish(b: &mut Builder<'_>, v: &QVariant, p: &QCall, y: ValueId, col: ValueId) -> ValueId {
    let (QOut::Requant { elem }, Some((sb, [sa, sy, zy]))) = (&v.out, p.requant) else {
        return y;
    };
    let scale = b.vload(sb, &[col], v.vw);
    let sa = b.broadcast(sa, v.vw);
    let scale = b.mulf(sa, scale);
    let sy = b.broadcast(sy, v.vw);
    let scale = b.divf(scale, sy);
    requantize(b, y, scale, zy, elem)
}

/// `saturate(round_even(y · scale) + zy)` as a vector of `elem` (8-bit):
/// the i32 sums `y` scaled in f32, as onnxruntime and the ONNX reference
/// do.
pub(super) fn requantize(
    b: &mut Builder<'_>,
    y: ValueId,
    scale: ValueId,
    zy: ValueId,
    elem: &Type,
) -> ValueId {
    let vw = b.m.value_type(y).as_vector().map_or(1, |t| t.len());
    let splat = |b: &mut Builder<'_>, x: ValueId| b.broadcast(x, vw);
    let x = b.sitofp(y, Type::vector(vw, Type::f32()));
    let x = b.mulf(x, scale);
    let x = b.roundeven(x);
    let zy = splat(b, zy);
    let x = b.addf(x, zy);
    let (lo, hi) = if ir::builder::is_unsigned(elem) {
        (0.0, 255.0)
    } else {
        (-128.0, 127.0)
    };
    let lo = b.constant(&Type::f32(), lo);
    let lo = splat(b, lo);
    let hi = b.constant(&Type::f32(), hi);
    let hi = splat(b, hi);
    let x = b.maxnumf(x, lo);
    let x = b.minnumf(x, hi);
    let x = b.fptosi(x, Type::vector(vw, Type::i(32)));
    b.trunci(x, Type::vector(vw, elem.clone()))
}
