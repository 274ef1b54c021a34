//! Element-wise ops with multidirectional (NumPy) broadcasting: one loop
//! nest over the output, each input indexed with its broadcast dims pinned
//! to 0, and a scalar body per op.

pub mod activations;
pub mod fusion;
pub mod logic;

use crate::convert::{dims, Lowering};
use crate::kernels::support::checks;
use crate::kernels::support::scalar;
use crate::kernels::{support::alloc_result, support::elem_of, support::shape_of};
use crate::loops::{loop_nest_by_work, Bounds, PARALLEL_MIN_WORK};
use fusion::Src;
use ir::builder::CmpI;
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId, DYN};

/// The scalar body of an element-wise op: the loaded operands (omitted
/// optionals left out) and the result element type give the result.
pub(crate) type Body = fn(&mut Builder<'_>, OpId, &[ValueId], &Type) -> Result<ValueId>;

/// The first operand of a body.
pub(crate) fn first(b: &Builder<'_>, op: OpId, x: &[ValueId]) -> Result<ValueId> {
    x.first()
        .copied()
        .ok_or_else(|| op_error(b.m, op, "expects an input"))
}

/// The first two operands of a body.
pub(crate) fn two(b: &Builder<'_>, op: OpId, x: &[ValueId]) -> Result<(ValueId, ValueId)> {
    match x {
        [p, q, ..] => Ok((*p, *q)),
        _ => Err(op_error(b.m, op, "expects two inputs")),
    }
}

/// The type of `x`, which must be a float.
pub(crate) fn float_type(b: &Builder<'_>, op: OpId, x: ValueId) -> Result<Type> {
    let t = b.m.value_type(x).element_type().clone();
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

/// The first operand, which must be a float.
pub(crate) fn float_arg(b: &Builder<'_>, op: OpId, x: &[ValueId]) -> Result<ValueId> {
    let v = first(b, op, x)?;
    float_type(b, op, v)?;
    Ok(v)
}

/// `x0 f x1 f ...` over every operand (Sum and n-ary Max/Min).
fn fold(
    b: &mut Builder<'_>,
    op: OpId,
    xs: &[ValueId],
    f: fn(&mut Builder<'_>, ValueId, ValueId) -> ValueId,
) -> Result<ValueId> {
    let mut acc = first(b, op, xs)?;
    for &x in xs.iter().skip(1) {
        acc = f(b, acc, x);
    }
    Ok(acc)
}

pub fn add(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    fold(b, op, x, |b, p, q| b.add(p, q))
}
pub fn mul(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    fold(b, op, x, |b, p, q| b.mul(p, q))
}
pub fn max(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    fold(b, op, x, |b, p, q| b.max(p, q))
}
pub fn min(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    fold(b, op, x, |b, p, q| b.min(p, q))
}
pub fn sub(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let (p, q) = two(b, op, x)?;
    Ok(b.sub(p, q))
}
pub fn div(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let (p, q) = two(b, op, x)?;
    Ok(b.div(p, q))
}
pub fn neg(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let v = first(b, op, x)?;
    Ok(b.neg(v))
}
pub fn abs(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let v = first(b, op, x)?;
    Ok(if b.m.value_type(v).is_float() {
        b.absf(v)
    } else {
        b.absi(v)
    })
}
pub fn reciprocal(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let v = float_arg(b, op, x)?;
    let one = b.constant_like(v, 1.0);
    Ok(b.divf(one, v))
}
/// Cast and CastLike: ONNX conversion to the result element type.
pub fn cast(b: &mut Builder<'_>, op: OpId, x: &[ValueId], out: &Type) -> Result<ValueId> {
    let v = first(b, op, x)?;
    let view = onnx::ops::Cast::of(b.m, op);
    let (sat, mode) = (view.saturate() != 0, view.round_mode().to_string());
    scalar::cast(b, op, v, out, sat, &mode)
}

fn cast_like_body(b: &mut Builder<'_>, op: OpId, x: &[ValueId], out: &Type) -> Result<ValueId> {
    let v = first(b, op, x)?;
    let view = onnx::ops::CastLike::of(b.m, op);
    let (sat, mode) = (view.saturate() != 0, view.round_mode().to_string());
    scalar::cast(b, op, v, out, sat, &mode)
}

/// Float unary math ops: the body of each is one `math` op.
macro_rules! float_unary {
    ($($(#[$doc:meta])* $name:ident => $method:ident;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
                let v = float_arg(b, op, x)?;
                Ok(b.$method(v))
            }
        )*
    };
}

float_unary! {
    exp => exp;
    log => log;
    sqrt => sqrt;
    erf => erf;
    floor => floor;
    ceil => ceil;
    /// Round half to even.
    round => roundeven;
    sin => sin;
    cos => cos;
    tan => tan;
    asin => asin;
    acos => acos;
    atan => atan;
    sinh => sinh;
    cosh => cosh;
    tanh => tanh;
    asinh => asinh;
    acosh => acosh;
    atanh => atanh;
}

/// CastLike: Cast to the type of the second operand, which is not read.
pub fn cast_like(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    nest(cx, b, op, 1, cast_like_body)
}

/// Lowers an element-wise `op` with scalar body `body`.
pub fn elementwise(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    body: Body,
) -> Result<Vec<ValueId>> {
    let n = b.m.operands(op).len();
    nest(cx, b, op, n, body)
}

/// The broadcasting nest over the result of `op` applying `body` to the
/// first `n` operands (omitted optionals skipped).
fn nest(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    n: usize,
    body: Body,
) -> Result<Vec<ValueId>> {
    let operand_ids: Vec<usize> = (0..n).filter(|&i| cx.has_input(b.m, op, i)).collect();
    // Buffers, or deferred element-wise producers computed in this loop.
    let srcs: Vec<Src> = operand_ids
        .iter()
        .map(|&i| Src::of(cx, b, op, i))
        .collect::<Result<_>>()?;
    let inputs: Vec<ValueId> = srcs
        .iter()
        .map(|s| {
            s.leaf()
                .ok_or_else(|| op_error(b.m, op, "an input without a buffer"))
        })
        .collect::<Result<_>>()?;
    if inputs.is_empty() {
        return Err(op_error(b.m, op, "expects at least one input"));
    }
    let out_ty = crate::kernels::support::result_memref_type(b.m, op, 0)?;
    let out_shape = out_ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    let out_elem = out_ty.element_type().clone();
    let shapes: Vec<Vec<i64>> = inputs.iter().map(|&v| shape_of(b.m, v)).collect();
    let in_dims: Vec<Vec<ValueId>> = inputs.iter().map(|&v| dims(b, v)).collect();
    let bounds = Bounds::new(b);
    let out_dims = broadcast_dims(b, op, &operand_ids, &shapes, &in_dims, &out_shape)?;
    // A dynamic input dim may be 1 at runtime: it broadcasts then, unless
    // inference proved it the output's own size.
    let dyn_one: Vec<Vec<Option<ValueId>>> = shapes
        .iter()
        .zip(&in_dims)
        .zip(&operand_ids)
        .map(|((s, dv), &i)| {
            let same = same_sized_dims(cx, b.m, op, i, s.len());
            s.iter()
                .zip(dv)
                .zip(same)
                .map(|((&d, &v), same)| {
                    (d == DYN && !same).then(|| b.cmpi(CmpI::Eq, v, bounds.one))
                })
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
    let rank = out_shape.len();
    // Operands of the result's own shape, all row-major: one loop over the
    // elements of flat views, so the loop LLVM vectorizes is long even
    // when the last dim is short or known only at run time.
    let same_shape = srcs
        .iter()
        .zip(&shapes)
        .zip(&dyn_one)
        .all(|((src, s), d1)| {
            s.len() == rank
                && src.contiguous(b.m)
                && d1.iter().all(Option::is_none)
                && s.iter().zip(&out_shape).all(|(&d, &o)| d != 1 || o == 1)
        });
    let known = scalar_constants(b, op, &operand_ids, &inputs);
    let (srcs, shapes, dyn_one, out_view, out_dims) = if same_shape && rank > 1 {
        let total = crate::kernels::support::index::product(b, &out_dims);
        let flat: Vec<Src> = srcs.into_iter().map(|s| s.flat(b, total)).collect();
        let n = flat.len();
        let out_view = crate::kernels::linalg::gemm::flat(b, out, total);
        (
            flat,
            vec![vec![DYN]; n],
            vec![vec![None]; n],
            out_view,
            vec![total],
        )
    } else {
        (srcs, shapes, dyn_one, out, out_dims)
    };
    let mut err = None;
    loop_nest_by_work(
        b,
        &bounds,
        &out_dims,
        &out_dims,
        PARALLEL_MIN_WORK,
        &mut |b, ivs| {
            let mut loaded = Vec::with_capacity(srcs.len());
            for (((src, s), d1), k) in srcs.iter().zip(&shapes).zip(&dyn_one).zip(&known) {
                if let Some(k) = *k {
                    loaded.push(k);
                    continue;
                }
                let at = (ivs, out_shape.as_slice(), bounds.zero);
                loaded.push(src.eval(b, (s, d1), at, &mut err));
            }
            match body(b, op, &loaded, &out_elem) {
                Ok(r) => {
                    let r = if out_elem.is_float() {
                        scalar::fcast(b, r, &out_elem)
                    } else {
                        r
                    };
                    b.store(r, out_view, ivs);
                }
                Err(e) => err = Some(e),
            }
        },
    );
    crate::kernels::support::finish(err, vec![out])
}

/// Input `v` (shape `s`, runtime-one dims `d1`) at the output's `ivs`,
/// its broadcast dims pinned to 0.
pub(crate) fn load_input(
    b: &mut Builder<'_>,
    (v, s, d1): (ValueId, &[i64], &[Option<ValueId>]),
    ivs: &[ValueId],
    out_shape: &[i64],
    zero: ValueId,
) -> ValueId {
    let off = ivs.len() - s.len();
    let idx: Vec<ValueId> = s
        .iter()
        .enumerate()
        .map(|(k, &d)| match d1[k] {
            // `iv · (0 or 1)`, not a select of the index: a symbolic
            // stride, for which LLVM's vectorizer versions the loop (a
            // stride-1 vector loop when no dim broadcasts at run time).
            Some(c) => {
                let one = b.const_index(1);
                let keep = b.select(c, zero, one);
                b.muli(ivs[k + off], keep)
            }
            None if d == 1 && out_shape.get(k + off) != Some(&1) => zero,
            None => ivs[k + off],
        })
        .collect();
    let x = b.load(v, &idx);
    // bf16 bodies compute in f32 and round once (as ml_dtypes and the
    // reference's f32 formulas do).
    if elem_of(b.m, v).float_kind() == Some(ir::types::FloatKind::BF16) {
        scalar::fcast(b, x, &Type::f32())
    } else {
        x
    }
}

/// Per input: its one element as an `arith.constant` when it is a
/// single-element constant of f32, f64 or an integer the f64 holds
/// exactly, so the body sees the number (Pow's exponent 3 becomes two
/// multiplies in `expand-math`; LLVM folds `x · 1`) instead of a load.
pub(crate) fn scalar_constants(
    b: &mut Builder<'_>,
    op: OpId,
    operand_ids: &[usize],
    inputs: &[ValueId],
) -> Vec<Option<ValueId>> {
    operand_ids
        .iter()
        .zip(inputs)
        .map(|(&i, &v)| {
            let x = known_scalar(b.m, op, i)?;
            Some(b.constant(&elem_of(b.m, v), x))
        })
        .collect()
}

/// Operand `i`'s one element when it is a single-element constant of f32,
/// f64 or an integer the f64 holds exactly.
pub(crate) fn known_scalar(m: &ir::Module, op: OpId, i: usize) -> Option<f64> {
    let e = crate::kernels::support::constant_elements(m, op, i).filter(|e| e.len() == 1)?;
    let elem = e.dtype().to_type();
    let wide = matches!(elem.bit_width(), Some(32 | 64));
    let x = e.get(0)?.f64();
    let exact =
        wide && (elem.is_float() || (elem.is_int() && x.fract() == 0.0 && x.abs() < 2f64.powi(53)));
    exact.then_some(x)
}

/// Per dim of operand `i` (rank `rank`): whether shape inference gave it
/// the same symbolic size as the result's dim it maps to, and every other
/// operand there is absent, a static 1 or that same symbol, so it never
/// broadcasts (where both are 1, the index is 0 either way). Inference
/// names a broadcast of two different symbols `broadcast(a, b)`, equal to
/// neither; the check of the other operands keeps this sound for any
/// result name.
pub(crate) fn same_sized_dims(
    cx: &Lowering,
    m: &ir::Module,
    op: OpId,
    i: usize,
    rank: usize,
) -> Vec<bool> {
    let sym = |v: Option<ValueId>| v.and_then(|v| cx.tensor_type(m, v)?.sym_dims());
    let (Some(ins), Some(outs)) = (sym(m.operand(op, i)), sym(m.result(op, 0))) else {
        return vec![false; rank];
    };
    let others: Vec<_> = (0..m.operands(op).len())
        .filter(|&j| j != i)
        .map(|j| sym(m.operand(op, j)))
        .collect();
    let n = outs.len();
    let off = n.saturating_sub(ins.len());
    (0..rank)
        .map(|k| {
            let p = k + off;
            let Some(Some(o)) = outs.get(p) else {
                return false;
            };
            // Another operand's dim at output position `p`: absent (it
            // has fewer dims), a static 1 or `o` itself cannot differ.
            let agrees = |d: &Option<Vec<Option<ir::dim::DimExpr>>>| {
                let Some(d) = d else { return false };
                match (p + d.len()).checked_sub(n).map(|at| d.get(at)) {
                    None => true,
                    Some(Some(Some(e))) => e == o || e.as_const() == Some(1),
                    Some(_) => false,
                }
            };
            matches!(ins.get(k), Some(Some(a)) if a == o) && others.iter().all(agrees)
        })
        .collect()
}

/// The output dims: static ones as constants, each dynamic one the input
/// dims folded with "1 broadcasts"; asserts that every input dim
/// broadcasts to its output dim.
fn broadcast_dims(
    b: &mut Builder<'_>,
    op: OpId,
    operand_ids: &[usize],
    shapes: &[Vec<i64>],
    in_dims: &[Vec<ValueId>],
    out_shape: &[i64],
) -> Result<Vec<ValueId>> {
    let rank = out_shape.len();
    // `lead[j]` needs no check at dim j (see `checks::broadcast_dim`).
    let mut out_dims = Vec::with_capacity(rank);
    let mut lead = vec![None; rank];
    for (j, &d) in out_shape.iter().enumerate() {
        if d != DYN {
            out_dims.push(b.const_index(d));
            continue;
        }
        let ds: Vec<(usize, ValueId)> = shapes
            .iter()
            .zip(in_dims)
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
    for (n, ((&i, s), dv)) in operand_ids.iter().zip(shapes).zip(in_dims).enumerate() {
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
    Ok(out_dims)
}
