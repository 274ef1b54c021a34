//! Constants, identities, reshapes as views, and Transpose as a copy nest.

use super::{alloc_result, attr_int, attr_ints, constant_ints, load_at, shape_of, store_at};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, Bounds};
use ir::dialects::op_error;
use ir::{Attribute, Builder, OpId, Result, Type, ValueId, DYN};

pub fn constant(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let Some(e) =
        b.m.attr(op, "value")
            .and_then(Attribute::as_elements)
            .cloned()
    else {
        return Err(op_error(b.m, op, "requires a dense 'value' attribute"));
    };
    Ok(vec![cx.global(b, &e)])
}

/// Identity and inference-mode Dropout: the result is the input buffer.
pub fn identity(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    if b.m.results(op).len() > 1 && b.m.result(op, 1).is_some_and(|r| b.m.has_uses(r)) {
        return Err(op_error(
            b.m,
            op,
            "the mask output of Dropout is not supported yet",
        ));
    }
    Ok(vec![cx.input(b.m, op, 0)?])
}

fn normalize_axis(b: &Builder<'_>, op: OpId, axis: i64, rank: usize) -> Result<usize> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if !(0..=r).contains(&a) {
        return Err(op_error(
            b.m,
            op,
            format!("axis {axis} out of range for rank {rank}"),
        ));
    }
    Ok(a as usize)
}

fn product(b: &mut Builder<'_>, vals: &[ValueId]) -> ValueId {
    let mut acc = b.const_index(1);
    for &v in vals {
        acc = loops::mul(b, acc, v);
    }
    acc
}

/// Flatten, Reshape, Squeeze, Unsqueeze: a `memref.reinterpret_cast` of the
/// contiguous input to the new sizes with row-major strides (no copy).
pub fn reshape(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let sx = shape_of(b.m, x);
    let dx = dims(b, x);
    let kind = b.m.name(op).as_str().trim_start_matches("onnx.");
    let out_dims: Vec<ValueId> = match kind {
        "Flatten" => {
            let axis = normalize_axis(b, op, attr_int(b.m, op, "axis", 1), sx.len())?;
            let outer = product(b, &dx[..axis]);
            let inner = product(b, &dx[axis..]);
            vec![outer, inner]
        }
        "Reshape" => {
            let Some(shape) = constant_ints(b.m, op, 1) else {
                return Err(op_error(b.m, op, "Reshape needs a constant shape here"));
            };
            let allow_zero = attr_int(b.m, op, "allowzero", 0) != 0;
            let mut out = Vec::with_capacity(shape.len());
            let mut infer = None;
            for (i, &s) in shape.iter().enumerate() {
                match s {
                    0 if !allow_zero => match dx.get(i) {
                        Some(&d) => out.push(d),
                        None => {
                            return Err(op_error(
                                b.m,
                                op,
                                "a 0 in the shape has no input dim to copy",
                            ))
                        }
                    },
                    -1 if infer.is_none() => {
                        infer = Some(i);
                        out.push(dx.first().copied().unwrap_or(b.const_index(1)));
                    }
                    s if s >= 0 => out.push(b.const_index(s)),
                    _ => return Err(op_error(b.m, op, "invalid Reshape shape entry")),
                }
            }
            if let Some(i) = infer {
                let total = product(b, &dx);
                let known: Vec<ValueId> = out
                    .iter()
                    .enumerate()
                    .filter(|&(k, _)| k != i)
                    .map(|(_, &v)| v)
                    .collect();
                let rest = product(b, &known);
                out[i] = b.same("arith.divui", &[total, rest]);
            }
            out
        }
        "Squeeze" | "Unsqueeze" => {
            let out_shape = super::result_memref_type(b.m, op, 0)?
                .shape()
                .map(<[i64]>::to_vec)
                .unwrap_or_default();
            let axes = constant_ints(b.m, op, 1).or_else(|| attr_ints(b.m, op, "axes"));
            let out_rank = out_shape.len();
            if kind == "Unsqueeze" {
                let Some(axes) = axes else {
                    return Err(op_error(b.m, op, "Unsqueeze needs constant axes"));
                };
                let axes: Vec<usize> = axes
                    .iter()
                    .map(|&a| {
                        normalize_axis(b, op, a, out_rank.saturating_sub(1)).map(|v| {
                            if a < 0 {
                                v + 1
                            } else {
                                v
                            }
                        })
                    })
                    .collect::<Result<_>>()?;
                let mut src = dx.iter();
                let mut out = Vec::with_capacity(out_rank);
                for i in 0..out_rank {
                    if axes.contains(&i) {
                        out.push(b.const_index(1));
                    } else {
                        match src.next() {
                            Some(&d) => out.push(d),
                            None => {
                                return Err(op_error(
                                    b.m,
                                    op,
                                    "Unsqueeze axes do not fit the result rank",
                                ))
                            }
                        }
                    }
                }
                out
            } else {
                let drop: Vec<usize> = match axes {
                    Some(a) => a
                        .iter()
                        .map(|&x| normalize_axis(b, op, x, sx.len()))
                        .collect::<Result<_>>()?,
                    None => (0..sx.len()).filter(|&i| sx[i] == 1).collect(),
                };
                dx.iter()
                    .enumerate()
                    .filter(|(i, _)| !drop.contains(i))
                    .map(|(_, &d)| d)
                    .collect()
            }
        }
        _ => return Err(op_error(b.m, op, "not a reshape")),
    };
    let ty = super::result_memref_type(b.m, op, 0)?;
    let shape = ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    if shape.len() != out_dims.len() {
        return Err(op_error(
            b.m,
            op,
            "computed rank differs from the inferred result type",
        ));
    }
    Ok(vec![reinterpret(b, x, &ty, &shape, &out_dims)])
}

