//! `ai.onnx.ml` operators with numeric results. The models read rows of
//! features, `[N, F]` (or one row `[F]`): results keep the row count `N`.

use super::dims::{self, Dim};
use super::{Ctx, Inferred};
use ir::{Diagnostic, Type, DYN};
use onnx::{ml, ops};

/// The batch: operand 0's leading extent (1 for a single row `[F]`).
fn rows(cx: &Ctx<'_>) -> Result<Dim, Diagnostic> {
    Ok(match cx.dims(0)? {
        Some(d) if d.len() == 1 => dims::c(1),
        Some(d) => d.first().cloned().flatten(),
        None => None,
    })
}

fn size(n: usize) -> Dim {
    i64::try_from(n).ok().and_then(dims::c)
}

fn one(d: Vec<Dim>, elem: Type) -> Inferred {
    Ok(Some(vec![dims::to_type(Some(d), elem)]))
}

/// Normalizer, Scaler: f32 of the input's shape.
pub(super) fn to_f32(cx: &Ctx<'_>) -> Inferred {
    Ok(Some(vec![dims::to_type(cx.dims(0)?, Type::f32())]))
}

/// The indices pick along the last axis.
pub(super) fn array_feature_extractor(cx: &Ctx<'_>) -> Inferred {
    let k = cx.shape(1)?.map(|s| super::product(&s)).unwrap_or(DYN);
    let shape = match cx.dims(0)? {
        Some(mut s) if s.len() >= 2 => {
            if let Some(last) = s.last_mut() {
                *last = (k != DYN).then(|| dims::c(k)).flatten();
            }
            Some(s)
        }
        _ => None,
    };
    Ok(Some(vec![dims::to_type(shape, cx.elem(0)?)]))
}

pub(super) fn linear_regressor(cx: &Ctx<'_>) -> Inferred {
    let targets = ops::LinearRegressor::of(cx.m, cx.op).targets();
    one(vec![rows(cx)?, dims::c(targets)], Type::f32())
}

pub(super) fn tree_ensemble_regressor(cx: &Ctx<'_>) -> Inferred {
    let targets = ml::regressor_targets(cx.m, cx.op);
    one(vec![rows(cx)?, size(targets)], Type::f32())
}

pub(super) fn tree_ensemble(cx: &Ctx<'_>) -> Inferred {
    let v = ops::TreeEnsemble::of(cx.m, cx.op);
    let targets = match v.n_targets() {
        Some(n) => dims::c(n),
        None => v
            .leaf_targetids()
            .iter()
            .max()
            .and_then(|&t| dims::c(t + 1)),
    };
    one(vec![rows(cx)?, targets], cx.elem(0)?)
}

/// Labels `[N]` (int64; string labels are refused) and one probability
/// column per class.
fn classifier(cx: &Ctx<'_>, ints: Option<Vec<i64>>, strings: bool) -> Inferred {
    let classes = match ints {
        Some(l) if !l.is_empty() => l.len(),
        _ if strings => return Err(cx.err(ml::STRING_LABELS)),
        _ => return Ok(None),
    };
    let n = rows(cx)?;
    Ok(Some(vec![
        dims::to_type(Some(vec![n.clone()]), Type::i64()),
        dims::to_type(Some(vec![n, size(classes)]), Type::f32()),
    ]))
}

pub(super) fn linear_classifier(cx: &Ctx<'_>) -> Inferred {
    let v = ops::LinearClassifier::of(cx.m, cx.op);
    let strings = v.classlabels_strings().is_some_and(|s| !s.is_empty());
    classifier(cx, v.classlabels_ints(), strings)
}

pub(super) fn tree_ensemble_classifier(cx: &Ctx<'_>) -> Inferred {
    let v = ops::TreeEnsembleClassifier::of(cx.m, cx.op);
    let strings = v.classlabels_strings().is_some_and(|s| !s.is_empty());
    classifier(cx, v.classlabels_int64s(), strings)
}

pub(super) fn feature_vectorizer(cx: &Ctx<'_>) -> Inferred {
    let width = ops::FeatureVectorizer::of(cx.m, cx.op)
        .inputdimensions()
        .map_or(DYN, |d| d.iter().sum());
    one(
        vec![rows(cx)?, (width != DYN).then(|| dims::c(width)).flatten()],
        Type::f32(),
    )
}

/// One column per category; integer categories only.
pub(super) fn one_hot_encoder(cx: &Ctx<'_>) -> Inferred {
    let Some(cats) = ops::OneHotEncoder::of(cx.m, cx.op).cats_int64s() else {
        return Ok(None);
    };
    let shape = cx.dims(0)?.map(|mut s| {
        s.push(size(cats.len()));
        s
    });
    Ok(Some(vec![dims::to_type(shape, Type::f32())]))
}

/// The input's shape, the values' element type.
pub(super) fn label_encoder(cx: &Ctx<'_>) -> Inferred {
    let map = ml::LabelMap::of(cx.m, cx.op).map_err(|e| cx.err(e))?;
    Ok(Some(vec![dims::to_type(cx.dims(0)?, map.value.to_type())]))
}
