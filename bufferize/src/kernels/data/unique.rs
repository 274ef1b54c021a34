//! Unique (flattened, or of slices along `axis`) by O(L²) comparisons: each
//! slice's first equal slice is its representative; representatives are
//! ordered by first occurrence, or lexicographically (`sorted`, numpy's
//! order: row-major over the other dims). The output sizes are counted
//! first, then allocated.

use crate::convert::{alloc, dims, Lowering};
use crate::kernels::support::index::from_index;
use crate::kernels::{support::alloc_result, support::elem_of, support::shape_of};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::builder::{Cmp, CmpF, CmpI};
use ir::{Builder, OpId, Result, Type, ValueId, DYN};
use onnx::ops;

fn product(b: &mut Builder<'_>, one: ValueId, vals: &[ValueId]) -> ValueId {
    vals.iter().fold(one, |acc, &v| b.muli(acc, v))
}

/// The input viewed as `[outer, len, inner]`: slice `i` is `x3[:, i, :]`.
struct Slices {
    x3: ValueId,
    outer: ValueId,
    len: ValueId,
    inner: ValueId,
    float: bool,
}

impl Slices {
    fn eq(&self, b: &mut Builder<'_>, p: ValueId, q: ValueId) -> ValueId {
        if self.float {
            b.cmpf(CmpF::Oeq, p, q)
        } else {
            b.cmpi(CmpI::Eq, p, q)
        }
    }

    /// Whether slices `i` and `j` are equal.
    fn same(&self, b: &mut Builder<'_>, bounds: &Bounds, i: ValueId, j: ValueId) -> ValueId {
        let t = b.const_bool(true);
        let elems = [self.outer, self.inner];
        reduce_nest(b, bounds, &elems, t, &mut |b, or, acc| {
            let p = b.load(self.x3, &[or[0], i, or[1]]);
            let q = b.load(self.x3, &[or[0], j, or[1]]);
            let e = self.eq(b, p, q);
            b.andi(acc, e)
        })
    }

    /// Whether slice `k` sorts before slice `i`: the first differing
    /// element decides (row-major over the other dims).
    fn less(&self, b: &mut Builder<'_>, bounds: &Bounds, k: ValueId, i: ValueId) -> ValueId {
        let (zero, one) = (bounds.zero, bounds.one);
        let f = b.const_bool(false);
        let init = [f, f];
        let l = b.scf_for(zero, self.outer, one, &init, |b, o, a| {
            let r = b.scf_for(zero, self.inner, one, a, |b, r, a| {
                let p = b.load(self.x3, &[o, k, r]);
                let q = b.load(self.x3, &[o, i, r]);
                let e = self.eq(b, p, q);
                let t = b.const_bool(true);
                let ne = b.xori(e, t);
                let undecided = b.xori(a[0], t);
                let now = b.andi(undecided, ne);
                let lt = b.cmp(Cmp::Lt, p, q);
                vec![b.ori(a[0], now), b.select(now, lt, a[1])]
            });
            b.m.results(r).to_vec()
        });
        b.m.results(l)[1]
    }
}

/// Whether slice `i` is its own representative.
fn is_rep(b: &mut Builder<'_>, first: ValueId, i: ValueId) -> ValueId {
    let f = b.load(first, &[i]);
    b.cmpi(CmpI::Eq, f, i)
}

