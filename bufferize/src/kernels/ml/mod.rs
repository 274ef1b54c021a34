//! The `ai.onnx.ml` models over rows of features (`[N, F]`, or one row
//! `[F]`): Scaler, Normalizer, Imputer, LinearRegressor and
//! LinearClassifier, and the last step they share with the tree ensembles
//! (`trees.rs`): a row of raw scores in a scratch buffer goes through the
//! post transform into the output row, or becomes a label and a
//! probability row. The models are decoded by `onnx::ml`, which also
//! holds the reference semantics constant folding uses.

pub mod tfidf;
pub mod trees;

use crate::convert::{alloc, dims, Lowering};
use crate::kernels::{support::alloc_result, support::elem_of, support::scalar};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::builder::{Cmp, CmpF, CmpI};
use ir::dialects::op_error;
use ir::elements::{DType, Elements, NumClass, WideNum};
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ml::{Classify, LabelMap, Linear, PostTransform, Rule, Scores};
use onnx::ops;

/// A constant vector as a `memref.global` of `t` (floats or integers).
pub fn global(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    vals: &[WideNum],
    t: &Type,
) -> Result<ValueId> {
    let dtype =
        DType::from_type(t).ok_or_else(|| op_error(b.m, op, format!("no constant of {t}")))?;
    let e = Elements::from_wide(dtype, vec![vals.len() as i64], vals)
        .map_err(|e| op_error(b.m, op, e.to_string()))?;
    Ok(cx.global(b, &e))
}

pub fn floats(v: &[f64]) -> Vec<WideNum> {
    v.iter().map(|&x| WideNum::from_f64(x)).collect()
}

pub fn ints(v: impl IntoIterator<Item = i64>) -> Vec<WideNum> {
    v.into_iter().map(WideNum::from_i64).collect()
}

/// An attribute error as a diagnostic naming the op.
pub fn model_error<'a>(b: &'a Builder<'_>, op: OpId) -> impl Fn(String) -> ir::Diagnostic + 'a {
    move |e| op_error(b.m, op, e)
}

/// The input as rows of features: `[N, F]`, or `[F]` as one row.
pub struct Rows {
    pub x: ValueId,
    pub n: ValueId,
    pub f: ValueId,
    two_d: bool,
}

impl Rows {
    pub fn of(b: &mut Builder<'_>, op: OpId, x: ValueId) -> Result<Rows> {
        let d = dims(b, x);
        match d[..] {
            [f] => Ok(Rows {
                x,
                n: b.const_index(1),
                f,
                two_d: false,
            }),
            [n, f] => Ok(Rows {
                x,
                n,
                f,
                two_d: true,
            }),
            _ => Err(op_error(b.m, op, "expects a 1-D or 2-D input [N, F]")),
        }
    }
    /// The index of feature `c` of row `r`.
    pub fn at(&self, r: ValueId, c: ValueId) -> Vec<ValueId> {
        if self.two_d {
            vec![r, c]
        } else {
            vec![c]
        }
    }
    /// Feature `c` of row `r` as `t`.
    pub fn load(
        &self,
        b: &mut Builder<'_>,
        op: OpId,
        r: ValueId,
        c: ValueId,
        t: &Type,
    ) -> Result<ValueId> {
        let v = b.load(self.x, &self.at(r, c));
        scalar::convert(b, op, v, t)
    }
}

/// A per-feature constant (`len` 1: the same for all) at feature `c`.
fn per_feature(b: &mut Builder<'_>, g: Option<ValueId>, one: ValueId, c: ValueId) -> ValueId {
    match g {
        Some(g) => b.load(g, &[c]),
        None => one,
    }
}

/// Checks that a per-feature list of `len` (> 1) entries matches the
/// last dim `f`.
fn check_features(b: &mut Builder<'_>, op: OpId, f: ValueId, len: usize, what: &str) -> Result<()> {
    let n = b.const_index(len as i64);
    let msg = format!("{what} has {len} entries, which differs from the number of features");
    crate::kernels::support::checks::equal(b, op, f, n, &msg)
}

