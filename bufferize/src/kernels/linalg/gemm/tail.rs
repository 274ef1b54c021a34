//! The last few columns of a block, with rows as the lanes. A panel of
//! at most a quarter of a vector's columns (a 7×7 image's 49th column
//! after three 16-lane vectors) would cost the micro-kernel a whole vector
//! of FMAs per row and depth step, most lanes empty: a quarter of a
//! ResNet-50 7×7 layer's time for one column in 49. Packed A holds each
//! depth step's `panel_rows` rows side by side, so here one vector load
//! of A serves every column, each column's B value is broadcast, and the
//! sums are `panel_rows`-lane vectors: `cols` FMAs per panel and depth
//! step instead of `mr` wide ones. Four row panels at a time (then two,
//! then one) keep enough independent sums in flight; the sums go through
//! a small buffer and are stored element by element (a few per tile and
//! depth block).

use super::micro::{depth_block_edges, epilogue, APanels, Tile};
use super::{Params, Variant};
use ir::{Builder, Type, ValueId};

/// Row panels accumulated together.
const ROW_PANELS: i64 = 4;

/// Columns the tail takes (a quarter of a vector), when A is packed.
pub(super) fn columns(v: &Variant, t: &Tile) -> Option<i64> {
    let cols = width(v);
    (matches!(t.a, APanels::Packed(..)) && cols >= 1).then_some(cols)
}

/// The tail's columns: a quarter of a vector.
fn width(v: &Variant) -> i64 {
    v.blocking.vw / 4
}

/// Columns `jr..jr + left` (`left` at most [`columns`]) of the block's
/// `mcur` rows.
pub(super) fn tail(
    b: &mut Builder<'_>,
    v: &Variant,
    (p, t): (&Params, &Tile),
    (jr, left): (ValueId, ValueId),
    mcur: ValueId,
) {
    let pr = v.blocking.panel_rows;
    // Whole groups of row panels, then a pair, then a single panel (a
    // packed block holds only the panels its rows need; a grouped conv's
    // 16 rows are one pair, twice the chains of two singles).
    let mut from = b.const_index(0);
    for count in [ROW_PANELS, 2, 1] {
        let group = b.const_index(pr * count);
        // Whole groups; the single panels also take a last partial one.
        let to = match count {
            1 => mcur,
            _ => {
                let rest = b.subi(mcur, from);
                let whole = b.floordivsi(rest, group);
                let whole = b.muli(whole, group);
                b.addi(from, whole)
            }
        };
        b.scf_for(from, to, group, &[], |b, ir, _| {
            panels(b, v, (p, t), (jr, left), (ir, mcur), count);
            Vec::new()
        });
        from = to;
    }
}

/// `count` row panels from row `ir` of the block, every tail column.
fn panels(
    b: &mut Builder<'_>,
    v: &Variant,
    (p, t): (&Params, &Tile),
    (jr, left): (ValueId, ValueId),
    (ir, mcur): (ValueId, ValueId),
    count: i64,
) {
    let bl = v.blocking;
    let (pr, cols) = (bl.panel_rows, width(v));
    let APanels::Packed(ap, a_base) = t.a else {
        return;
    };
    let (bp, b_base) = t.b;
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let (pr_c, nr) = (b.const_index(pr), b.const_index(bl.panel_cols));
    let b0 = super::panel_start(b, jr, t.kcur, bl.panel_cols, bl.nr());
    let b0 = b.addi(b_base, b0);
    let a0: Vec<ValueId> = (0..count)
        .map(|k| {
            let row = b.const_index(k * pr);
            let row = b.addi(ir, row);
            let start = b.muli(row, t.kcur);
            b.addi(a_base, start)
        })
        .collect();
    let vzero = {
        let z = b.zero(&v.elem);
        b.broadcast(z, pr)
    };
    let inits = vec![vzero; (count * cols) as usize];
    let lp = b.scf_for(zero, t.kcur, one, &inits, |b, kk, acc| {
        let boff = b.muli(kk, nr);
        let boff = b.addi(b0, boff);
        let bvals: Vec<ValueId> = (0..cols)
            .map(|j| {
                let j = b.const_index(j);
                let at = b.addi(boff, j);
                let x = b.load(bp, &[at]);
                b.broadcast(x, pr)
            })
            .collect();
        let aoff = b.muli(kk, pr_c);
        let mut next = Vec::with_capacity(acc.len());
        for &start in &a0 {
            let at = b.addi(start, aoff);
            let a = b.vload(ap, &[at], pr);
            for &bv in &bvals {
                next.push(b.vfma(a, bv, acc[next.len()]));
            }
        }
        next
    });
    let sums = b.m.results(lp).to_vec();
    let rows = b.subi(mcur, ir);
    let most = b.const_index(count * pr);
    let rows = b.minsi(rows, most);
    store(b, v, (p, t), &sums, (ir, rows), (jr, left));
}

/// The sums (`[panel][column]` vectors of `panel_rows` lanes) added to
/// what earlier depth blocks stored, through the epilogue after the last,
/// into C's `rows` rows from `ir` and `left` columns from `jr`.
fn store(
    b: &mut Builder<'_>,
    v: &Variant,
    (p, t): (&Params, &Tile),
    sums: &[ValueId],
    (ir, rows): (ValueId, ValueId),
    (jr, left): (ValueId, ValueId),
) {
    let (pr, cols) = (v.blocking.panel_rows, width(v));
    let len = i64::try_from(sums.len()).unwrap_or(0) * pr;
    // Small and static: hoisted out of the loops and put on the stack by
    // the deallocation stage, which also frees it.
    let tmp = b.alloc_aligned(&Type::memref(vec![len], v.elem.clone()), &[], 64);
    for (k, &s) in sums.iter().enumerate() {
        let at = b.const_index(k as i64 * pr);
        b.vstore(s, tmp, &[at]);
    }
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let (first, last) = depth_block_edges(b, p, t);
    let (pr_c, cols_c) = (b.const_index(pr), b.const_index(cols));
    let neg_zero = b.constant(&v.elem, -0.0);
    let row0 = b.addi(t.ic, ir);
    let col0 = b.addi(t.jc, jr);
    b.scf_for(zero, rows, one, &[], |b, r, _| {
        // Row r is lane r % pr of panel r / pr.
        let panel = b.divui(r, pr_c);
        let lane = b.remui(r, pr_c);
        let row = b.addi(row0, r);
        let rterm = b.muli(row, p.ldc);
        let rbase = b.addi(p.c_off, rterm);
        b.scf_for(zero, left, one, &[], |b, j, _| {
            let slot = b.muli(panel, cols_c);
            let slot = b.addi(slot, j);
            let slot = b.muli(slot, pr_c);
            let slot = b.addi(slot, lane);
            let s = b.load(tmp, &[slot]);
            let col = b.addi(col0, j);
            let at = b.addi(rbase, col);
            // The first depth block reads nothing from C (-0.0 + s is s).
            let ty = v.elem.clone();
            let old = b.scf_if(
                first,
                &[ty],
                &mut |_| vec![neg_zero],
                Some(&mut |b| vec![b.load(p.c, &[at])]),
            );
            let sum = b.addf(b.m.results(old)[0], s);
            let done = epilogue(b, v, p, sum, row, col, None);
            let out = b.select(last, done, sum);
            b.store(out, p.c, &[at]);
            Vec::new()
        });
        Vec::new()
    });
}
