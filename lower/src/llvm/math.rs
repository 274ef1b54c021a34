//! `math` ops: LLVM intrinsics where LLVM has them, libm calls otherwise.
//! f16 and bf16 are computed in f32 and rounded back.

use super::arith::{call_float_intrinsic, float_compute};
use super::types::float_literal;
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
        "rsqrt" => float_compute(cx, op, true, |cx, ty, k, a| {
            let s = call_float_intrinsic(cx, "sqrt", ty, k, a);
            let s = cx.assign(s);
            let one = float_literal(1.0, k).map_err(ir::Diagnostic::error)?;
            Ok(format!("fdiv {ty} {one}, {s}"))
        }),
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
