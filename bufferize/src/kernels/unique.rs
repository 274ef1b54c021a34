//! Unique (flattened, or of slices along `axis`) by O(L²) comparisons: each
//! slice's first equal slice is its representative; representatives are
//! ordered by first occurrence, or lexicographically (`sorted`, numpy's
//! order: row-major over the other dims). The output sizes are counted
//! first, then allocated.

use super::build::from_index;
use super::reduce::normalize_axis;
use super::scalar;
use super::{alloc_result, attr_int, elem_of, load_at, shape_of, store_at};
use crate::convert::{alloc, dims, Lowering};
use crate::loops::{self, loop_nest, reduce_nest, Bounds};
use ir::{Builder, OpId, Result, Type, ValueId, DYN};

fn product(b: &mut Builder<'_>, one: ValueId, vals: &[ValueId]) -> ValueId {
    vals.iter().fold(one, |acc, &v| loops::mul(b, acc, v))
}

pub fn unique(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let rank = shape_of(b.m, x).len();
    let axis = match b.m.attr(op, "axis").and_then(ir::Attribute::as_int) {
        Some(a) => Some(normalize_axis(b, op, a, rank)?),
        None => None,
    };
    let sorted = attr_int(b.m, op, "sorted", 1) != 0;
    let elem = elem_of(b.m, x);
    let bounds = Bounds::new(b);
    let (zero, one) = (bounds.zero, bounds.one);
    let dx = dims(b, x);
    // x as [outer, L, inner]: slice i is x3[:, i, :].
    let (outer, len, inner) = match axis {
        Some(a) => (
            product(b, one, &dx[..a]),
            dx[a],
            product(b, one, &dx[a + 1..]),
        ),
        None => (one, product(b, one, &dx), one),
    };
    let ty3 = Type::memref(vec![DYN; 3], elem.clone());
    let x3 = super::shape::reinterpret(b, x, &ty3, &[DYN; 3], &[outer, len, inner]);
    let elems = [outer, inner];
    let float = elem.is_float();
    let eq = |b: &mut Builder<'_>, p: ValueId, q: ValueId| {
        if float {
            scalar::cmpf(b, "oeq", p, q)
        } else {
            scalar::cmpi(b, "eq", p, q)
        }
    };
    let same = |b: &mut Builder<'_>, i: ValueId, j: ValueId| {
        let t = b.const_bool(true);
        reduce_nest(b, &bounds, &elems, t, &mut |b, or, acc| {
            let p = load_at(b, x3, &[or[0], i, or[1]]);
            let q = load_at(b, x3, &[or[0], j, or[1]]);
            let e = eq(b, p, q);
            loops::and(b, acc, e)
        })
    };
    let idx_ty = Type::memref(vec![DYN], Type::Index);
    let first = alloc(b, &idx_ty, &[len]);
    loop_nest(b, &bounds, &[len], &mut |b, i| {
        let f = reduce_nest(b, &bounds, &[len], i[0], &mut |b, j, acc| {
            let earlier = loops::cmp(b, "slt", j[0], acc);
            let s = same(b, j[0], i[0]);
            let hit = loops::and(b, earlier, s);
            loops::select(b, hit, j[0], acc)
        });
        store_at(b, f, first, i);
    });
    let is_rep = |b: &mut Builder<'_>, i: ValueId| {
        let f = load_at(b, first, &[i]);
        loops::cmp(b, "eq", f, i)
    };
    let count_if = |b: &mut Builder<'_>,
                    pred: &mut dyn FnMut(&mut Builder<'_>, ValueId) -> ValueId| {
        reduce_nest(b, &bounds, &[len], zero, &mut |b, k, acc| {
            let c = pred(b, k[0]);
            let inc = loops::select(b, c, one, zero);
            loops::add(b, acc, inc)
        })
    };
    let n_unique = count_if(b, &mut |b, k| is_rep(b, k));
    // Output position of each representative.
    let pos = alloc(b, &idx_ty, &[len]);
    loop_nest(b, &bounds, &[len], &mut |b, i| {
        let p = count_if(b, &mut |b, k| {
            let rep = is_rep(b, k);
            let before = if sorted {
                // Lexicographic: the first differing element decides.
                let f = b.const_bool(false);
                let init = [f, f];
                let mut acc = init.to_vec();
                let l = b.scf_for(zero, outer, one, &init, |b, o, a| {
                    let r = b.scf_for(zero, inner, one, a, |b, r, a| {
                        let p = load_at(b, x3, &[o, k, r]);
                        let q = load_at(b, x3, &[o, i[0], r]);
                        let e = eq(b, p, q);
                        let t = b.const_bool(true);
                        let ne = b.same("arith.xori", &[e, t]);
                        let undecided = b.same("arith.xori", &[a[0], t]);
                        let now = loops::and(b, undecided, ne);
                        let lt = scalar::compare(b, "lt", p, q);
                        vec![
                            b.same("arith.ori", &[a[0], now]),
                            loops::select(b, now, lt, a[1]),
                        ]
                    });
                    b.m.results(r).to_vec()
                });
                acc.copy_from_slice(&b.m.results(l)[..2]);
                acc[1]
            } else {
                loops::cmp(b, "slt", k, i[0])
            };
            loops::and(b, rep, before)
        });
        store_at(b, p, pos, i);
    });
    let mut y_dims = dx.clone();
    match axis {
        Some(a) => y_dims[a] = n_unique,
        None => y_dims = vec![n_unique],
    }
    let y = alloc_result(b, op, 0, &y_dims)?;
    let y3 = super::shape::reinterpret(b, y, &ty3, &[DYN; 3], &[outer, n_unique, inner]);
    let i64t = Type::i64();
    let mut extra = Vec::new();
    for (i, size) in [(1, n_unique), (2, len), (3, n_unique)] {
        if b.m.results(op).len() > i {
            extra.push(alloc_result(b, op, i, &[size])?);
        }
    }
    loop_nest(b, &bounds, &[len], &mut |b, i| {
        let rep = is_rep(b, i[0]);
        let f = load_at(b, first, i);
        let at = load_at(b, pos, &[f]);
        // Representatives write their slice, index and count.
        let p = loops::select(b, rep, at, zero);
        loop_nest(b, &bounds, &elems, &mut |b, or| {
            let v = load_at(b, x3, &[or[0], i[0], or[1]]);
            let old = load_at(b, y3, &[or[0], p, or[1]]);
            let v = scalar::select(b, rep, v, old);
            store_at(b, v, y3, &[or[0], p, or[1]]);
        });
        if let Some(&ind) = extra.first() {
            let old = load_at(b, ind, &[p]);
            let v = from_index(b, i[0], &i64t);
            let v = scalar::select(b, rep, v, old);
            store_at(b, v, ind, &[p]);
        }
        if let Some(&inv) = extra.get(1) {
            let v = from_index(b, at, &i64t);
            store_at(b, v, inv, i);
        }
        if let Some(&cnt) = extra.get(2) {
            let c = count_if(b, &mut |b, k| {
                let fk = load_at(b, first, &[k]);
                loops::cmp(b, "eq", fk, i[0])
            });
            let old = load_at(b, cnt, &[p]);
            let v = from_index(b, c, &i64t);
            let v = scalar::select(b, rep, v, old);
            store_at(b, v, cnt, &[p]);
        }
    });
    let mut out = vec![y];
    out.extend(extra);
    Ok(out)
}
