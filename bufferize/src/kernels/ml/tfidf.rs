//! TfIdfVectorizer over an int64 pool: each pool n-gram (sizes within
//! [min_gram_length, max_gram_length]) is counted at every start position
//! and skip distance 1..=max_skip_count+1 (unigrams once), as the ONNX
//! reference's n-gram trie counts; then TF, IDF or TFIDF weighting.

use crate::convert::{dims, Lowering};
use crate::kernels::{support::alloc_result, support::elem_of, support::shape_of};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::builder::{CmpF, CmpI};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

/// Pool n-grams to count: (tokens, output column).
fn grams(b: &Builder<'_>, op: OpId, min: i64, max: i64) -> Result<Vec<(Vec<i64>, i64)>> {
    let m = &*b.m;
    let bad = |what: &str| op_error(m, op, format!("TfIdfVectorizer: {what}"));
    let view = ops::TfIdfVectorizer::of(m, op);
    let pool = view.pool_int64s().ok_or_else(|| bad("needs pool_int64s"))?;
    let (counts, indexes) = (view.ngram_counts(), view.ngram_indexes());
    let mut out = Vec::new();
    let mut id = 0usize;
    for (k, &start) in counts.iter().enumerate() {
        let n = k as i64 + 1;
        let end = counts.get(k + 1).copied().unwrap_or(pool.len() as i64);
        let seg = usize::try_from(start)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(s, e)| pool.get(s..e))
            .ok_or_else(|| bad("ngram_counts out of the pool"))?;
        for g in seg.chunks(n as usize) {
            if (min..=max).contains(&n) && g.len() == n as usize {
                let col = *indexes
                    .get(id)
                    .ok_or_else(|| bad("too few ngram_indexes"))?;
                out.push((g.to_vec(), col));
            }
            id += 1;
        }
    }
    Ok(out)
}

/// The output columns: the result's last dim, else one past the largest
/// n-gram index (the attribute fixes the count).
fn columns(b: &Builder<'_>, op: OpId, last: Option<i64>) -> Result<i64> {
    let indexes = ops::TfIdfVectorizer::of(b.m, op).ngram_indexes();
    let cols = match last {
        Some(c) if c != ir::DYN => c,
        _ => indexes.iter().max().map_or(0, |&m| m.saturating_add(1)),
    };
    if cols < 0 || indexes.iter().any(|&i| i < 0 || i >= cols) {
        return Err(op_error(b.m, op, "ngram_indexes out of the output columns"));
    }
    Ok(cols)
}

pub fn tfidf(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::TfIdfVectorizer::X)?;
    let rank = shape_of(b.m, x).len();
    if !(1..=2).contains(&rank) || !elem_of(b.m, x).is_int() {
        return Err(op_error(b.m, op, "expects a 1-D or 2-D integer input"));
    }
    let view = ops::TfIdfVectorizer::of(b.m, op);
    let (min, max) = (view.min_gram_length(), view.max_gram_length());
    let skips = view.max_skip_count().max(0);
    let mode = view.mode().to_string();
    let weights = view.weights();
    let grams = grams(b, op, min, max)?;
    let xt = elem_of(b.m, x);
    let dx = dims(b, x);
    let bounds = Bounds::new(b);
    let (rows, len) = if rank == 2 {
        (dx[0], dx[1])
    } else {
        (bounds.one, dx[0])
    };
    let out_ty = crate::kernels::support::result_memref_type(b.m, op, 0)?;
    let out_shape = out_ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    if out_shape.len() != rank {
        return Err(op_error(
            b.m,
            op,
            "the result rank differs from the input's",
        ));
    }
    let cols = columns(b, op, out_shape.last().copied())?;
    let cv = b.const_index(cols);
    let out_dims = if rank == 2 { vec![rows, cv] } else { vec![cv] };
    let out = alloc_result(b, op, 0, &out_dims)?;
    let f32t = Type::f32();
    let at = |r: ValueId, c: ValueId| if rank == 2 { vec![r, c] } else { vec![c] };
    loop_nest(b, &bounds, &[rows, cv], &mut |b, rc| {
        let z = b.constant(&f32t, 0.0);
        b.store(z, out, &at(rc[0], rc[1]));
    });
    loop_nest(b, &bounds, &[rows], &mut |b, r| {
        let row = |i: ValueId| if rank == 2 { vec![r[0], i] } else { vec![i] };
        for (g, col) in &grams {
            let n = g.len() as i64;
            let dists = if n == 1 { 1 } else { skips + 1 };
            let mut total = bounds.zero;
            for s in 1..=dists {
                let c = reduce_nest(b, &bounds, &[len], bounds.zero, &mut |b, i, acc| {
                    let mut hit = b.const_bool(true);
                    for (k, &tok) in g.iter().enumerate() {
                        let off = b.const_index(k as i64 * s);
                        let p = b.addi(i[0], off);
                        let fits = b.cmpi(CmpI::Slt, p, len);
                        let p = b.select(fits, p, bounds.zero);
                        let v = b.load(x, &row(p));
                        let t = b.const_int(tok, xt.clone());
                        let e = b.cmpi(CmpI::Eq, v, t);
                        let e = b.andi(e, fits);
                        hit = b.andi(hit, e);
                    }
                    let inc = b.select(hit, bounds.one, bounds.zero);
                    b.addi(acc, inc)
                });
                total = b.addi(total, c);
            }
            let Ok(cu) = usize::try_from(*col) else {
                continue;
            };
            if *col >= cols {
                continue;
            }
            let cc = b.const_index(cu as i64);
            let idx = at(r[0], cc);
            let old = b.load(out, &idx);
            let t = b.index_cast(total, Type::i64());
            let t = b.sitofp(t, f32t.clone());
            let v = b.add(old, t);
            b.store(v, out, &idx);
        }
    });
    if mode != "TF" {
        loop_nest(b, &bounds, &[rows, cv], &mut |b, rc| {
            let idx = at(rc[0], rc[1]);
            let f = b.load(out, &idx);
            let zero = b.constant(&f32t, 0.0);
            let one = b.constant(&f32t, 1.0);
            // Weight of this column (1 without weights).
            let mut w = one;
            if let Some(ws) = &weights {
                w = zero;
                for (k, &wv) in ws.iter().enumerate() {
                    let kv = b.const_index(k as i64);
                    let here = b.cmpi(CmpI::Eq, rc[1], kv);
                    let c = b.constant(&f32t, wv);
                    w = b.select(here, c, w);
                }
            }
            let v = if mode == "IDF" {
                let pos = b.cmpf(CmpF::Ogt, f, zero);
                b.select(pos, w, zero)
            } else {
                b.mul(w, f)
            };
            b.store(v, out, &idx);
        });
    }
    Ok(vec![out])
}
