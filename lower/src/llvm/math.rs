//! `math` ops: LLVM intrinsics where LLVM has them, libm calls otherwise.
//! f16 and bf16 are computed in f32 and rounded back.

use super::arith::{call_float_intrinsic, float_compute};
use super::types::{float_literal, scalar, splat_literal};
use super::{unsupported, FnCx};
use ir::dialects::op_error;
use ir::types::FloatKind;
use ir::{OpId, Result};

/// math op → LLVM intrinsic base name.
fn intrinsic(short: &str) -> Option<&'static str> {
    Some(match short {
        "exp" => "exp",
        "exp2" => "exp2",
        "log" => "log",
        "log2" => "log2",
        "log10" => "log10",
        "sqrt" => "sqrt",
        "absf" => "fabs",
        "floor" => "floor",
        "ceil" => "ceil",
        "round" => "round",
        "roundeven" => "roundeven",
        "trunc" => "trunc",
        "fma" => "fma",
        "powf" => "pow",
        "sin" => "sin",
        "cos" => "cos",
        "copysign" => "copysign",
        _ => return None,
    })
}

/// math op → libm function (double version; `f` suffix for float).
fn libm(short: &str) -> Option<&'static str> {
    Some(match short {
        "tanh" => "tanh",
        "erf" => "erf",
        "atan" => "atan",
        "atan2" => "atan2",
        "log1p" => "log1p",
        "expm1" => "expm1",
        "cbrt" => "cbrt",
        "tan" => "tan",
        "asin" => "asin",
        "acos" => "acos",
        "sinh" => "sinh",
        "cosh" => "cosh",
        "asinh" => "asinh",
        "acosh" => "acosh",
        "atanh" => "atanh",
        _ => return None,
    })
}

pub(crate) fn emit(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let name = cx.m.name(op).as_str();
    let short = name.strip_prefix("math.").unwrap_or(name);
    if let Some(base) = intrinsic(short) {
        return float_compute(cx, op, true, |cx, ty, k, a| {
            Ok(call_float_intrinsic(cx, base, ty, k, a))
        });
    }
    if let Some(base) = libm(short) {
        if cx.m.value_type(cx.result(op, 0)?).as_vector().is_some() {
            return libm_lanes(cx, op, base);
        }
        return float_compute(cx, op, true, |cx, ty, k, a| {
            let f = if k == FloatKind::F64 {
                base.to_string()
            } else {
                format!("{base}f")
            };
            let params = vec![ty; a.len()].join(", ");
            cx.mcx.declare(&f, &format!("declare {ty} @{f}({params})"));
            let args: Vec<String> = a.iter().map(|x| format!("{ty} {x}")).collect();
            Ok(format!("call {ty} @{f}({})", args.join(", ")))
        });
    }
    match short {
        "rsqrt" => {
            let rt = cx.m.value_type(cx.result(op, 0)?).clone();
            float_compute(cx, op, true, |cx, ty, k, a| {
                let s = call_float_intrinsic(cx, "sqrt", ty, k, a);
                let s = cx.assign(s);
                let one = float_literal(1.0, k).map_err(ir::Diagnostic::error)?;
                let one = splat_literal(&rt, &one).map_err(ir::Diagnostic::error)?;
                Ok(format!("fdiv {ty} {one}, {s}"))
            })
        }
        "absi" | "ctpop" | "ctlz" => int_intrinsic(cx, op, short),
        _ => Err(unsupported(cx.m, op)),
    }
}

fn int_intrinsic(cx: &mut FnCx<'_>, op: OpId, short: &str) -> Result<()> {
    let (src, r) = (cx.operand(op, 0)?, cx.result(op, 0)?);
    let ty = cx.vty(op, r)?;
    if !cx.m.value_type(r).is_int() {
        return Err(op_error(cx.m, op, "expects a signless integer"));
    }
    let x = cx.val(src)?;
    let (name, poison_flag) = match short {
        "absi" => ("abs", true),
        "ctlz" => ("ctlz", true),
        _ => ("ctpop", false),
    };
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