/// `Y = (X - offset) * scale`, per feature or for all.
pub fn scaler(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Scaler::X)?;
    let v = ops::Scaler::of(b.m, op);
    let (offset, scale) = (
        v.offset().unwrap_or_default(),
        v.scale().unwrap_or_default(),
    );
    let len = offset.len().max(scale.len());
    let fill = |l: Vec<f64>, d: f64| match l.len() {
        0 => vec![d; len],
        1 => vec![l[0]; len],
        _ => l,
    };
    let (offset, scale) = (fill(offset, 0.0), fill(scale, 1.0));
    if offset.len() != scale.len() {
        return Err(op_error(b.m, op, "offset and scale differ in length"));
    }
    let dx = dims(b, x);
    let f32t = Type::f32();
    let per = len > 1;
    if per {
        if !(1..=2).contains(&dx.len()) {
            return Err(op_error(
                b.m,
                op,
                "per-feature values need a [N, F] or [F] input",
            ));
        }
        check_features(b, op, dx[dx.len() - 1], len, "offset")?;
    }
    let (og, sg) = if per {
        (
            Some(global(cx, b, op, &floats(&offset), &f32t)?),
            Some(global(cx, b, op, &floats(&scale), &f32t)?),
        )
    } else {
        (None, None)
    };
    let out = alloc_result(b, op, 0, &dx)?;
    let bounds = Bounds::new(b);
    let (o0, s0) = (
        offset.first().copied().unwrap_or(0.0),
        scale.first().copied().unwrap_or(1.0),
    );
    let mut err = None;
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let v = b.load(x, ivs);
        let v = match scalar::convert(b, op, v, &f32t) {
            Ok(v) => v,
            Err(e) => {
                err = Some(e);
                return;
            }
        };
        let c = ivs.last().copied().unwrap_or(bounds.zero);
        let (oc, sc) = (b.constant(&f32t, o0), b.constant(&f32t, s0));
        let o = per_feature(b, og, oc, c);
        let s = per_feature(b, sg, sc, c);
        let d = b.subf(v, o);
        let y = b.mulf(d, s);
        b.store(y, out, ivs);
    });
    crate::kernels::support::finish(err, vec![out])
}

/// Each row divided by its max, L1 or L2 norm (unchanged when that is 0).
pub fn normalizer(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Normalizer::X)?;
    let norm = ops::Normalizer::of(b.m, op).norm().to_string();
    if !matches!(norm.as_str(), "MAX" | "L1" | "L2") {
        return Err(op_error(b.m, op, format!("unknown norm '{norm}'")));
    }
    let rows = Rows::of(b, op, x)?;
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let t = Type::f32();
    let bounds = Bounds::new(b);
    let mut err = None;
    loop_nest(b, &bounds, &[rows.n], &mut |b, r| {
        let init = match norm.as_str() {
            "MAX" => scalar::lowest(b, &t),
            _ => b.zero(&t),
        };
        let acc = reduce_nest(b, &bounds, &[rows.f], init, &mut |b, c, acc| {
            let v = match rows.load(b, op, r[0], c[0], &t) {
                Ok(v) => v,
                Err(e) => {
                    err = Some(e);
                    return acc;
                }
            };
            match norm.as_str() {
                "MAX" => b.maximumf(acc, v),
                "L1" => {
                    let a = b.absf(v);
                    b.addf(acc, a)
                }
                _ => {
                    let sq = b.mulf(v, v);
                    b.addf(acc, sq)
                }
            }
        });
        let d = if norm == "L2" { b.sqrt(acc) } else { acc };
        let zero = b.zero(&t);
        let nonzero = b.cmpf(CmpF::One, d, zero);
        loop_nest(b, &bounds, &[rows.f], &mut |b, c| {
            let Ok(v) = rows.load(b, op, r[0], c[0], &t) else {
                return;
            };
            let q = b.divf(v, d);
            let y = b.select(nonzero, q, v);
            b.store(y, out, &rows.at(r[0], c[0]));
        });
    });
    crate::kernels::support::finish(err, vec![out])
}