/// How many `k < len` satisfy `pred`.
fn count_if(
    b: &mut Builder<'_>,
    bounds: &Bounds,
    len: ValueId,
    pred: &mut dyn FnMut(&mut Builder<'_>, ValueId) -> ValueId,
) -> ValueId {
    let (zero, one) = (bounds.zero, bounds.one);
    reduce_nest(b, bounds, &[len], zero, &mut |b, k, acc| {
        let c = pred(b, k[0]);
        let inc = b.select(c, one, zero);
        b.addi(acc, inc)
    })
}

pub fn unique(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Unique::X)?;
    let rank = shape_of(b.m, x).len();
    let view = ops::Unique::of(b.m, op);
    let axis = match view.axis() {
        Some(a) => Some(crate::kernels::support::axis(b.m, op, a, rank)?),
        None => None,
    };
    let sorted = view.sorted() != 0;
    let elem = elem_of(b.m, x);
    let bounds = Bounds::new(b);
    let one = bounds.one;
    let dx = dims(b, x);
    let (outer, len, inner) = match axis {
        Some(a) => (
            product(b, one, &dx[..a]),
            dx[a],
            product(b, one, &dx[a + 1..]),
        ),
        None => (one, product(b, one, &dx), one),
    };
    let ty3 = Type::memref(vec![DYN; 3], elem.clone());
    let x3 =
        crate::kernels::support::views::reinterpret(b, x, &ty3, &[DYN; 3], &[outer, len, inner]);
    let sl = Slices {
        x3,
        outer,
        len,
        inner,
        float: elem.is_float(),
    };
    // Each slice's first equal slice.
    let idx_ty = Type::memref(vec![DYN], Type::Index);
    let first = alloc(b, &idx_ty, &[len]);
    loop_nest(b, &bounds, &[len], &mut |b, i| {
        let f = reduce_nest(b, &bounds, &[len], i[0], &mut |b, j, acc| {
            let earlier = b.cmpi(CmpI::Slt, j[0], acc);
            let s = sl.same(b, &bounds, j[0], i[0]);
            let hit = b.andi(earlier, s);
            b.select(hit, j[0], acc)
        });
        b.store(f, first, i);
    });
    let n_unique = count_if(b, &bounds, len, &mut |b, k| is_rep(b, first, k));
    // Output position of each representative.
    let pos = alloc(b, &idx_ty, &[len]);
    loop_nest(b, &bounds, &[len], &mut |b, i| {
        let p = count_if(b, &bounds, len, &mut |b, k| {
            let rep = is_rep(b, first, k);
            let before = if sorted {
                sl.less(b, &bounds, k, i[0])
            } else {
                b.cmpi(CmpI::Slt, k, i[0])
            };
            b.andi(rep, before)
        });
        b.store(p, pos, i);
    });
    let mut y_dims = dx.clone();
    match axis {
        Some(a) => y_dims[a] = n_unique,
        None => y_dims = vec![n_unique],
    }
    let y = alloc_result(b, op, 0, &y_dims)?;
    let y3 = crate::kernels::support::views::reinterpret(
        b,
        y,
        &ty3,
        &[DYN; 3],
        &[outer, n_unique, inner],
    );
    let mut extra = Vec::new();
    for (i, size) in [(1, n_unique), (2, len), (3, n_unique)] {
        if b.m.results(op).len() > i {
            extra.push(alloc_result(b, op, i, &[size])?);
        }
    }
    write_outputs(b, &bounds, &sl, (first, pos), y3, &extra);
    let mut out = vec![y];
    out.extend(extra);
    Ok(out)
}

/// Representatives write their slice into `y3` and, when asked for, their
/// index, every slice's inverse index and their count into `extra`.
fn write_outputs(
    b: &mut Builder<'_>,
    bounds: &Bounds,
    sl: &Slices,
    (first, pos): (ValueId, ValueId),
    y3: ValueId,
    extra: &[ValueId],
) {
    let i64t = Type::i64();
    let zero = bounds.zero;
    let elems = [sl.outer, sl.inner];
    loop_nest(b, bounds, &[sl.len], &mut |b, i| {
        let rep = is_rep(b, first, i[0]);
        let f = b.load(first, i);
        let at = b.load(pos, &[f]);
        let p = b.select(rep, at, zero);
        loop_nest(b, bounds, &elems, &mut |b, or| {
            let v = b.load(sl.x3, &[or[0], i[0], or[1]]);
            let old = b.load(y3, &[or[0], p, or[1]]);
            let v = b.select(rep, v, old);
            b.store(v, y3, &[or[0], p, or[1]]);
        });
        if let Some(&ind) = extra.first() {
            let old = b.load(ind, &[p]);
            let v = from_index(b, i[0], &i64t);
            let v = b.select(rep, v, old);
            b.store(v, ind, &[p]);
        }
        if let Some(&inv) = extra.get(1) {
            let v = from_index(b, at, &i64t);
            b.store(v, inv, i);
        }
        if let Some(&cnt) = extra.get(2) {
            let c = count_if(b, bounds, sl.len, &mut |b, k| {
                let fk = b.load(first, &[k]);
                b.cmpi(CmpI::Eq, fk, i[0])
            });
            let old = b.load(cnt, &[p]);
            let v = from_index(b, c, &i64t);
            let v = b.select(rep, v, old);
            b.store(v, cnt, &[p]);
        }
    });
}
