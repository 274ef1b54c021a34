//! `ai.onnx.ml` operators on constant inputs, by the reference semantics
//! of `onnx::ml` (what the bufferized kernels compute, in f64 here).

use super::dense::{from_f64s, T};
use super::{Fold, Op};
use ir::elements::{DType, NumClass, WideNum};
use onnx::ml::{Classify, Forest, LabelMap, Linear, PostTransform};
use onnx::ops;

/// The operand's rows of features: `[N, F]`, or `[F]` as one row.
fn rows(x: &T) -> Option<(usize, usize)> {
    match x.shape[..] {
        [f] => Some((1, f)),
        [n, f] => Some((n, f)),
        _ => None,
    }
}

/// A float result of `shape` from f64 values.
fn floats(o: Op, i: usize, shape: Vec<usize>, v: Vec<f64>) -> ir::Result<T> {
    let dtype = o.dtype(i)?;
    Ok(T::new(dtype, shape, from_f64s(dtype, v)))
}

/// A per-feature list (one entry: the same for all) at feature `c`.
fn at(l: &[f64], c: usize, default: f64) -> f64 {
    match l.len() {
        0 => default,
        1 => l[0],
        _ => l.get(c).copied().unwrap_or(f64::NAN),
    }
}

/// `len` entries (>1) must match the `f` features.
fn per_feature(o: Op, len: usize, f: usize, what: &str) -> ir::Result<()> {
    if len > 1 && len != f {
        return Err(o.err(format!("{what} has {len} entries for {f} features")));
    }
    Ok(())
}

pub fn scaler(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let v = ops::Scaler::of(o.m, o.op);
    let (off, sc) = (
        v.offset().unwrap_or_default(),
        v.scale().unwrap_or_default(),
    );
    let f = x.shape.last().copied().unwrap_or(1);
    let len = off.len().max(sc.len());
    if len > 1 && x.rank() > 2 {
        return Err(o.err("per-feature values need a [N, F] or [F] input"));
    }
    per_feature(o, len, f, "offset")?;
    let y = x
        .floats()
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let c = i % f.max(1);
            (v - at(&off, c, 0.0)) * at(&sc, c, 1.0)
        })
        .collect();
    o.packed(vec![floats(o, 0, x.shape.clone(), y)?])
}

pub fn normalizer(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let Some((_, f)) = rows(x) else {
        return Ok(None);
    };
    let norm = ops::Normalizer::of(o.m, o.op).norm();
    let mut y = x.floats();
    for row in y.chunks_mut(f.max(1)) {
        let d = match norm {
            "MAX" => row.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            "L1" => row.iter().map(|v| v.abs()).sum(),
            "L2" => row.iter().map(|v| v * v).sum::<f64>().sqrt(),
            _ => return Err(o.err(format!("unknown norm '{norm}'"))),
        };
        if d != 0.0 {
            row.iter_mut().for_each(|v| *v /= d);
        }
    }
    o.packed(vec![floats(o, 0, x.shape.clone(), y)?])
}

pub fn binarizer(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let t = ops::Binarizer::of(o.m, o.op).threshold();
    let y = x
        .floats()
        .iter()
        .map(|&v| f64::from(u8::from(v > t)))
        .collect();
    o.packed(vec![x.with_floats(x.dtype, y)])
}

pub fn imputer(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let v = ops::Imputer::of(o.m, o.op);
    let f = x.shape.last().copied().unwrap_or(1).max(1);
    let data: Vec<WideNum> = if x.class() == ir::elements::NumClass::Float {
        let imp = v.imputed_value_floats().unwrap_or_default();
        let r = v.replaced_value_float();
        per_feature(o, imp.len(), f, "imputed values")?;
        let y: Vec<f64> = x
            .floats()
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let hit = v == r || (r.is_nan() && v.is_nan());
                if hit && !imp.is_empty() {
                    at(&imp, i % f, v)
                } else {
                    v
                }
            })
            .collect();
        from_f64s(x.dtype, y)
    } else {
        let imp = v.imputed_value_int64s().unwrap_or_default();
        let r = v.replaced_value_int64();
        per_feature(o, imp.len(), f, "imputed values")?;
        let pick = |i: usize| imp.get(if imp.len() == 1 { 0 } else { i % f }).copied();
        x.ints()
            .iter()
            .enumerate()
            .map(|(i, &v)| WideNum::from_i64(if v == r { pick(i).unwrap_or(v) } else { v }))
            .collect()
    };
    o.packed(vec![T::new(x.dtype, x.shape.clone(), data)])
}