/// Values equal to the replaced one (NaN matching NaN) become the imputed
/// value of their feature.
pub fn imputer(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Imputer::X)?;
    let t = elem_of(b.m, x);
    let v = ops::Imputer::of(b.m, op);
    let (imputed, replaced) = if t.is_float() {
        let i = v.imputed_value_floats().unwrap_or_default();
        (floats(&i), WideNum::from_f64(v.replaced_value_float()))
    } else {
        let i = v.imputed_value_int64s().unwrap_or_default();
        (ints(i), WideNum::from_i64(v.replaced_value_int64()))
    };
    if imputed.is_empty() {
        return Err(op_error(
            b.m,
            op,
            format!("needs imputed values for {t} input"),
        ));
    }
    let dx = dims(b, x);
    let per = imputed.len() > 1;
    if per {
        let last = dx
            .last()
            .copied()
            .ok_or_else(|| op_error(b.m, op, "a scalar input"))?;
        check_features(b, op, last, imputed.len(), "imputed values")?;
    }
    let g = if per {
        Some(global(cx, b, op, &imputed, &t)?)
    } else {
        None
    };
    let out = alloc_result(b, op, 0, &dx)?;
    let bounds = Bounds::new(b);
    let first = imputed[0];
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let v = b.load(x, ivs);
        let hit = if t.is_float() {
            let r = replaced.f64();
            if r.is_nan() {
                b.cmpf(CmpF::Uno, v, v)
            } else {
                let rc = b.constant(&t, r);
                b.cmpf(CmpF::Oeq, v, rc)
            }
        } else {
            let rc = b.const_int(replaced.i64(), t.clone());
            b.cmpi(CmpI::Eq, v, rc)
        };
        let one = if t.is_float() {
            b.constant(&t, first.f64())
        } else {
            b.const_int(first.i64(), t.clone())
        };
        let c = ivs.last().copied().unwrap_or(bounds.zero);
        let imp = per_feature(b, g, one, c);
        let y = b.select(hit, imp, v);
        b.store(y, out, ivs);
    });
    Ok(vec![out])
}

/// A linear model's weights (`[E, F]`) and intercepts (`[E]`) as globals.
struct LinearTables {
    w: ValueId,
    bias: ValueId,
    e: usize,
}

impl LinearTables {
    /// The tables of `lin`, after checking the input's features against
    /// them.
    fn new(
        cx: &mut Lowering,
        b: &mut Builder<'_>,
        op: OpId,
        rows: &Rows,
        lin: &Linear,
    ) -> Result<Self> {
        check_features(b, op, rows.f, lin.features, "each coefficient row")?;
        let shape = vec![lin.rows as i64, lin.features as i64];
        let e = Elements::from_wide(DType::F32, shape, &floats(&lin.weights))
            .map_err(|e| op_error(b.m, op, e.to_string()))?;
        let w = cx.global(b, &e);
        let bias = global(cx, b, op, &floats(&lin.intercepts), &Type::f32())?;
        Ok(LinearTables {
            w,
            bias,
            e: lin.rows,
        })
    }

    /// Row `r`'s scores into `acc` (`[E]`, f32).
    fn row(&self, b: &mut Builder<'_>, op: OpId, rows: &Rows, acc: ValueId, r: ValueId) {
        let t = Type::f32();
        let bounds = Bounds::new(b);
        let ev = b.const_index(self.e as i64);
        loop_nest(b, &bounds, &[ev], &mut |b, k| {
            let init = b.load(self.bias, &[k[0]]);
            let s = reduce_nest(b, &bounds, &[rows.f], init, &mut |b, c, s| {
                let Ok(x) = rows.load(b, op, r, c[0], &t) else {
                    return s;
                };
                let wv = b.load(self.w, &[k[0], c[0]]);
                scalar::mul_acc(b, s, x, wv)
            });
            b.store(s, acc, &[k[0]]);
        });
    }
}

pub fn linear_regressor(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::LinearRegressor::X)?;
    let lin = Linear::regressor(b.m, op).map_err(model_error(b, op))?;
    let rows = Rows::of(b, op, x)?;
    let tables = LinearTables::new(cx, b, op, &rows, &lin)?;
    let e = b.const_index(lin.rows as i64);
    let out = alloc_result(b, op, 0, &[rows.n, e])?;
    let acc = alloc(b, &Type::memref(vec![lin.rows as i64], Type::f32()), &[]);
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &[rows.n], &mut |b, r| {
        tables.row(b, op, &rows, acc, r[0]);
        store_row(b, acc, lin.rows, lin.post, out, r[0]);
    });
    Ok(vec![out])
}

