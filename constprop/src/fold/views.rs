//! Ops that only re-index their input: results are views of the same buffer.

use super::{attr_i64, attr_ints};
use ir::dialects::op_error;
use ir::elements::Elements;
use ir::{Module, OpId, Result};

fn axis(m: &Module, op: OpId, a: i64, rank: usize) -> Result<usize> {
    super::norm_axis(a, rank)
        .ok_or_else(|| op_error(m, op, format!("axis {a} out of range for rank {rank}")))
}

fn ints(e: &Elements) -> Vec<i64> {
    e.iter().map(|v| v.i64()).collect()
}

fn map_err(m: &Module, op: OpId, e: ir::elements::ElementsError) -> ir::Diagnostic {
    op_error(m, op, e.to_string())
}

pub fn fold(
    m: &Module,
    op: OpId,
    kind: &str,
    inputs: &[Option<Elements>],
) -> Result<Option<Vec<Elements>>> {
    let Some(Some(x)) = inputs.first() else {
        return Ok(None);
    };
    let shape = x.shape().to_vec();
    let rank = shape.len();
    let out = match kind {
        "Identity" => x.clone(),
        "Transpose" => {
            let perm: Vec<i64> =
                attr_ints(m, op, "perm").unwrap_or_else(|| (0..rank as i64).rev().collect());
            let perm: Vec<usize> = perm
                .iter()
                .map(|&p| axis(m, op, p, rank))
                .collect::<Result<_>>()?;
            x.transposed(&perm)
                .ok_or_else(|| op_error(m, op, "perm is not a permutation of the input dims"))?
        }
        "Reshape" => {
            let Some(Some(s)) = inputs.get(1) else {
                return Ok(None);
            };
            let spec = ints(s);
            let allow_zero = attr_i64(m, op, "allowzero", 0) != 0;
            let mut out: Vec<i64> = Vec::with_capacity(spec.len());
            let mut infer = None;
            for (i, &d) in spec.iter().enumerate() {
                match d {
                    0 if !allow_zero => out.push(
                        *shape
                            .get(i)
                            .ok_or_else(|| op_error(m, op, "0 in shape has no input dim"))?,
                    ),
                    -1 if infer.is_none() => {
                        infer = Some(i);
                        out.push(1);
                    }
                    d if d >= 0 => out.push(d),
                    _ => return Err(op_error(m, op, "invalid shape entry")),
                }
            }
            if let Some(i) = infer {
                let known: i64 = out.iter().product();
                let total = x.len() as i64;
                if known == 0 || total % known != 0 {
                    return Err(op_error(m, op, "cannot infer the -1 dimension"));
                }
                out[i] = total / known;
            }
            x.reshaped(out).map_err(|e| map_err(m, op, e))?
        }
        "Flatten" => {
            let a = attr_i64(m, op, "axis", 1);
            let a = if a < 0 { a + rank as i64 } else { a };
            if !(0..=rank as i64).contains(&a) {
                return Err(op_error(m, op, "axis out of range"));
            }
            let (outer, inner) = shape.split_at(a as usize);
            x.reshaped(vec![outer.iter().product(), inner.iter().product()])
                .map_err(|e| map_err(m, op, e))?
        }
        "Squeeze" | "Unsqueeze" => {
            let axes = match inputs.get(1) {
                Some(Some(a)) => Some(ints(a)),
                _ => attr_ints(m, op, "axes"),
            };
            let new_shape = if kind == "Squeeze" {
                let drop: Vec<usize> = match axes {
                    Some(a) => a
                        .iter()
                        .map(|&v| axis(m, op, v, rank))
                        .collect::<Result<_>>()?,
                    None => (0..rank).filter(|&i| shape[i] == 1).collect(),
                };
                shape
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !drop.contains(i))
                    .map(|(_, &d)| d)
                    .collect()
            } else {
                let Some(a) = axes else { return Ok(None) };
                let out_rank = rank + a.len();
                let ins: Vec<usize> = a
                    .iter()
                    .map(|&v| axis(m, op, v, out_rank))
                    .collect::<Result<_>>()?;
                let mut src = shape.iter();
                (0..out_rank)
                    .map(|i| {
                        if ins.contains(&i) {
                            1
                        } else {
                            src.next().copied().unwrap_or(1)
                        }
                    })
                    .collect()
            };
            x.reshaped(new_shape).map_err(|e| map_err(m, op, e))?
        }
        "Expand" => {
            let Some(Some(s)) = inputs.get(1) else {
                return Ok(None);
            };
            let target = ints(s);
            // Bidirectional broadcast of the input shape with the requested one.
            let r = rank.max(target.len());
            let mut out = vec![1i64; r];
            for (i, o) in out.iter_mut().enumerate() {
                let a = (i + rank).checked_sub(r).map_or(1, |k| shape[k]);
                let b = (i + target.len()).checked_sub(r).map_or(1, |k| target[k]);
                *o = if a == 1 {
                    b
                } else if b == 1 || a == b {
                    a
                } else {
                    return Err(op_error(m, op, "shapes are not broadcast-compatible"));
                };
            }
            x.broadcast_to(&out)
                .ok_or_else(|| op_error(m, op, "shapes are not broadcast-compatible"))?
        }
        _ => return Ok(None),
    };
    Ok(Some(vec![out]))
}
