//! The product with one row (M = 1) and B a matrix of contiguous rows:
//! every element of B is used once, so packing it would only copy it. B
//! is read in place, `GEMV_VECS` vectors of columns at a time, each
//! column block a sum over K of a broadcast A element times B's row
//! segment, then the epilogue; threads take disjoint column blocks. Only
//! the block that reaches past N loads and stores under lane masks.

use super::micro::epilogue;
use super::{Params, Variant};
use ir::{Builder, ValueId};

/// Vectors of columns per block.
const GEMV_VECS: i64 = 4;

pub(super) fn gemv(b: &mut Builder<'_>, v: &Variant, p: &Params) {
    let width = v.blocking.vw * GEMV_VECS;
    column_blocks(b, p, width, &mut |b, j0| {
        let w = b.const_index(width);
        let end = b.addi(j0, w);
        let whole = b.cmp(ir::builder::Cmp::Le, end, p.n);
        b.scf_if(
            whole,
            &[],
            &mut |b| {
                block(b, v, p, j0, false);
                Vec::new()
            },
            Some(&mut |b| {
                block(b, v, p, j0, true);
                Vec::new()
            }),
        );
    });
}

/// `body(j0)` for each block of `width` columns of C's one row, threads
/// taking disjoint runs of blocks.
fn column_blocks(
    b: &mut Builder<'_>,
    p: &Params,
    width: i64,
    body: &mut dyn FnMut(&mut Builder<'_>, ValueId),
) {
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let width = b.const_index(width);
    let blocks = b.ceildivsi(p.n, width);
    let work = b.muli(p.n, p.k);
    let (parts, per) = super::split(b, work, blocks);
    b.scf_parallel_for(zero, parts, one, |b, t| {
        let first = b.muli(t, per);
        let next = b.addi(first, per);
        let last = b.minsi(next, blocks);
        b.scf_for(first, last, one, &[], |b, blk, _| {
            let j0 = b.muli(blk, width);
            body(b, j0);
            Vec::new()
        });
    });
}

/// Columns `j0 .. j0 + GEMV_VECS · vw` of C's one row; `edge`: some of
/// them lie past N.
fn block(b: &mut Builder<'_>, v: &Variant, p: &Params, j0: ValueId, edge: bool) {
    let vw = v.blocking.vw;
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let vzero = {
        let z = b.zero(&v.elem);
        b.broadcast(z, vw)
    };
    let cols: Vec<_> = (0..GEMV_VECS)
        .map(|k| {
            let off = b.const_index(k * vw);
            b.addi(j0, off)
        })
        .collect();
    let masks: Vec<_> = cols
        .iter()
        .map(|&c| {
            let left = b.subi(p.n, c);
            b.create_mask(left, vw)
        })
        .collect();
    let rs = p.b_args.first().copied().unwrap_or(one);
    let inits = vec![vzero; cols.len()];
    let lp = b.scf_for(zero, p.k, one, &inits, |b, k, acc| {
        let at = b.muli(k, p.a_cs);
        let at = b.addi(p.a_off, at);
        let x = b.load(p.a, &[at]);
        let xb = b.broadcast(x, vw);
        let row = b.muli(k, rs);
        let row = b.addi(p.b_off, row);
        cols.iter()
            .zip(&masks)
            .zip(acc)
            .map(|((&c, &mask), &a)| {
                let at = b.addi(row, c);
                let bv = match edge {
                    true => b.masked_load(p.b, &[at], mask, vzero),
                    false => b.vload(p.b, &[at], vw),
                };
                b.vfma(xb, bv, a)
            })
            .collect()
    });
    let sums = b.m.results(lp).to_vec();
    for ((&c, &mask), &s) in cols.iter().zip(&masks).zip(&sums) {
        let y = epilogue(b, v, p, s, zero, c, Some(mask));
        let at = b.addi(p.c_off, c);
        match edge {
            true => b.masked_store(y, p.c, &[at], mask),
            false => b.vstore(y, p.c, &[at]),
        }
    }
}

/// M = 1 against B packed at compile time ([`super::PackedB`]):
/// per panel of NR columns, the sums over K read the panel's depth steps
/// front to back (one stream per panel; the padding past N is zeros, so
/// the loads are whole vectors); threads take disjoint panels.
pub(super) fn gemv_packed(b: &mut Builder<'_>, v: &Variant, p: &Params) {
    column_blocks(b, p, v.blocking.panel_cols, &mut |b, col0| {
        panel(b, v, p, col0)
    });
}

/// Columns `col0 .. col0 + NR` of C's one row from B's packed panel.
fn panel(b: &mut Builder<'_>, v: &Variant, p: &Params, col0: ValueId) {
    let bl = v.blocking;
    let (vw, nv) = (bl.vw, bl.panel_vectors());
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let (nr, kc) = (b.const_index(bl.panel_cols), b.const_index(bl.kc));
    let vzero = {
        let z = b.zero(&v.elem);
        b.broadcast(z, vw)
    };
    let lane_offs: Vec<ValueId> = (0..nv).map(|k| b.const_index(k * vw)).collect();
    let npad = p.b_args[0];
    let inits = vec![vzero; nv as usize];
    let blocks = b.scf_for(zero, p.k, kc, &inits, |b, pc, acc| {
        let kcur = super::min_rest(b, p.k, pc, kc);
        let block = b.muli(pc, npad);
        let col = b.muli(col0, kcur);
        let base = b.addi(p.b_off, block);
        let base = b.addi(base, col);
        let steps = b.scf_for(zero, kcur, one, acc, |b, kk, acc| {
            let k = b.addi(pc, kk);
            let at = b.muli(k, p.a_cs);
            let at = b.addi(p.a_off, at);
            let x = b.load(p.a, &[at]);
            let xb = b.broadcast(x, vw);
            let row = b.muli(kk, nr);
            let row = b.addi(base, row);
            lane_offs
                .iter()
                .zip(acc)
                .map(|(&o, &a)| {
                    let at = b.addi(row, o);
                    let bv = b.vload(p.b, &[at], vw);
                    b.vfma(xb, bv, a)
                })
                .collect()
        });
        b.m.results(steps).to_vec()
    });
    let sums = b.m.results(blocks).to_vec();
    for (&o, &s) in lane_offs.iter().zip(&sums) {
        let c = b.addi(col0, o);
        let left = b.subi(p.n, c);
        let mask = b.create_mask(left, vw);
        let y = epilogue(b, v, p, s, zero, c, Some(mask));
        let at = b.addi(p.c_off, c);
        b.masked_store(y, p.c, &[at], mask);
    }
}
