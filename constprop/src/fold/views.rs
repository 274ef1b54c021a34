//! Ops that only re-index their input: results are views of the same buffer.

use super::{Fold, Op};
use ir::elements::Elements;
use ir::Result;
use onnx::ops;

fn axis(o: Op, a: i64, rank: usize) -> Result<usize> {
    onnx::axis::normalize(a, rank)
        .ok_or_else(|| o.err(format!("axis {a} out of range for rank {rank}")))
}

fn ints(e: &Elements) -> Vec<i64> {
    e.iter().map(|v| v.i64()).collect()
}

fn one(e: Elements) -> Fold {
    Ok(Some(vec![e]))
}

fn reshaped(o: Op, x: &Elements, shape: Vec<i64>) -> Fold {
    one(x.reshaped(shape).map_err(|e| o.err(e.to_string()))?)
}

pub fn identity(o: Op) -> Fold {
    let Some(x) = o.input(0) else { return Ok(None) };
    one(x.clone())
}

pub fn transpose(o: Op) -> Fold {
    let Some(x) = o.input(0) else { return Ok(None) };
    let rank = x.shape().len();
    let perm = ops::Transpose::of(o.m, o.op)
        .perm()
        .unwrap_or_else(|| (0..rank as i64).rev().collect());
    let perm: Vec<usize> = perm
        .iter()
        .map(|&p| axis(o, p, rank))
        .collect::<Result<_>>()?;
    let t = x
        .transposed(&perm)
        .ok_or_else(|| o.err("perm is not a permutation of the input dims"))?;
    one(t)
}

pub fn reshape(o: Op) -> Fold {
    let (Some(x), Some(s)) = (o.input(0), o.input(1)) else {
        return Ok(None);
    };
    let shape = x.shape();
    let spec = ints(s);
    let allow_zero = ops::Reshape::of(o.m, o.op).allowzero() != 0;
    let mut out: Vec<i64> = Vec::with_capacity(spec.len());
    let mut infer = None;
    for (i, &d) in spec.iter().enumerate() {
        match d {
            0 if !allow_zero => out.push(
                *shape
                    .get(i)
                    .ok_or_else(|| o.err("0 in shape has no input dim"))?,
            ),
            -1 if infer.is_none() => {
                infer = Some(i);
                out.push(1);
            }
            d if d >= 0 => out.push(d),
            _ => return Err(o.err("invalid shape entry")),
        }
    }
    if let Some(i) = infer {
        let known: i64 = out.iter().product();
        let total = x.len() as i64;
        if known == 0 || total % known != 0 {
            return Err(o.err("cannot infer the -1 dimension"));
        }
        out[i] = total / known;
    }
    reshaped(o, x, out)
}

pub fn flatten(o: Op) -> Fold {
    let Some(x) = o.input(0) else { return Ok(None) };
    let shape = x.shape();
    let rank = shape.len() as i64;
    // Flatten's axis may equal the rank.
    let a = ops::Flatten::of(o.m, o.op).axis();
    let a = if a < 0 { a + rank } else { a };
    if !(0..=rank).contains(&a) {
        return Err(o.err("axis out of range"));
    }
    let (outer, inner) = shape.split_at(a as usize);
    reshaped(o, x, vec![outer.iter().product(), inner.iter().product()])
}

pub fn squeeze(o: Op) -> Fold {
    let Some(x) = o.input(0) else { return Ok(None) };
    let shape = x.shape();
    let rank = shape.len();
    let drop: Vec<usize> = match o.input(1) {
        Some(a) => ints(a)
            .iter()
            .map(|&v| axis(o, v, rank))
            .collect::<Result<_>>()?,
        None => (0..rank).filter(|&i| shape[i] == 1).collect(),
    };
    let kept = shape
        .iter()
        .enumerate()
        .filter(|(i, _)| !drop.contains(i))
        .map(|(_, &d)| d)
        .collect();
    reshaped(o, x, kept)
}

pub fn unsqueeze(o: Op) -> Fold {
    let (Some(x), Some(a)) = (o.input(0), o.input(1)) else {
        return Ok(None);
    };
    let a = ints(a);
    let out_rank = x.shape().len() + a.len();
    let ins: Vec<usize> = a
        .iter()
        .map(|&v| axis(o, v, out_rank))
        .collect::<Result<_>>()?;
    let mut src = x.shape().iter();
    let shape = (0..out_rank)
        .map(|i| {
            if ins.contains(&i) {
                1
            } else {
                src.next().copied().unwrap_or(1)
            }
        })
        .collect();
    reshaped(o, x, shape)
}

pub fn expand(o: Op) -> Fold {
    let (Some(x), Some(s)) = (o.input(0), o.input(1)) else {
        return Ok(None);
    };
    let shape = x.shape();
    let rank = shape.len();
    let target = ints(s);
    // Bidirectional broadcast of the input shape with the requested one.
    let r = rank.max(target.len());
    let mut out = vec![1i64; r];
    for (i, o_dim) in out.iter_mut().enumerate() {
        let a = (i + rank).checked_sub(r).map_or(1, |k| shape[k]);
        let b = (i + target.len()).checked_sub(r).map_or(1, |k| target[k]);
        *o_dim = if a == 1 {
            b
        } else if b == 1 || a == b {
            a
        } else {
            return Err(o.err("shapes are not broadcast-compatible"));
        };
    }
    let e = x
        .broadcast_to(&out)
        .ok_or_else(|| o.err("shapes are not broadcast-compatible"))?;
    one(e)
}
