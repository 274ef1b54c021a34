//! Element-wise ops with multidirectional (NumPy) broadcasting: one loop
//! nest over the output, each input indexed with its broadcast dims pinned
//! to 0, and a scalar body per op.

use super::checks;
use super::scalar::{self, constant};
use super::{alloc_result, attr_float, elem_of, shape_of};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, Bounds};
use ir::dialects::op_error;
use ir::{Attribute, Builder, OpId, Result, Type, ValueId, DYN};

pub(super) type Body = fn(&mut Builder<'_>, OpId, &[ValueId], &Type) -> Result<ValueId>;

fn body_for(kind: &str) -> Option<Body> {
    Some(match kind {
        "Add" | "Sum" => |b, _, x, _| Ok(fold(b, x, scalar::add)),
        "Mul" => |b, _, x, _| Ok(fold(b, x, scalar::mul)),
        "Max" => |b, _, x, _| Ok(fold(b, x, scalar::max)),
        "Min" => |b, _, x, _| Ok(fold(b, x, scalar::min)),
        "Sub" => |b, _, x, _| Ok(arith(b, "subf", "subi", "subi", x)),
        "Div" => |b, _, x, _| Ok(arith(b, "divf", "divsi", "divui", x)),
        "Relu" => |b, _, x, _| {
            let t = b.m.value_type(x[0]).clone();
            let zero = constant(b, &t, 0.0);
            Ok(scalar::max(b, x[0], zero))
        },
        "Neg" => |b, _, x, _| {
            if b.m.value_type(x[0]).is_float() {
                Ok(b.same("arith.negf", &[x[0]]))
            } else {
                let t = b.m.value_type(x[0]).clone();
                let zero = constant(b, &t, 0.0);
                Ok(b.same("arith.subi", &[zero, x[0]]))
            }
        },
        "Abs" => |b, _, x, _| {
            let name = if b.m.value_type(x[0]).is_float() {
                "math.absf"
            } else {
                "math.absi"
            };
            Ok(b.same(name, &[x[0]]))
        },
        "Exp" => |b, o, x, _| float_math(b, o, "math.exp", x),
        "Log" => |b, o, x, _| float_math(b, o, "math.log", x),
        "Sqrt" => |b, o, x, _| float_math(b, o, "math.sqrt", x),
        "Tanh" => |b, o, x, _| float_math(b, o, "math.tanh", x),
        "Erf" => |b, o, x, _| float_math(b, o, "math.erf", x),
        "Floor" => |b, o, x, _| float_math(b, o, "math.floor", x),
        "Ceil" => |b, o, x, _| float_math(b, o, "math.ceil", x),
        "Sin" => |b, o, x, _| float_math(b, o, "math.sin", x),
        "Cos" => |b, o, x, _| float_math(b, o, "math.cos", x),
        "Sigmoid" => |b, o, x, _| {
            // 1 / (1 + exp(-x))
            let t = float_type(b, o, x[0])?;
            let neg = b.same("arith.negf", &[x[0]]);
            let e = b.same("math.exp", &[neg]);
            let one = constant(b, &t, 1.0);
            let den = b.same("arith.addf", &[one, e]);
            Ok(b.same("arith.divf", &[one, den]))
        },
        "Reciprocal" => |b, o, x, _| {
            let t = float_type(b, o, x[0])?;
            let one = constant(b, &t, 1.0);
            Ok(b.same("arith.divf", &[one, x[0]]))
        },
        "LeakyRelu" => |b, o, x, _| {
            let t = float_type(b, o, x[0])?;
            let alpha = attr_float(b.m, o, "alpha", 0.01);
            let a = constant(b, &t, alpha);
            let zero = constant(b, &t, 0.0);
            let scaled = b.same("arith.mulf", &[x[0], a]);
            let p = pred_f("ogt");
            let pos = b.op1(
                "arith.cmpf",
                &[x[0], zero],
                Type::i1(),
                &[("predicate", Attribute::i64(p))],
            );
            Ok(b.op1("arith.select", &[pos, x[0], scaled], t, &[]))
        },
        "Cast" => |b, o, x, out| scalar::convert(b, o, x[0], out),
        _ => return super::activations::body_for(kind).or_else(|| super::logic::body_for(kind)),
    })
}

fn pred_f(name: &str) -> i64 {
    ir::dialects::arith::CMPF_PREDICATES
        .iter()
        .position(|&n| n == name)
        .unwrap_or(0) as i64
}

fn fold(
    b: &mut Builder<'_>,
    xs: &[ValueId],
    f: fn(&mut Builder<'_>, ValueId, ValueId) -> ValueId,
) -> ValueId {
    let mut acc = xs[0];
    for &x in &xs[1..] {
        acc = f(b, acc, x);
    }
    acc
}

fn arith(b: &mut Builder<'_>, f: &str, s: &str, u: &str, x: &[ValueId]) -> ValueId {
    let t = b.m.value_type(x[0]).clone();
    let name = if t.is_float() {
        f
    } else if scalar::is_unsigned(&t) {
        u
    } else {
        s
    };
    b.same(&format!("arith.{name}"), &[x[0], x[1]])
}

/// The type of `x`, which must be a float.
pub fn float_type(b: &Builder<'_>, op: OpId, x: ValueId) -> Result<Type> {
    let t = b.m.value_type(x).clone();
    if t.is_float() {
        Ok(t)
    } else {
        Err(op_error(
            b.m,
            op,
            format!("expects a floating-point input, got {t}"),
        ))
    }
}

fn float_math(b: &mut Builder<'_>, op: OpId, name: &str, x: &[ValueId]) -> Result<ValueId> {
    float_type(b, op, x[0])?;
    Ok(b.same(name, x))
}

/// Lowers `kind` if it is element-wise; `Ok(None)` otherwise.
pub fn lower(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kind: &str,
) -> Result<Option<Vec<ValueId>>> {
    let Some(body) = body_for(kind) else {
        return Ok(None);
    };
    // CastLike reads only its first operand; omitted optionals are skipped.
    let n = if kind == "CastLike" {
        1
    } else {
        b.m.operands(op).len()
    };
    let operand_ids: Vec<usize> = (0..n).filter(|&i| cx.has_input(b.m, op, i)).collect();
    let inputs: Vec<ValueId> = operand_ids
        .iter()
        .map(|&i| cx.input(b.m, op, i))
        .collect::<Result<_>>()?;
    if inputs.is_empty() {
        return Err(op_error(b.m, op, "expects at least one input"));
    }
    let out_ty = super::result_memref_type(b.m, op, 0)?;
    let out_shape = out_ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    let rank = out_shape.len();
    let out_elem = out_ty.element_type().clone();
    let shapes: Vec<Vec<i64>> = inputs.iter().map(|&v| shape_of(b.m, v)).collect();
    let in_dims: Vec<Vec<ValueId>> = inputs.iter().map(|&v| dims(b, v)).collect();
    let bounds = Bounds::new(b);
    let (zero, one) = (bounds.zero, bounds.one);
    // Each dynamic output dim: the input dims folded with "1 broadcasts";
    // `lead[j]` needs no check there (see `checks::broadcast_dim`).
    let mut out_dims = Vec::with_capacity(rank);
    let mut lead = vec![None; rank];
    for (j, &d) in out_shape.iter().enumerate() {
        if d != DYN {
            out_dims.push(b.const_index(d));
            continue;
        }
        let ds: Vec<(usize, ValueId)> = shapes
            .iter()
            .zip(&in_dims)
            .enumerate()
            .filter_map(|(n, (s, dv))| {
                let k = (j + s.len()).checked_sub(rank)?;
                (s[k] != 1).then(|| (n, dv[k]))
            })
            .collect();
        let (o, l) = checks::broadcast_dim(b, &ds);
        out_dims.push(o);
        lead[j] = l;
    }
    for (n, ((&i, s), dv)) in operand_ids.iter().zip(&shapes).zip(&in_dims).enumerate() {
        let off = rank.saturating_sub(s.len());
        for (k, &d) in dv.iter().enumerate() {
            let Some(&o) = out_dims.get(k + off) else {
                continue;
            };
            if lead.get(k + off).copied().flatten() != Some(n) {
                checks::broadcasts(b, op, d, o, &checks::broadcast_msg(i, k))?;
            }
        }
    }
    // A dynamic input dim may be 1 at runtime: it broadcasts then.
    let dyn_one: Vec<Vec<Option<ValueId>>> = shapes
        .iter()
        .zip(&in_dims)
        .map(|(s, dv)| {
            s.iter()
                .zip(dv)
                .map(|(&d, &v)| (d == DYN).then(|| loops::cmp(b, "eq", v, one)))
                .collect()
        })
        .collect();
    let here = match b.ip() {
        ir::InsertPoint::Start(blk) | ir::InsertPoint::End(blk) => Some(blk),
        ir::InsertPoint::Before(o) | ir::InsertPoint::After(o) => b.m.op_block(o),
    };
    let out = match cx.reusable_operand(b.m, op, &operand_ids, &out_ty, here) {
        Some(buf) => buf,
        None => alloc_result(b, op, 0, &out_dims)?,
    };
    let mut err = None;
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        let mut loaded = Vec::with_capacity(inputs.len());
        for ((&v, s), d1) in inputs.iter().zip(&shapes).zip(&dyn_one) {
            let off = rank - s.len();
            let idx: Vec<ValueId> = s
                .iter()
                .enumerate()
                .map(|(k, &d)| match d1[k] {
                    Some(c) => loops::select(b, c, zero, ivs[k + off]),
                    None if d == 1 && out_shape[k + off] != 1 => zero,
                    None => ivs[k + off],
                })
                .collect();
            let mut operands = vec![v];
            operands.extend(idx);
            let elem = elem_of(b.m, v);
            let x = b.op1("memref.load", &operands, elem.clone(), &[]);
            // bf16 bodies compute in f32 and round once (as ml_dtypes and
            // the reference's f32 formulas do).
            let x = if elem.float_kind() == Some(ir::types::FloatKind::BF16) {
                scalar::fcast(b, x, &Type::f32())
            } else {
                x
            };
            loaded.push(x);
        }
        match body(b, op, &loaded, &out_elem) {
            Ok(r) => {
                let r = if out_elem.is_float() {
                    scalar::fcast(b, r, &out_elem)
                } else {
                    r
                };
                let mut operands = vec![r, out];
                operands.extend_from_slice(ivs);
                b.op("memref.store", &operands, &[], &[]);
            }
            Err(e) => err = Some(e),
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(Some(vec![out])),
    }
}