pub fn linear_classifier(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::LinearClassifier::X)?;
    let features = crate::kernels::support::shape_of(b.m, x)
        .last()
        .and_then(|&f| usize::try_from(f).ok());
    let (lin, classify) = Linear::classifier(b.m, op, features).map_err(model_error(b, op))?;
    let rows = Rows::of(b, op, x)?;
    let tables = LinearTables::new(cx, b, op, &rows, &lin)?;
    let acc = alloc(b, &Type::memref(vec![lin.rows as i64], Type::f32()), &[]);
    let out = Outputs::new(cx, b, op, rows.n, &classify, lin.rows)?;
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &[rows.n], &mut |b, r| {
        tables.row(b, op, &rows, acc, r[0]);
        out.finish_row(b, acc, lin.rows, &classify, lin.post, r[0]);
    });
    Ok(vec![out.labels, out.probs])
}

/// `post` on the `e` scores of the row buffer `acc` (`[e]`), in place.
pub fn post_row(b: &mut Builder<'_>, acc: ValueId, e: usize, post: PostTransform) {
    let t = elem_of(b.m, acc);
    let bounds = Bounds::new(b);
    let ev = b.const_index(e as i64);
    let each = |b: &mut Builder<'_>, f: &dyn Fn(&mut Builder<'_>, ValueId) -> ValueId| {
        loop_nest(b, &bounds, &[ev], &mut |b, k| {
            let v = b.load(acc, k);
            let y = f(b, v);
            b.store(y, acc, k);
        });
    };
    match post {
        PostTransform::None => {}
        PostTransform::Logistic => each(b, &logistic),
        PostTransform::Probit => each(b, &probit),
        PostTransform::Softmax | PostTransform::SoftmaxZero => {
            let zero_kept = post == PostTransform::SoftmaxZero;
            let lowest = scalar::lowest(b, &t);
            let max = reduce_nest(b, &bounds, &[ev], lowest, &mut |b, k, m| {
                let v = b.load(acc, k);
                let mx = b.maximumf(m, v);
                if zero_kept {
                    let z = b.zero(&t);
                    let nz = b.cmpf(CmpF::Une, v, z);
                    b.select(nz, mx, m)
                } else {
                    mx
                }
            });
            let zero = b.zero(&t);
            let sum = reduce_nest(b, &bounds, &[ev], zero, &mut |b, k, s| {
                let v = b.load(acc, k);
                let d = b.subf(v, max);
                let mut ex = b.exp(d);
                if zero_kept {
                    let z = b.zero(&t);
                    let nz = b.cmpf(CmpF::Une, v, z);
                    ex = b.select(nz, ex, z);
                }
                b.store(ex, acc, k);
                b.addf(s, ex)
            });
            // A row of zeros is 0/0 (NaN), as onnxruntime computes it.
            each(b, &|b, v| b.divf(v, sum));
        }
    }
}

/// `1 / (1 + e^-x)`.
pub fn logistic(b: &mut Builder<'_>, x: ValueId) -> ValueId {
    let n = b.negf(x);
    let e = b.exp(n);
    let one = b.constant_like(x, 1.0);
    let d = b.addf(one, e);
    b.divf(one, d)
}

/// `sqrt(2) * erfinv(2p - 1)` (the polynomials of `onnx::ml::erfinv`).
pub fn probit(b: &mut Builder<'_>, p: ValueId) -> ValueId {
    let c = |b: &mut Builder<'_>, v: f64| b.constant_like(p, v);
    let (one, two) = (c(b, 1.0), c(b, 2.0));
    let x = b.mulf(p, two);
    let x = b.subf(x, one);
    let a = b.subf(one, x);
    let z = b.addf(one, x);
    let w = b.mulf(a, z);
    let w = b.log(w);
    let w = b.negf(w);
    let five = c(b, 5.0);
    let central = b.cmpf(CmpF::Olt, w, five);
    let horner = |b: &mut Builder<'_>, w: ValueId, cs: &[f64]| {
        cs.iter().fold(None, |p: Option<ValueId>, &k| {
            let kc = b.constant_like(w, k);
            Some(match p {
                Some(p) => b.fma(p, w, kc),
                None => kc,
            })
        })
    };
    let half = c(b, 2.5);
    let wc = b.subf(w, half);
    let pc = horner(b, wc, &onnx::ml::ERFINV_CENTRAL).unwrap_or(one);
    let sq = b.sqrt(w);
    let three = c(b, 3.0);
    let wt = b.subf(sq, three);
    let pt = horner(b, wt, &onnx::ml::ERFINV_TAIL).unwrap_or(one);
    let poly = b.select(central, pc, pt);
    let e = b.mulf(poly, x);
    let s2 = c(b, std::f64::consts::SQRT_2);
    b.mulf(e, s2)
}

