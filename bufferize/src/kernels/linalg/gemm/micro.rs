//! The micro-kernel: an MR × NR tile of C held in `mr · nv` vector
//! accumulators while KC rank-1 updates stream through them (per step:
//! NV vector loads of the B panel, MR scalar loads of the A panel, each
//! broadcast once, MR · NV fused multiply-adds). The tile is then added to
//! what earlier depth blocks left in C and, after the last block, goes
//! through the epilogue (alpha, bias, activation). Edge tiles store under
//! lane masks, and rows past M onto the last row (stored first, so the
//! last row's own result stays): the arithmetic never branches (one
//! branch skips reading C in the first depth block).

use super::{Bias, Params, Variant};
use ir::builder::Cmp;
use ir::{Builder, ValueId};

/// Where one micro-kernel call sits in the blocked loops.
pub(super) struct Tile {
    pub pc: ValueId,
    pub kcur: ValueId,
    pub ic: ValueId,
    pub jc: ValueId,
    pub a: APanels,
    /// The packed B block: buffer and offset of its first panel (panels
    /// `kcur · panel_cols` elements apart).
    pub b: (ValueId, ValueId),
}

/// Where the micro-kernel reads A's rows.
#[derive(Clone, Copy)]
pub(super) enum APanels {
    /// Packed panels: buffer and offset of the block's first (panels
    /// `kcur · panel_rows` elements apart).
    Packed(ValueId, ValueId),
    /// A itself, row-major: row `i` of the block at `start + i·rs`, depth
    /// contiguous; `rows` rows exist (past them the last is read again,
    /// and its sums are not stored).
    Direct {
        start: ValueId,
        rs: ValueId,
        rows: ValueId,
    },
}

/// The tile at rows `ir..`, columns `jr..` of the block, `rows` high and
/// `nv` vectors wide (at most the blocking's).
pub(super) fn kernel(
    b: &mut Builder<'_>,
    v: &Variant,
    (p, t): (&Params, &Tile),
    (ir, jr): (ValueId, ValueId),
    (rows, nv): (i64, i64),
) {
    let acc = accumulate(b, v, (p, t), (ir, jr), (rows, nv));
    store_tile(b, v, (p, t), &acc, (ir, jr), (rows, nv));
}

/// The K loop: returns the `mr · nv` accumulators, row-major.
fn accumulate(
    b: &mut Builder<'_>,
    v: &Variant,
    (p, t): (&Params, &Tile),
    (ir, jr): (ValueId, ValueId),
    (rows, nv): (i64, i64),
) -> Vec<ValueId> {
    let bl = v.blocking;
    let (bp, b_base) = t.b;
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let nr = b.const_index(bl.panel_cols);
    let a_rows = a_rows(b, bl, (p, t), (ir, rows));
    let b0 = super::panel_start(b, jr, t.kcur, bl.panel_cols, bl.nr());
    let b0 = b.addi(b_base, b0);
    let vzero = {
        let z = b.zero(&v.elem);
        b.broadcast(z, bl.vw)
    };
    let inits = vec![vzero; (rows * nv) as usize];
    let lane_offs: Vec<ValueId> = (0..nv).map(|k| b.const_index(k * bl.vw)).collect();
    let lp = b.scf_for(zero, t.kcur, one, &inits, |b, kk, acc| {
        let boff = b.muli(kk, nr);
        let boff = b.addi(b0, boff);
        let bvec: Vec<ValueId> = lane_offs
            .iter()
            .map(|&o| {
                let at = b.addi(boff, o);
                b.vload(bp, &[at], bl.vw)
            })
            .collect();
        let (abuf, step) = a_rows.0;
        let ka = b.muli(kk, step);
        let mut next = Vec::with_capacity(acc.len());
        for &row in &a_rows.1 {
            let at = b.addi(row, ka);
            let x = b.load(abuf, &[at]);
            let xb = b.broadcast(x, bl.vw);
            for &bv in &bvec {
                let a = acc[next.len()];
                next.push(b.vfma(xb, bv, a));
            }
        }
        next
    });
    b.m.results(lp).to_vec()
}

