//! Constants, identities, reshapes as views, and Transpose as a copy nest.

use super::checks;
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
    let training = cx.has_input(b.m, op, 2)
        && constant_ints(b.m, op, 2).is_none_or(|v| v.iter().any(|&t| t != 0));
    // Training with ratio 0 drops nothing: deterministic, like inference.
    let zero_ratio = cx.has_input(b.m, op, 1)
        && constant_ints(b.m, op, 1).is_some_and(|v| v.iter().all(|&r| r == 0));
    if training && !zero_ratio {
        return Err(op_error(b.m, op, "training-mode Dropout is not supported"));
    }
    let x = cx.input(b.m, op, 0)?;
    let mut out = vec![x];
    if b.m.results(op).len() > 1 {
        // The mask keeps everything.
        let dx = dims(b, x);
        let mask = alloc_result(b, op, 1, &dx)?;
        let t = b.const_bool(true);
        let bounds = Bounds::new(b);
        loop_nest(b, &bounds, &dx, &mut |b, ivs| store_at(b, t, mask, ivs));
        out.push(mask);
    }
    Ok(out)
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
                let allow_zero = attr_int(b.m, op, "allowzero", 0) != 0;
                let s = cx.input(b.m, op, 1)?;
                let rank = super::result_memref_type(b.m, op, 0)?
                    .shape()
                    .map_or(0, <[i64]>::len);
                let out = runtime_shape(b, s, &dx, allow_zero, rank)?;
                for (j, &d) in out.iter().enumerate() {
                    let msg = format!("shape entry {j} is negative");
                    checks::non_negative(b, op, d, &msg)?;
                }
                same_count(b, op, &sx, &dx, &out)?;
                return finish_reshape(b, op, x, out);
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
            same_count(b, op, &sx, &dx, &out)?;
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
                    let a = cx.input(b.m, op, 1)?;
                    let out = runtime_unsqueeze(b, a, &dx, out_rank);
                    return finish_reshape(b, op, x, out);
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
            } else if axes.is_none() && cx.has_input(b.m, op, 1) {
                // Axes known only at runtime: the inferred result shape.
                if out_shape.contains(&DYN) {
                    return Err(op_error(
                        b.m,
                        op,
                        "Squeeze with runtime axes needs a static result shape",
                    ));
                }
                out_shape.iter().map(|&d| b.const_index(d)).collect()
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
    finish_reshape(b, op, x, out_dims)
}

/// Unsqueeze sizes with axes known only at runtime: position `i` is 1 when
/// listed, else the next input dim.
fn runtime_unsqueeze(
    b: &mut Builder<'_>,
    a: ValueId,
    dx: &[ValueId],
    out_rank: usize,
) -> Vec<ValueId> {
    let n = dx.len().abs_diff(out_rank);
    let zero = b.const_index(0);
    let one = b.const_index(1);
    let r = b.const_index(out_rank as i64);
    let listed: Vec<ValueId> = (0..n)
        .map(|j| {
            let v = super::build::index_at(b, a, Some(j as i64));
            let neg = loops::cmp(b, "slt", v, zero);
            let w = loops::add(b, v, r);
            loops::select(b, neg, w, v)
        })
        .collect();
    let mut src = zero;
    let mut out = Vec::with_capacity(out_rank);
    for i in 0..out_rank {
        let iv = b.const_index(i as i64);
        let mut is_axis = b.const_bool(false);
        for &l in &listed {
            let e = loops::cmp(b, "eq", l, iv);
            is_axis = b.same("arith.ori", &[is_axis, e]);
        }
        let mut d = one;
        for (k, &dk) in dx.iter().enumerate() {
            let kv = b.const_index(k as i64);
            let e = loops::cmp(b, "eq", src, kv);
            d = loops::select(b, e, dk, d);
        }
        out.push(loops::select(b, is_axis, one, d));
        let inc = loops::add(b, src, one);
        src = loops::select(b, is_axis, src, inc);
    }
    out
}

/// Reshape's target shape read at runtime: 0 copies the input dim (unless
/// `allowzero`), -1 is inferred from the element count.
fn runtime_shape(
    b: &mut Builder<'_>,
    s: ValueId,
    dx: &[ValueId],
    allow_zero: bool,
    rank: usize,
) -> Result<Vec<ValueId>> {
    // The length of the shape tensor is the result rank.
    let n = rank as i64;
    if shape_of(b.m, s).len() != 1 {
        return Err(ir::Diagnostic::error("Reshape needs a 1-D shape"));
    }
    let zero = b.const_index(0);
    let one = b.const_index(1);
    let m1 = b.const_index(-1);
    let mut raw = Vec::new();
    let mut vals = Vec::new();
    let mut known = one;
    for i in 0..n {
        let r = super::build::index_at(b, s, Some(i));
        let v = match dx.get(i as usize) {
            Some(&d) if !allow_zero => {
                let z = loops::cmp(b, "eq", r, zero);
                loops::select(b, z, d, r)
            }
            _ => r,
        };
        let is_m1 = loops::cmp(b, "eq", r, m1);
        let k = loops::select(b, is_m1, one, v);
        known = loops::mul(b, known, k);
        raw.push(is_m1);
        vals.push(v);
    }
    let total = product(b, dx);
    let inferred = b.same("arith.divui", &[total, known]);
    Ok(raw
        .iter()
        .zip(vals)
        .map(|(&m, v)| loops::select(b, m, inferred, v))
        .collect())
}

/// Asserts that a Reshape keeps the element count (unless the input and
/// result shapes are static: shape inference checked them).
fn same_count(
    b: &mut Builder<'_>,
    op: OpId,
    sx: &[i64],
    dx: &[ValueId],
    out: &[ValueId],
) -> Result<()> {
    let ty = super::result_memref_type(b.m, op, 0)?;
    let out_static = ty.shape().is_some_and(|s| !s.contains(&DYN));
    if out_static && !sx.contains(&DYN) {
        return Ok(());
    }
    let (n, m) = (checks::count(b, dx), checks::count(b, out));
    checks::equal(
        b,
        op,
        m,
        n,
        "the new shape's element count differs from the input's",
    )
}

fn finish_reshape(
    b: &mut Builder<'_>,
    op: OpId,
    x: ValueId,
    out_dims: Vec<ValueId>,
) -> Result<Vec<ValueId>> {
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

/// A row-major view of `x` with the given sizes (of a copy when `x` is a
/// strided view: reinterpret_cast drops the source's offset and strides).
pub fn reinterpret(
    b: &mut Builder<'_>,
    x: ValueId,
    ty: &Type,
    shape: &[i64],
    sizes: &[ValueId],
) -> ValueId {
    let x = crate::convert::contiguous(b, x);
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

/// A fresh copy of operand 0 as result 0 (no-op reductions, Identity-like ops
/// whose result must not alias).
pub fn copy_op(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    b.op("memref.copy", &[x, out], &[], &[]);
    Ok(vec![out])
}