/// Converts the `e` scores of `acc` through `post` and stores them in row
/// `r` of `out` (`[N, e]`).
pub fn store_row(
    b: &mut Builder<'_>,
    acc: ValueId,
    e: usize,
    post: PostTransform,
    out: ValueId,
    r: ValueId,
) {
    post_row(b, acc, e, post);
    let t = elem_of(b.m, out);
    let bounds = Bounds::new(b);
    let ev = b.const_index(e as i64);
    loop_nest(b, &bounds, &[ev], &mut |b, k| {
        let v = b.load(acc, k);
        let v = scalar::fcast(b, v, &t);
        b.store(v, out, &[r, k[0]]);
    });
}

/// A classifier's two results: labels `[N]` and probabilities `[N, C]`.
pub struct Outputs {
    pub labels: ValueId,
    pub probs: ValueId,
    table: Option<ValueId>,
}

impl Outputs {
    pub fn new(
        cx: &mut Lowering,
        b: &mut Builder<'_>,
        op: OpId,
        n: ValueId,
        classify: &Classify,
        raw: usize,
    ) -> Result<Outputs> {
        let lt = crate::kernels::support::result_memref_type(b.m, op, 0)?;
        if !lt.element_type().is_int() {
            return Err(op_error(b.m, op, onnx::ml::STRING_LABELS));
        }
        let labels = alloc_result(b, op, 0, &[n])?;
        let cols = b.const_index(classify.columns(raw) as i64);
        let probs = alloc_result(b, op, 1, &[n, cols])?;
        let table = match classify.rule {
            Rule::Argmax => {
                let t = lt.element_type().clone();
                Some(global(
                    cx,
                    b,
                    op,
                    &ints(classify.labels.iter().copied()),
                    &t,
                )?)
            }
            Rule::Threshold { .. } => None,
        };
        Ok(Outputs {
            labels,
            probs,
            table,
        })
    }

    /// Row `r`'s label and probabilities from its `e` raw scores in `acc`.
    pub fn finish_row(
        &self,
        b: &mut Builder<'_>,
        acc: ValueId,
        e: usize,
        classify: &Classify,
        post: PostTransform,
        r: ValueId,
    ) {
        let lt = elem_of(b.m, self.labels);
        let t = elem_of(b.m, acc);
        let label = match classify.rule {
            Rule::Argmax => {
                let best = argmax(b, acc, e);
                match self.table {
                    Some(table) => b.load(table, &[best]),
                    None => b.const_int(0, lt.clone()),
                }
            }
            Rule::Threshold { column, at } => {
                let ci = b.const_index(column as i64);
                let s = b.load(acc, &[ci]);
                let atc = b.constant(&t, at);
                let yes = b.cmpf(CmpF::Ogt, s, atc);
                let pick = |i: usize| classify.labels.get(i).copied().unwrap_or_default();
                let l1 = b.const_int(pick(1), lt.clone());
                let l0 = b.const_int(pick(0), lt.clone());
                b.select(yes, l1, l0)
            }
        };
        b.store(label, self.labels, &[r]);
        match classify.scores {
            Scores::Columns => store_row(b, acc, e, post, self.probs, r),
            Scores::Binary { positive } => {
                let zero = b.const_index(0);
                let s = b.load(acc, &[zero]);
                let one = b.constant(&t, 1.0);
                let (p0, p1) = match (post, positive) {
                    (PostTransform::Logistic, true) => {
                        let p = logistic(b, s);
                        (b.subf(one, p), p)
                    }
                    (PostTransform::Logistic, false) => {
                        let p = logistic(b, s);
                        let n = b.negf(s);
                        (logistic(b, n), p)
                    }
                    (_, true) => (b.subf(one, s), s),
                    (_, false) => (b.negf(s), s),
                };
                let pt = elem_of(b.m, self.probs);
                for (k, p) in [(0, p0), (1, p1)] {
                    let kc = b.const_index(k);
                    let p = scalar::fcast(b, p, &pt);
                    b.store(p, self.probs, &[r, kc]);
                }
            }
        }
    }
}

