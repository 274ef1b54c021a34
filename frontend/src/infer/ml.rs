//! `ai.onnx.ml` operators with numeric results.

use super::{tensor, Ctx};
use ir::{Diagnostic, Type, DYN};

pub(super) fn infer(cx: &Ctx<'_>, kind: &str) -> Result<Option<Vec<Type>>, Diagnostic> {
    let rows = || -> Result<i64, Diagnostic> {
        Ok(cx.shape(0)?.and_then(|s| s.first().copied()).unwrap_or(DYN))
    };
    Ok(Some(match kind {
        "Binarizer" | "Imputer" => vec![cx.same_as(0)?],
        "Normalizer" | "Scaler" => vec![tensor(cx.shape(0)?, Type::f32())],
        // The indices pick along the last axis.
        "ArrayFeatureExtractor" => {
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
            vec![tensor(shape, cx.elem(0)?)]
        }
        "LinearRegressor" | "TreeEnsembleRegressor" => {
            let targets = cx.attr_int("targets", cx.attr_int("n_targets", 1));
            vec![Type::tensor(vec![rows()?, targets], Type::f32())]
        }
        "TreeEnsemble" => {
            let targets = cx.attr_int("n_targets", DYN);
            vec![Type::tensor(vec![rows()?, targets], cx.elem(0)?)]
        }
        "FeatureVectorizer" => {
            let width = cx
                .attr_ints("inputdimensions")
                .map_or(DYN, |d| d.iter().sum());
            vec![Type::tensor(vec![rows()?, width], Type::f32())]
        }
        "OneHotEncoder" => {
            let Some(cats) = cx.attr_ints("cats_int64s") else {
                return Ok(None);
            };
            let shape = cx.shape(0)?.map(|mut s| {
                s.push(i64::try_from(cats.len()).unwrap_or(DYN));
                s
            });
            vec![tensor(shape, Type::f32())]
        }
        _ => return Ok(None),
    }))
}
