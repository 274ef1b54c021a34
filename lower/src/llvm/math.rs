//! `math` ops: LLVM intrinsics where LLVM has them, libm calls otherwise.
//! f16 and bf16 are computed in f32 and rounded back.

use super::arith::{call_float_intrinsic, float_compute};
use super::types::{float_literal, scalar, splat_literal};
use super::{unsupported, FnCx};
use ir::dialects::op_error;
use ir::types::FloatKind;
use ir::{MathOp, OpId, Result};

/// How a `math` op becomes LLVM IR.
enum Lowering {
    /// An LLVM float intrinsic (`llvm.exp.f32`).
    Intrinsic(&'static str),
    /// A libm function (double version; `f` suffix for float).
    Libm(&'static str),
    /// `1 / sqrt(x)`.
    Rsqrt,
    /// An LLVM integer intrinsic; `true`: it takes the is-poison flag.
    IntIntrinsic(&'static str, bool),
}

fn lowering(op: MathOp) -> Lowering {
    use Lowering::{Intrinsic, Libm};
    use MathOp as M;
    match op {
        M::Exp => Intrinsic("exp"),
        M::Exp2 => Intrinsic("exp2"),
        M::Log => Intrinsic("log"),
        M::Log2 => Intrinsic("log2"),
        M::Log10 => Intrinsic("log10"),
        M::Sqrt => Intrinsic("sqrt"),
        M::Absf => Intrinsic("fabs"),
        M::Floor => Intrinsic("floor"),
        M::Ceil => Intrinsic("ceil"),
        M::Round => Intrinsic("round"),
        M::Roundeven => Intrinsic("roundeven"),
        M::Trunc => Intrinsic("trunc"),
        M::Fma => Intrinsic("fma"),
        M::Powf => Intrinsic("pow"),
        M::Sin => Intrinsic("sin"),
        M::Cos => Intrinsic("cos"),
        M::Copysign => Intrinsic("copysign"),
        M::Tanh => Libm("tanh"),
        M::Erf => Libm("erf"),
        M::Atan => Libm("atan"),
        M::Atan2 => Libm("atan2"),
        M::Log1p => Libm("log1p"),
        M::Expm1 => Libm("expm1"),
        M::Cbrt => Libm("cbrt"),
        M::Tan => Libm("tan"),
        M::Asin => Libm("asin"),
        M::Acos => Libm("acos"),
        M::Sinh => Libm("sinh"),
        M::Cosh => Libm("cosh"),
        M::Asinh => Libm("asinh"),
        M::Acosh => Libm("acosh"),
        M::Atanh => Libm("atanh"),
        M::Rsqrt => Lowering::Rsqrt,
        M::Absi => Lowering::IntIntrinsic("abs", true),
        M::Ctlz => Lowering::IntIntrinsic("ctlz", true),
        M::Ctpop => Lowering::IntIntrinsic("ctpop", false),
    }
}

pub(crate) fn emit(cx: &mut FnCx<'_>, op: OpId, which: MathOp) -> Result<()> {
    match lowering(which) {
        Lowering::Intrinsic(base) => float_compute(cx, op, true, |cx, ty, k, a| {
            Ok(call_float_intrinsic(cx, base, ty, k, a))
        }),
        Lowering::Libm(base) if cx.m.value_type(cx.result(op, 0)?).as_vector().is_some() => {
            libm_lanes(cx, op, base)
        }
        Lowering::Libm(base) => float_compute(cx, op, true, |cx, ty, k, a| {
            let f = if k == FloatKind::F64 {
                base.to_string()
            } else {
                format!("{base}f")
            };
            let params = vec![ty; a.len()].join(", ");
            cx.mcx.declare(&f, &format!("declare {ty} @{f}({params})"));
            let args: Vec<String> = a.iter().map(|x| format!("{ty} {x}")).collect();
            Ok(format!("call {ty} @{f}({})", args.join(", ")))
        }),
        Lowering::Rsqrt => {
            let rt = cx.m.value_type(cx.result(op, 0)?).clone();
            float_compute(cx, op, true, |cx, ty, k, a| {
                let s = call_float_intrinsic(cx, "sqrt", ty, k, a);
                let s = cx.assign(s);
                let one = float_literal(1.0, k).map_err(ir::Diagnostic::error)?;
                let one = splat_literal(&rt, &one).map_err(ir::Diagnostic::error)?;
                Ok(format!("fdiv {ty} {one}, {s}"))
            })
        }
        Lowering::IntIntrinsic(name, poison_flag) => int_intrinsic(cx, op, name, poison_flag),
    }
}

fn int_intrinsic(cx: &mut FnCx<'_>, op: OpId, name: &str, poison_flag: bool) -> Result<()> {
    let (src, r) = (cx.operand(op, 0)?, cx.result(op, 0)?);
    let ty = cx.vty(op, r)?;
    if !cx.m.value_type(r).is_int() {
        return Err(op_error(cx.m, op, "expects a signless integer"));
    }
    let x = cx.val(src)?;
    let f = format!("llvm.{name}.{ty}");
    let (decl_params, call_args) = if poison_flag {
        (format!("{ty}, i1"), format!("{ty} {x}, i1 false"))
    } else {
        (ty.clone(), format!("{ty} {x}"))
    };
    cx.mcx
        .declare(&f, &format!("declare {ty} @{f}({decl_params})"));
    cx.define(r, format!("call {ty} @{f}({call_args})"));
    Ok(())
}

/// A libm function on a vector: called once per lane (LLVM has no
/// intrinsic to widen it to).
fn libm_lanes(cx: &mut FnCx<'_>, op: OpId, base: &str) -> Result<()> {
    let r = cx.result(op, 0)?;
    let rt = cx.m.value_type(r).clone();
    let Some(v) = rt.as_vector() else {
        return Err(unsupported(cx.m, op));
    };
    let et = scalar(&v.elem).map_err(|e| op_error(cx.m, op, e))?;
    let f = match v.elem.float_kind() {
        Some(FloatKind::F64) => base.to_string(),
        Some(FloatKind::F32) => format!("{base}f"),
        _ => return Err(op_error(cx.m, op, "libm lanes need f32 or f64 vectors")),
    };
    let vt = cx.vty(op, r)?;
    let args: Vec<String> =
        cx.m.operands(op)
            .iter()
            .map(|&x| cx.val(x))
            .collect::<Result<_>>()?;
    let params = vec![et.clone(); args.len()].join(", ");
    cx.mcx.declare(&f, &format!("declare {et} @{f}({params})"));
    let mut acc = "poison".to_string();
    for lane in 0..v.len() {
        let lanes: Vec<String> = args
            .iter()
            .map(|a| {
                let x = cx.assign(format!("extractelement {vt} {a}, i64 {lane}"));
                format!("{et} {x}")
            })
            .collect();
        let y = cx.assign(format!("call {et} @{f}({})", lanes.join(", ")));
        acc = cx.assign(format!("insertelement {vt} {acc}, {et} {y}, i64 {lane}"));
    }
    cx.alias(r, acc);
    Ok(())
}