/// A's buffer and the step between depth steps, and where each of the
/// tile's `rows` rows starts: packed, row `r` of panel `ir` is `r` past the
/// panel's start, a depth step MR on; direct, it is A's row (clamped to
/// the last that exists), a depth step 1 on.
fn a_rows(
    b: &mut Builder<'_>,
    bl: super::Blocking,
    (p, t): (&Params, &Tile),
    (ir, rows): (ValueId, i64),
) -> ((ValueId, ValueId), Vec<ValueId>) {
    let tile_rows = rows;
    match t.a {
        APanels::Packed(ap, base) => {
            let a0 = super::panel_start(b, ir, t.kcur, bl.panel_rows, bl.mr);
            let a0 = b.addi(base, a0);
            let rows = (0..tile_rows)
                .map(|r| {
                    let r = b.const_index(r);
                    b.addi(a0, r)
                })
                .collect();
            ((ap, b.const_index(bl.panel_rows)), rows)
        }
        APanels::Direct { start, rs, rows } => {
            let one = b.const_index(1);
            let last = b.subi(rows, one);
            let rows = (0..tile_rows)
                .map(|r| {
                    let r = b.const_index(r);
                    let i = b.addi(ir, r);
                    let i = b.minsi(i, last);
                    let at = b.muli(i, rs);
                    b.addi(start, at)
                })
                .collect();
            ((p.a, one), rows)
        }
    }
}

/// Adds the tile to C (after the first depth block), applies the epilogue
/// after the last, and stores it under the edge masks. Straight-line code
/// but for one branch, around reading what earlier depth blocks stored:
/// which block this is and which rows exist select values and masks, so
/// each variant's tile store is a few basic blocks for LLVM (branches per
/// row and vector made the GEMM bodies most of ResNet-152's
/// code-generation time). The first block reads nothing from C: a masked
/// load whose mask was off still fetched C's line (LLVM folds it into a
/// blend from memory), a miss to memory per row on a cold output (a 7×7
/// stem lost a third of its time to them).
fn store_tile(
    b: &mut Builder<'_>,
    v: &Variant,
    (p, t): (&Params, &Tile),
    acc: &[ValueId],
    (ir, jr): (ValueId, ValueId),
    (rows, nv): (i64, i64),
) {
    let bl = v.blocking;
    let (one, nr) = (b.const_index(1), b.const_index(bl.nr()));
    let col0 = b.addi(t.jc, jr);
    let nvalid = {
        let cols = b.subi(p.n, col0);
        b.minsi(cols, nr)
    };
    let masks: Vec<ValueId> = (0..nv)
        .map(|k| {
            let off = b.const_index(k * bl.vw);
            let n = b.subi(nvalid, off);
            b.create_mask(n, bl.vw)
        })
        .collect();
    let (first, last) = depth_block_edges(b, p, t);
    let last_lanes = b.broadcast(last, bl.vw);
    let row0 = b.addi(t.ic, ir);
    let last_row = b.subi(p.m, one);
    // Rows past M go to the last row: every row's result is computed from
    // C as it was before any is stored, and the rows are stored last to
    // first, so the last row's own result is what stays. Only the column
    // masks are live (a mask per row and vector spilled the mask
    // registers).
    let starts: Vec<(ValueId, ValueId)> = (0..rows)
        .map(|r| {
            let rc = b.const_index(r);
            let row = b.addi(row0, rc);
            let row = b.minsi(row, last_row);
            let rterm = b.muli(row, p.ldc);
            let rbase = b.addi(p.c_off, rterm);
            (row, b.addi(rbase, col0))
        })
        .collect();
    let earlier = earlier_sums(b, v, p, first, &starts, &masks);
    let mut results = Vec::with_capacity(starts.len());
    for (r, &(row, rbase)) in starts.iter().enumerate() {
        let span = r * nv as usize..(r + 1) * nv as usize;
        let mut outs = Vec::with_capacity(span.len());
        for (k, (&a, &old)) in acc[span.clone()].iter().zip(&earlier[span]).enumerate() {
            let sum = b.addf(old, a);
            let off = b.const_index(k as i64 * bl.vw);
            let col = b.addi(col0, off);
            let done = epilogue(b, v, p, sum, row, col, Some(masks[k]));
            outs.push(match done == sum {
                true => sum,
                false => b.select(last_lanes, done, sum),
            });
        }
        results.push((rbase, outs));
    }
    for (at, outs) in results.into_iter().rev() {
        for (k, (&out, &mask)) in outs.iter().zip(&masks).enumerate() {
            let off = b.const_index(k as i64 * bl.vw);
            let at = b.addi(at, off);
            b.masked_store(out, p.c, &[at], mask);
        }
    }
}

