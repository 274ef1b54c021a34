//! `ai.onnx.ml` operators with numeric results.

use super::{one, Ctx, Inferred};
use ir::{Diagnostic, Type, DYN};
use onnx::ops;

/// The batch: operand 0's leading extent.
fn rows(cx: &Ctx<'_>) -> Result<i64, Diagnostic> {
    Ok(cx.shape(0)?.and_then(|s| s.first().copied()).unwrap_or(DYN))
}

/// Normalizer, Scaler: f32 of the input's shape.
pub(super) fn to_f32(cx: &Ctx<'_>) -> Inferred {
    one(cx.shape(0)?, Type::f32())
}

/// The indices pick along the last axis.
pub(super) fn array_feature_extractor(cx: &Ctx<'_>) -> Inferred {
    let k = cx.shape(1)?.map(|s| super::product(&s)).unwrap_or(DYN);
    let shape = match cx.shape(0)? {
        Some(s) if s.len() >= 2 => {
            let mut s = s;
            if let Some(last) = s.last_mut() {
                *last = k;
            }
            Some(s)
        }
        _ => None,
    };
    one(shape, cx.elem(0)?)
}

pub(super) fn linear_regressor(cx: &Ctx<'_>) -> Inferred {
    let targets = ops::LinearRegressor::of(cx.m, cx.op).targets();
    one(Some(vec![rows(cx)?, targets]), Type::f32())
}

pub(super) fn tree_ensemble_regressor(cx: &Ctx<'_>) -> Inferred {
    let targets = ops::TreeEnsembleRegressor::of(cx.m, cx.op)
        .n_targets()
        .unwrap_or(1);
    one(Some(vec![rows(cx)?, targets]), Type::f32())
}

pub(super) fn tree_ensemble(cx: &Ctx<'_>) -> Inferred {
    let targets = ops::TreeEnsemble::of(cx.m, cx.op)
        .n_targets()
        .unwrap_or(DYN);
    one(Some(vec![rows(cx)?, targets]), cx.elem(0)?)
}

pub(super) fn feature_vectorizer(cx: &Ctx<'_>) -> Inferred {
    let width = ops::FeatureVectorizer::of(cx.m, cx.op)
        .inputdimensions()
        .map_or(DYN, |d| d.iter().sum());
    one(Some(vec![rows(cx)?, width]), Type::f32())
}

/// One column per category; integer categories only.
pub(super) fn one_hot_encoder(cx: &Ctx<'_>) -> Inferred {
    let Some(cats) = ops::OneHotEncoder::of(cx.m, cx.op).cats_int64s() else {
        return Ok(None);
    };
    let shape = cx.shape(0)?.map(|mut s| {
        s.push(i64::try_from(cats.len()).unwrap_or(DYN));
        s
    });
    one(shape, Type::f32())
}