pub fn array_feature_extractor(o: Op) -> Fold {
    let ts = o.dense();
    let (Some(x), Some(ind)) = (ts.get(0), ts.get(1)) else {
        return Ok(None);
    };
    let Some(&f) = x.shape.last() else {
        return Ok(None);
    };
    let picks = ind
        .ints()
        .iter()
        .map(|&i| usize::try_from(i).ok().filter(|&i| i < f))
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| o.err("an index is out of range of the last axis"))?;
    let lead: Vec<usize> = if x.rank() == 1 {
        vec![1]
    } else {
        x.shape[..x.rank() - 1].to_vec()
    };
    let mut data = Vec::with_capacity(lead.iter().product::<usize>() * picks.len());
    for row in x.data.chunks(f.max(1)) {
        data.extend(picks.iter().map(|&i| row[i]));
    }
    let mut shape = lead;
    shape.push(picks.len());
    o.packed(vec![T::new(x.dtype, shape, data)])
}

/// Each row's scores through `scores`, then `post`, as result 0 `[N, E]`.
fn regress(o: Op, e: usize, post: PostTransform, scores: impl Fn(&[f64]) -> Vec<f64>) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let Some((n, f)) = rows(x) else {
        return Ok(None);
    };
    let xf = x.floats();
    let mut y = Vec::with_capacity(n * e);
    for row in xf.chunks(f.max(1)).take(n) {
        let mut s = scores(row);
        post.apply(&mut s);
        y.extend(s);
    }
    o.packed(vec![floats(o, 0, vec![n, e], y)?])
}

/// Each row's raw scores through `scores`, then labels and probabilities.
fn classify(o: Op, c: &Classify, post: PostTransform, scores: impl Fn(&[f64]) -> Vec<f64>) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let Some((n, f)) = rows(x) else {
        return Ok(None);
    };
    let label_dtype = o.dtype(0)?;
    if label_dtype != DType::I64 {
        return Ok(None);
    }
    let xf = x.floats();
    let (mut labels, mut probs) = (Vec::with_capacity(n), Vec::new());
    let mut cols = 0;
    for row in xf.chunks(f.max(1)).take(n) {
        let (l, p) = c.finish(&scores(row), post);
        labels.push(WideNum::from_i64(l));
        cols = p.len();
        probs.extend(p);
    }
    let labels = T::new(DType::I64, vec![n], labels);
    o.packed(vec![labels, floats(o, 1, vec![n, cols], probs)?])
}

/// The feature count the forest reads must fit the input.
fn check_features(o: Op, f: &Forest) -> ir::Result<()> {
    let ts = o.dense();
    let width = ts.get(0).and_then(rows).map_or(0, |(_, w)| w);
    match f.max_feature() {
        Some(m) if m >= width => Err(o.err(format!(
            "feature {m} is out of range of the input's {width} features"
        ))),
        _ => Ok(()),
    }
}

pub fn linear_regressor(o: Op) -> Fold {
    let lin = Linear::regressor(o.m, o.op).map_err(|e| o.err(e))?;
    let ts = o.dense();
    if ts.get(0).and_then(rows).map(|(_, f)| f) != Some(lin.features) {
        return Err(o.err("the coefficient rows do not match the input's features"));
    }
    regress(o, lin.rows, lin.post, |r| lin.scores(r))
}

pub fn linear_classifier(o: Op) -> Fold {
    let ts = o.dense();
    let features = ts.get(0).and_then(rows).map(|(_, f)| f);
    let (lin, c) = Linear::classifier(o.m, o.op, features).map_err(|e| o.err(e))?;
    if features != Some(lin.features) {
        return Err(o.err("the coefficient rows do not match the input's features"));
    }
    classify(o, &c, lin.post, |r| lin.scores(r))
}

pub fn tree_regressor(o: Op) -> Fold {
    let f = Forest::regressor(o.m, o.op).map_err(|e| o.err(e))?;
    check_features(o, &f)?;
    regress(o, f.targets, f.post, |r| f.scores(r))
}

pub fn tree_ensemble(o: Op) -> Fold {
    let f = Forest::tree_ensemble(o.m, o.op).map_err(|e| o.err(e))?;
    check_features(o, &f)?;
    regress(o, f.targets, f.post, |r| f.scores(r))
}

pub fn tree_classifier(o: Op) -> Fold {
    let (f, c) = Forest::classifier(o.m, o.op).map_err(|e| o.err(e))?;
    check_features(o, &f)?;
    classify(o, &c, f.post, |r| f.scores(r))
}

pub fn label_encoder(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let map = LabelMap::of(o.m, o.op).map_err(|e| o.err(e))?;
    if (x.class() == NumClass::Float) != (map.key.class() == NumClass::Float) {
        return Ok(None);
    }
    let data = x.data.iter().map(|&v| map.get(v)).collect();
    o.packed(vec![T::new(o.dtype(0)?, x.shape.clone(), data)])
}
