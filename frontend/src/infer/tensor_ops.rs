//! Ops with their own shape rules: Einsum, Unique, Det, BitCast,
//! TfIdfVectorizer, the losses and the optional accessors.

use super::{one, tensor, Ctx, Inferred};
use ir::{Diagnostic, Type, DYN};
use onnx::ops;
use std::collections::BTreeMap;

pub(super) fn einsum(cx: &Ctx<'_>) -> Inferred {
    let equation = ops::Einsum::of(cx.m, cx.op).equation();
    one(einsum_shape(cx, equation)?, cx.elem(0)?)
}

pub(super) fn unique(cx: &Ctx<'_>) -> Inferred {
    Ok(Some(unique_types(cx)?))
}

/// The batch dims: every dim but the last two.
pub(super) fn det(cx: &Ctx<'_>) -> Inferred {
    let s = cx.shape(0)?;
    let batch = s.map(|s| s.get(..s.len().saturating_sub(2)).unwrap_or(&[]).to_vec());
    one(batch, cx.elem(0)?)
}

pub(super) fn bit_cast(cx: &Ctx<'_>) -> Inferred {
    let code = ops::BitCast::of(cx.m, cx.op).to();
    one(cx.shape(0)?, cx.dtype(code, "'to' type")?)
}

/// One count per n-gram index, per row for 2-D input.
pub(super) fn tf_idf_vectorizer(cx: &Ctx<'_>) -> Inferred {
    let indexes = ops::TfIdfVectorizer::of(cx.m, cx.op).ngram_indexes();
    let width = indexes.iter().max().map_or(DYN, |m| m + 1);
    let shape = cx.shape(0)?.map(|s| match s.as_slice() {
        [n, _] => vec![*n, width],
        _ => vec![width],
    });
    one(shape, Type::f32())
}

/// The loss (per element with `reduction = none`) and, for
/// SoftmaxCrossEntropyLoss, the log-probabilities.
fn loss(cx: &Ctx<'_>, reduction: &str) -> Inferred {
    let elem = cx.elem(0)?;
    let loss = match reduction {
        "none" => cx.shape(1)?,
        "mean" | "sum" => Some(Vec::new()),
        other => return Err(cx.err(format!("unknown reduction '{other}'"))),
    };
    Ok(Some(vec![tensor(loss, elem), cx.same_as(0)?]))
}

pub(super) fn softmax_cross_entropy_loss(cx: &Ctx<'_>) -> Inferred {
    loss(
        cx,
        ops::SoftmaxCrossEntropyLoss::of(cx.m, cx.op).reduction(),
    )
}

pub(super) fn negative_log_likelihood_loss(cx: &Ctx<'_>) -> Inferred {
    loss(
        cx,
        ops::NegativeLogLikelihoodLoss::of(cx.m, cx.op).reduction(),
    )
}

pub(super) fn optional_has_element(_cx: &Ctx<'_>) -> Inferred {
    Ok(Some(vec![Type::tensor(Vec::new(), Type::i1())]))
}

/// Unique: Y, indices, inverse_indices, counts; sizes depend on the data.
fn unique_types(cx: &Ctx<'_>) -> Result<Vec<Type>, Diagnostic> {
    let x = cx.shape(0)?;
    let (y, inverse) = match (&x, ops::Unique::of(cx.m, cx.op).axis()) {
        (Some(s), None) => (Some(vec![DYN]), Some(vec![super::product(s)])),
        (Some(s), Some(axis)) => {
            let a = cx.axis(axis, s.len())?;
            let mut y = s.clone();
            let along = s.get(a).copied().unwrap_or(DYN);
            if let Some(d) = y.get_mut(a) {
                *d = DYN;
            }
            (Some(y), Some(vec![along]))
        }
        (None, None) => (Some(vec![DYN]), Some(vec![DYN])),
        (None, Some(_)) => (None, Some(vec![DYN])),
    };
    Ok(vec![
        tensor(y, cx.elem(0)?),
        Type::tensor(vec![DYN], Type::i64()),
        tensor(inverse, Type::i64()),
        Type::tensor(vec![DYN], Type::i64()),
    ])
}

/// One operand's term of an Einsum equation: labels, with `None` where
/// the ellipsis stands.
fn parse_term(term: &str) -> Option<Vec<Option<char>>> {
    let mut out = Vec::new();
    let mut rest = term;
    while let Some(c) = rest.chars().next() {
        if let Some(r) = rest.strip_prefix("...") {
            if out.contains(&None) {
                return None;
            }
            out.push(None);
            rest = r;
        } else if c.is_ascii_alphabetic() {
            out.push(Some(c));
            rest = &rest[1..];
        } else {
            return None;
        }
    }
    Some(out)
}

fn einsum_shape(cx: &Ctx<'_>, equation: &str) -> Result<Option<Vec<i64>>, Diagnostic> {
    let equation: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
    let bad = || cx.err(format!("malformed equation '{equation}'"));
    let (lhs, rhs) = match equation.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (equation.as_str(), None),
    };
    let terms: Vec<Vec<Option<char>>> = lhs
        .split(',')
        .map(parse_term)
        .collect::<Option<_>>()
        .ok_or_else(bad)?;
    if terms.len() != cx.num_operands() {
        return Err(cx.err(format!(
            "equation has {} terms for {} operands",
            terms.len(),
            cx.num_operands()
        )));
    }
    let mut sizes: BTreeMap<char, i64> = BTreeMap::new();
    let mut counts: BTreeMap<char, usize> = BTreeMap::new();
    let mut ellipsis: Vec<i64> = Vec::new();
    for (i, term) in terms.iter().enumerate() {
        let Some(s) = cx.shape(i)? else {
            return Ok(None);
        };
        let labels = term.iter().filter(|l| l.is_some()).count();
        let dots = s.len().checked_sub(labels).ok_or_else(bad)?;
        if dots > 0 && !term.contains(&None) {
            return Err(cx.err(format!("term {i} has fewer labels than dims")));
        }
        let mut dims = s.iter().copied();
        for l in term {
            match l {
                Some(c) => {
                    let d = dims.next().ok_or_else(bad)?;
                    *counts.entry(*c).or_default() += 1;
                    let e = sizes.entry(*c).or_insert(d);
                    match (*e, d) {
                        (DYN | 1, _) => *e = d,
                        (x, y) if y != DYN && y != 1 && x != y => {
                            return Err(cx.err(format!("label '{c}' is {x} and {y}")));
                        }
                        _ => {}
                    }
                }
                None => {
                    let here: Vec<i64> = dims.by_ref().take(dots).collect();
                    ellipsis = super::broadcast_shapes(&ellipsis, &here).map_err(|e| cx.err(e))?;
                }
            }
        }
    }
    let out_terms = match rhs {
        Some(r) => parse_term(r).ok_or_else(bad)?,
        None => {
            let mut t = vec![None];
            t.extend(
                counts
                    .iter()
                    .filter(|(_, &n)| n == 1)
                    .map(|(&c, _)| Some(c)),
            );
            t
        }
    };
    let mut out = Vec::new();
    for l in out_terms {
        match l {
            Some(c) => out.push(*sizes.get(&c).ok_or_else(bad)?),
            None => out.extend(&ellipsis),
        }
    }
    Ok(Some(out))
}