/// Whether the tile's depth block is the first (C holds nothing yet) and
/// the last (the epilogue applies).
pub(super) fn depth_block_edges(b: &mut Builder<'_>, p: &Params, t: &Tile) -> (ValueId, ValueId) {
    let zero = b.const_index(0);
    let end = b.addi(t.pc, t.kcur);
    let first = b.cmp(Cmp::Eq, t.pc, zero);
    (first, b.cmp(Cmp::Eq, end, p.k))
}

/// What earlier depth blocks stored at each row start and vector of the
/// tile, row-major: -0.0 lanes in the first block (-0.0 + x is x
/// exactly, signed zeros included), loaded under the column masks after.
fn earlier_sums(
    b: &mut Builder<'_>,
    v: &Variant,
    p: &Params,
    first: ValueId,
    starts: &[(ValueId, ValueId)],
    masks: &[ValueId],
) -> Vec<ValueId> {
    let vw = v.blocking.vw;
    let neg_zero = {
        let z = b.constant(&v.elem, -0.0);
        b.broadcast(z, vw)
    };
    let count = starts.len() * masks.len();
    let ty = b.m.value_type(neg_zero).clone();
    let pick = b.scf_if(
        first,
        &vec![ty; count],
        &mut |_| vec![neg_zero; count],
        Some(&mut |b| {
            let mut olds = Vec::with_capacity(count);
            for &(_, rbase) in starts {
                for (k, &mask) in masks.iter().enumerate() {
                    let off = b.const_index(k as i64 * vw);
                    let at = b.addi(rbase, off);
                    olds.push(b.masked_load(p.c, &[at], mask, neg_zero));
                }
            }
            olds
        }),
    );
    b.m.results(pick).to_vec()
}

/// `act(alpha · x + bias + residual)` for one vector of row `row`,
/// columns from `col` under `mask`, or for one element (`mask` None).
pub(super) fn epilogue(
    b: &mut Builder<'_>,
    v: &Variant,
    p: &Params,
    x: ValueId,
    row: ValueId,
    col: ValueId,
    mask: Option<ValueId>,
) -> ValueId {
    let vw = v.blocking.vw;
    let splat = |b: &mut Builder<'_>, c: f64| {
        let s = b.constant(&v.elem, c);
        match mask {
            Some(_) => b.broadcast(s, vw),
            None => s,
        }
    };
    // Element `at` of `buf`: a vector from it under the mask.
    let read = |b: &mut Builder<'_>, buf: ValueId, at: ValueId| match mask {
        Some(m) => {
            let z = splat(b, 0.0);
            b.masked_load(buf, &[at], m, z)
        }
        None => b.load(buf, &[at]),
    };
    let mut x = x;
    if v.alpha() != 1.0 {
        let a = splat(b, v.alpha());
        x = b.mulf(x, a);
    }
    if let (Some(arg), true) = (p.bias, v.bias != Bias::None) {
        let rterm = b.muli(row, arg.rs);
        let at = b.addi(arg.off, rterm);
        let mut s = if v.bias == Bias::Row {
            let s = b.load(arg.buf, &[at]);
            match mask {
                Some(_) => b.broadcast(s, vw),
                None => s,
            }
        } else {
            let at = b.addi(at, col);
            read(b, arg.buf, at)
        };
        if v.beta() != 1.0 {
            let be = splat(b, v.beta());
            s = b.mulf(s, be);
        }
        x = b.addf(x, s);
    }
    if let (Some(res), true) = (p.residual, v.residual) {
        let rterm = b.muli(row, p.ldc);
        let at = b.addi(p.c_off, rterm);
        let at = b.addi(at, col);
        let r = read(b, res, at);
        x = b.addf(x, r);
    }
    v.act.apply(b, x)
}