/// The index of the first largest of the `e` scores in `acc`.
fn argmax(b: &mut Builder<'_>, acc: ValueId, e: usize) -> ValueId {
    let zero = b.const_index(0);
    let one = b.const_index(1);
    let ev = b.const_index(e as i64);
    let first = b.load(acc, &[zero]);
    let op = b.scf_for(one, ev, one, &[first, zero], |b, k, args| {
        let v = b.load(acc, &[k]);
        let gt = b.cmpf(CmpF::Ogt, v, args[0]);
        vec![b.select(gt, v, args[0]), b.select(gt, k, args[1])]
    });
    b.m.results(op)[1]
}

/// LabelEncoder over numbers: a binary search of the sorted keys.
pub fn label_encoder(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::LabelEncoder::X)?;
    let map = LabelMap::of(b.m, op).map_err(model_error(b, op))?;
    let xt = elem_of(b.m, x);
    let float = map.key.class() == NumClass::Float;
    if xt.is_float() != float || !(xt.is_float() || xt.is_int()) {
        return Err(op_error(
            b.m,
            op,
            format!("{xt} input for {:?} keys", map.key),
        ));
    }
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let vt = elem_of(b.m, out);
    let (keys, vals): (Vec<WideNum>, Vec<WideNum>) = map.entries.iter().copied().unzip();
    let tables = if keys.is_empty() {
        None
    } else {
        Some((
            global(cx, b, op, &keys, &xt)?,
            global(cx, b, op, &vals, &vt)?,
        ))
    };
    let konst = |b: &mut Builder<'_>, w: WideNum, t: &Type| {
        if t.is_float() {
            b.constant(t, w.f64())
        } else {
            b.const_int(w.i64(), t.clone())
        }
    };
    let n = keys.len() as i64;
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let v = b.load(x, ivs);
        let mut r = konst(b, map.default, &vt);
        if let Some((kg, vg)) = tables {
            let i = lower_bound(b, kg, n, v);
            let last = b.const_index(n - 1);
            let at = b.minui(i, last);
            let k = b.load(kg, &[at]);
            let nv = b.const_index(n);
            let inside = b.cmpi(CmpI::Ult, i, nv);
            let eq = b.cmp(Cmp::Eq, k, v);
            let found = b.andi(inside, eq);
            let hit = b.load(vg, &[at]);
            r = b.select(found, hit, r);
        }
        if let Some(nan) = map.nan_value.filter(|_| float) {
            let is_nan = b.cmpf(CmpF::Uno, v, v);
            let c = konst(b, nan, &vt);
            r = b.select(is_nan, c, r);
        }
        b.store(r, out, ivs);
    });
    Ok(vec![out])
}

/// The first index of the `n` sorted keys in `keys` not below `v`.
fn lower_bound(b: &mut Builder<'_>, keys: ValueId, n: i64, v: ValueId) -> ValueId {
    let lo = b.const_index(0);
    let hi = b.const_index(n);
    let w = b.scf_while(
        &[lo, hi],
        &mut |b, a| (b.cmpi(CmpI::Ult, a[0], a[1]), a.to_vec()),
        &mut |b, a| {
            let (lo, hi) = (a[0], a[1]);
            let sum = b.addi(lo, hi);
            let one = b.const_index(1);
            let mid = b.shrui(sum, one);
            let k = b.load(keys, &[mid]);
            let less = b.cmp(Cmp::Lt, k, v);
            let up = b.addi(mid, one);
            vec![b.select(less, up, lo), b.select(less, hi, mid)]
        },
    );
    b.m.results(w)[0]
}