/// A row-major view of contiguous `x` with the given sizes.
pub fn reinterpret(
    b: &mut Builder<'_>,
    x: ValueId,
    ty: &Type,
    shape: &[i64],
    sizes: &[ValueId],
) -> ValueId {
    let strides = ir::types::identity_strides(shape);
    let mut operands = vec![x];
    let mut dyn_sizes = 0;
    for (i, &d) in shape.iter().enumerate() {
        if d == DYN {
            operands.push(sizes[i]);
            dyn_sizes += 1;
        }
    }
    let mut dyn_strides = 0;
    // A dynamic stride is the product of the sizes after it.
    for (i, &s) in strides.iter().enumerate() {
        if s == DYN {
            let inner = product(b, &sizes[i + 1..]);
            operands.push(inner);
            dyn_strides += 1;
        }
    }
    let result_ty = if strides.contains(&DYN) {
        Type::memref_strided(
            shape.to_vec(),
            ty.element_type().clone(),
            0,
            strides.clone(),
        )
    } else {
        ty.clone()
    };
    let segments = Attribute::DenseArray(
        Type::i(32),
        std::sync::Arc::from([1, 0, dyn_sizes, dyn_strides].as_slice()),
    );
    b.op1(
        "memref.reinterpret_cast",
        &operands,
        result_ty,
        &[
            ("static_offsets", Attribute::i64_array(&[0])),
            ("static_sizes", Attribute::i64_array(shape)),
            ("static_strides", Attribute::i64_array(&strides)),
            ("operandSegmentSizes", segments),
        ],
    )
}

pub fn transpose(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let rank = shape_of(b.m, x).len();
    let perm: Vec<i64> =
        attr_ints(b.m, op, "perm").unwrap_or_else(|| (0..rank as i64).rev().collect());
    let mut seen = vec![false; rank];
    for &p in &perm {
        match usize::try_from(p).ok().filter(|&p| p < rank) {
            Some(p) if !seen[p] => seen[p] = true,
            _ => {
                return Err(op_error(
                    b.m,
                    op,
                    "perm must be a permutation of the input dims",
                ))
            }
        }
    }
    if perm.len() != rank {
        return Err(op_error(
            b.m,
            op,
            "perm must be a permutation of the input dims",
        ));
    }
    let dx = dims(b, x);
    let out_dims: Vec<ValueId> = perm.iter().map(|&p| dx[p as usize]).collect();
    let out = alloc_result(b, op, 0, &out_dims)?;
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        let mut idx = vec![bounds.zero; rank];
        for (k, &p) in perm.iter().enumerate() {
            idx[p as usize] = ivs[k];
        }
        let v = load_at(b, x, &idx);
        store_at(b, v, out, ivs);
    });
    Ok(vec![out])
}
