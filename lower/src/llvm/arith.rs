//! `arith` ops on scalars.
//!
//! bf16 arithmetic is done in f32 and rounded back with integer code: LLVM
//! would call `__truncsfbf2`, which older libgcc (Debian 12) lacks.

use super::minifloat;
use super::types::{float_literal, int_literal};
use super::FnCx;
use ir::attr::Attribute;
use ir::dialects::arith::{CMPF_PREDICATES, CMPI_PREDICATES};
use ir::dialects::op_error;
use ir::types::FloatKind;
use ir::{ArithOp, OpId, Result, ValueId};

pub(crate) fn emit(cx: &mut FnCx<'_>, op: OpId, which: ArithOp) -> Result<()> {
    use ArithOp as A;
    match which {
        A::Constant => constant(cx, op),
        A::Addi => int_bin(cx, op, "add"),
        A::Subi => int_bin(cx, op, "sub"),
        A::Muli => int_bin(cx, op, "mul"),
        A::Divsi => int_bin(cx, op, "sdiv"),
        A::Divui => int_bin(cx, op, "udiv"),
        A::Remsi => int_bin(cx, op, "srem"),
        A::Remui => int_bin(cx, op, "urem"),
        A::Andi => int_bin(cx, op, "and"),
        A::Ori => int_bin(cx, op, "or"),
        A::Xori => int_bin(cx, op, "xor"),
        A::Shli => int_bin(cx, op, "shl"),
        A::Shrsi => int_bin(cx, op, "ashr"),
        A::Shrui => int_bin(cx, op, "lshr"),
        A::Maxsi => int_intrinsic(cx, op, "smax"),
        A::Minsi => int_intrinsic(cx, op, "smin"),
        A::Maxui => int_intrinsic(cx, op, "umax"),
        A::Minui => int_intrinsic(cx, op, "umin"),
        A::Ceildivsi | A::Floordivsi | A::Ceildivui => rounded_div(cx, op, which),
        A::Addf => float_bin(cx, op, "fadd"),
        A::Subf => float_bin(cx, op, "fsub"),
        A::Mulf => float_bin(cx, op, "fmul"),
        A::Divf => float_bin(cx, op, "fdiv"),
        A::Remf => float_bin(cx, op, "frem"),
        A::Negf => float_compute(cx, op, false, |_, ty, _, a| {
            Ok(format!("fneg {ty} {}", arg(a, 0)?))
        }),
        A::Maximumf => float_intrinsic(cx, op, "maximum"),
        A::Minimumf => float_intrinsic(cx, op, "minimum"),
        A::Maxnumf => float_intrinsic(cx, op, "maxnum"),
        A::Minnumf => float_intrinsic(cx, op, "minnum"),
        A::Cmpi => cmp(cx, op, false),
        A::Cmpf => cmp(cx, op, true),
        A::Select => select(cx, op),
        A::Extf => float_cast(cx, op, which, "fpext"),
        A::Truncf => float_cast(cx, op, which, "fptrunc"),
        A::Sitofp => float_cast(cx, op, which, "sitofp"),
        A::Uitofp => float_cast(cx, op, which, "uitofp"),
        A::Fptosi => float_cast(cx, op, which, "fptosi"),
        A::Fptoui => float_cast(cx, op, which, "fptoui"),
        A::Extsi | A::IndexCast => int_cast(cx, op, true),
        A::Extui | A::Trunci | A::IndexCastui => int_cast(cx, op, false),
        A::Bitcast => bitcast(cx, op),
    }
}

fn arg(a: &[String], i: usize) -> Result<&str> {
    a.get(i)
        .map(String::as_str)
        .ok_or_else(|| ir::Diagnostic::error(format!("missing operand #{i}")))
}

/// Bit width of an integer or index value (index is 64), of the element
/// type for vectors.
fn int_width(cx: &FnCx<'_>, op: OpId, v: ValueId) -> Result<u32> {
    let t = cx.m.value_type(v);
    let t = if t.as_vector().is_some() {
        t.element_type()
    } else {
        t
    };
    match t {
        ir::Type::Index => Ok(64),
        ir::Type::Int { width, .. } => Ok(*width),
        other => Err(op_error(
            cx.m,
            op,
            format!("expected an integer, got {other}"),
        )),
    }
}

fn float_kind(cx: &FnCx<'_>, op: OpId, v: ValueId) -> Result<FloatKind> {
    let t = cx.m.value_type(v);
    let t = if t.as_vector().is_some() {
        t.element_type()
    } else {
        t
    };
    match t {
        ir::Type::Float(k) => Ok(*k),
        other => Err(op_error(cx.m, op, format!("expected a float, got {other}"))),
    }
}

fn constant(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let m = cx.m;
    let r = cx.result(op, 0)?;
    let ty = m.value_type(r);
    let text = match (m.attr(op, "value"), ty) {
        (Some(Attribute::Int(v, _)), ir::Type::Index) => v.to_string(),
        (Some(Attribute::Int(v, _)), ir::Type::Int { width, .. }) => int_literal(*v, *width),
        (Some(Attribute::Bool(b)), _) => b.to_string(),
        (Some(Attribute::Float(v, _)), ir::Type::Float(k)) => {
            float_literal(*v, *k).map_err(|e| op_error(m, op, e))?
        }
        (Some(Attribute::Elements(_)), _) => {
            return Err(op_error(
                m,
                op,
                "vector and tensor constants are not supported in codegen",
            ));
        }
        _ => {
            return Err(op_error(
                m,
                op,
                format!("unsupported constant of type {ty}"),
            ))
        }
    };
    // Unsupported result types (f8, tensors) still fail here.
    cx.vty(op, r)?;
    cx.alias(r, text);
    Ok(())
}

fn operands_text(cx: &FnCx<'_>, op: OpId) -> Result<Vec<String>> {
    cx.m.operands(op).iter().map(|&v| cx.val(v)).collect()
}

fn int_bin(cx: &mut FnCx<'_>, op: OpId, inst: &str) -> Result<()> {
    let r = cx.result(op, 0)?;
    let ty = cx.vty(op, r)?;
    int_width(cx, op, r)?;
    let a = operands_text(cx, op)?;
    cx.define(r, format!("{inst} {ty} {}, {}", arg(&a, 0)?, arg(&a, 1)?));
    Ok(())
}

fn int_intrinsic(cx: &mut FnCx<'_>, op: OpId, which: &str) -> Result<()> {
    let r = cx.result(op, 0)?;
    let ty = cx.vty(op, r)?;
    int_width(cx, op, r)?;
    let a = operands_text(cx, op)?;
    let suffix =
        super::types::overload_suffix(cx.m.value_type(r)).map_err(|e| op_error(cx.m, op, e))?;
    let f = format!("llvm.{which}.{suffix}");
    cx.mcx
        .declare(&f, &format!("declare {ty} @{f}({ty}, {ty})"));
    cx.define(
        r,
        format!("call {ty} @{f}({ty} {}, {ty} {})", arg(&a, 0)?, arg(&a, 1)?),
    );
    Ok(())
}

/// ceildivsi / floordivsi: truncating division corrected by one when the
/// remainder is non-zero and its sign says the quotient was rounded the
/// wrong way. ceildivui: add one for a non-zero remainder.
fn rounded_div(cx: &mut FnCx<'_>, op: OpId, which: ArithOp) -> Result<()> {
    let r = cx.result(op, 0)?;
    let ty = cx.vty(op, r)?;
    int_width(cx, op, r)?;
    let a = operands_text(cx, op)?;
    let (x, y) = (arg(&a, 0)?, arg(&a, 1)?);
    if which == ArithOp::Ceildivui {
        let q = cx.assign(format!("udiv {ty} {x}, {y}"));
        let rem = cx.assign(format!("urem {ty} {x}, {y}"));
        let nz = cx.assign(format!("icmp ne {ty} {rem}, 0"));
        let one = cx.assign(format!("zext i1 {nz} to {ty}"));
        cx.define(r, format!("add {ty} {q}, {one}"));
        return Ok(());
    }
    let q = cx.assign(format!("sdiv {ty} {x}, {y}"));
    let rem = cx.assign(format!("srem {ty} {x}, {y}"));
    let nz = cx.assign(format!("icmp ne {ty} {rem}, 0"));
    let signs = cx.assign(format!("xor {ty} {rem}, {y}"));
    let (pred, inst) = if which == ArithOp::Ceildivsi {
        ("sge", "add")
    } else {
        ("slt", "sub")
    };
    let wrong = cx.assign(format!("icmp {pred} {ty} {signs}, 0"));
    let adj = cx.assign(format!("and i1 {nz}, {wrong}"));
    let one = cx.assign(format!("zext i1 {adj} to {ty}"));
    cx.define(r, format!("{inst} {ty} {q}, {one}"));
    Ok(())
}

/// Computes a float op on its operands in the type it is evaluated in and
/// defines the result. bf16 (and, with `promote_f16`, f16) operands are
/// widened to f32 first and the result rounded back. `f` gets (LLVM type,
/// kind, operand texts) and returns the final instruction.
pub(crate) fn float_compute(
    cx: &mut FnCx<'_>,
    op: OpId,
    promote_f16: bool,
    f: impl FnOnce(&mut FnCx<'_>, &str, FloatKind, &[String]) -> Result<String>,
) -> Result<()> {
    let r = cx.result(op, 0)?;
    let k = float_kind(cx, op, r)?;
    let ty = cx.vty(op, r)?;
    let a = operands_text(cx, op)?;
    let small = k.minifloat();
    let promote = small.is_some() || k == FloatKind::BF16 || (promote_f16 && k == FloatKind::F16);
    if promote && cx.m.value_type(r).as_vector().is_some() {
        return Err(op_error(
            cx.m,
            op,
            "f16 and bf16 vectors are unsupported in codegen",
        ));
    }
    if !promote {
        let rhs = f(cx, &ty, k, &a)?;
        cx.define(r, rhs);
        return Ok(());
    }
    let wide: Vec<String> = a.iter().map(|x| to_float(cx, x, &ty, k)).collect();
    let rhs = f(cx, "float", FloatKind::F32, &wide)?;
    let t = cx.assign(rhs);
    if let Some(fm) = small {
        let code = minifloat::narrow(cx, &t, "float", &fm);
        cx.alias(r, code);
        return Ok(());
    }
    let back = narrow_from_float(cx, &t, k);
    cx.define(r, back);
    Ok(())
}

/// The f32 value of `x` of type `ty` (kind `k`), exact for every kind
/// narrower than f32.
fn to_float(cx: &mut FnCx<'_>, x: &str, ty: &str, k: FloatKind) -> String {
    match k {
        FloatKind::F32 => x.to_string(),
        FloatKind::F64 => cx.assign(format!("fptrunc double {x} to float")),
        k => match k.minifloat() {
            Some(fm) => minifloat::widen(cx, x, &fm),
            None => cx.assign(format!("fpext {ty} {x} to float")),
        },
    }
}

/// The instruction that narrows the f32 value `x` to `k` (f16, bf16 or
/// f32 itself); bf16 rounding to nearest even is done with integer ops.
pub(crate) fn narrow_from_float(cx: &mut FnCx<'_>, x: &str, k: FloatKind) -> String {
    match k {
        FloatKind::BF16 => {
            let bits = cx.assign(format!("bitcast float {x} to i32"));
            let hi = cx.assign(format!("lshr i32 {bits}, 16"));
            let lsb = cx.assign(format!("and i32 {hi}, 1"));
            let bias = cx.assign(format!("add i32 {lsb}, 32767"));
            let sum = cx.assign(format!("add i32 {bits}, {bias}"));
            let rounded = cx.assign(format!("lshr i32 {sum}, 16"));
            let quiet = cx.assign(format!("or i32 {hi}, 64"));
            let nan = cx.assign(format!("fcmp uno float {x}, 0.0"));
            let pick = cx.assign(format!("select i1 {nan}, i32 {quiet}, i32 {rounded}"));
            let half = cx.assign(format!("trunc i32 {pick} to i16"));
            format!("bitcast i16 {half} to bfloat")
        }
        FloatKind::F16 => format!("fptrunc float {x} to half"),
        _ => format!("bitcast float {x} to float"),
    }
}

/// `fadd`, `fsub` and `fmul` may contract into FMAs (`contract`): the
/// driver's `-ffp-contract=fast` does not reach instructions of an IR
/// input, so polynomials (exp, tanh, erf) ran as separate multiplies and
/// adds (SiLU's sigmoid at twice the instructions).
fn float_bin(cx: &mut FnCx<'_>, op: OpId, inst: &str) -> Result<()> {
    float_compute(cx, op, false, |_, ty, _, a| {
        Ok(format!(
            "{inst} contract {ty} {}, {}",
            arg(a, 0)?,
            arg(a, 1)?
        ))
    })
}

/// The suffix of a float intrinsic (`f32` in `llvm.exp.f32`).
pub(crate) fn intrinsic_suffix(k: FloatKind) -> &'static str {
    match k {
        FloatKind::F16 => "f16",
        FloatKind::F64 => "f64",
        _ => "f32",
    }
}

/// `call T @llvm.<name>.<suffix>(args)`, declaring the intrinsic; `ty`
/// is an LLVM vector type for vectors (`<8 x float>` → `.v8f32`).
pub(crate) fn call_float_intrinsic(
    cx: &mut FnCx<'_>,
    name: &str,
    ty: &str,
    k: FloatKind,
    a: &[String],
) -> String {
    let suffix = match ty.strip_prefix('<').and_then(|t| t.split_once(" x ")) {
        Some((n, _)) => format!("v{n}{}", intrinsic_suffix(k)),
        None => intrinsic_suffix(k).to_string(),
    };
    let f = format!("llvm.{name}.{suffix}");
    let params = vec![ty; a.len()].join(", ");
    cx.mcx.declare(&f, &format!("declare {ty} @{f}({params})"));
    let args: Vec<String> = a.iter().map(|x| format!("{ty} {x}")).collect();
    format!("call {ty} @{f}({})", args.join(", "))
}

fn float_intrinsic(cx: &mut FnCx<'_>, op: OpId, name: &str) -> Result<()> {
    float_compute(cx, op, false, |cx, ty, k, a| {
        Ok(call_float_intrinsic(cx, name, ty, k, a))
    })
}

fn cmp(cx: &mut FnCx<'_>, op: OpId, float: bool) -> Result<()> {
    let m = cx.m;
    let p = m
        .attr(op, "predicate")
        .and_then(Attribute::as_int)
        .unwrap_or(-1);
    let table: &[&str] = if float {
        &CMPF_PREDICATES
    } else {
        &CMPI_PREDICATES
    };
    let pred = usize::try_from(p)
        .ok()
        .and_then(|i| table.get(i))
        .ok_or_else(|| op_error(m, op, format!("invalid predicate {p}")))?;
    let r = cx.result(op, 0)?;
    let lhs = cx.operand(op, 0)?;
    let mut ty = cx.vty(op, lhs)?;
    let mut a = operands_text(cx, op)?;
    if float {
        let k = float_kind(cx, op, lhs)?;
        if k == FloatKind::BF16 || k.minifloat().is_some() {
            a = a.iter().map(|x| to_float(cx, x, &ty, k)).collect();
            ty = "float".into();
        }
    }
    let inst = if float { "fcmp" } else { "icmp" };
    cx.define(
        r,
        format!("{inst} {pred} {ty} {}, {}", arg(&a, 0)?, arg(&a, 1)?),
    );
    Ok(())
}

fn select(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let r = cx.result(op, 0)?;
    let ty = cx.vty(op, r)?;
    let cty = cx.vty(op, cx.operand(op, 0)?)?;
    let a = operands_text(cx, op)?;
    cx.define(
        r,
        format!(
            "select {cty} {}, {ty} {}, {ty} {}",
            arg(&a, 0)?,
            arg(&a, 1)?,
            arg(&a, 2)?
        ),
    );
    Ok(())
}

/// A float cast; `inst` is its LLVM instruction.
fn float_cast(cx: &mut FnCx<'_>, op: OpId, which: ArithOp, inst: &str) -> Result<()> {
    let (src, r) = (cx.operand(op, 0)?, cx.result(op, 0)?);
    if minifloat_of(cx.m.value_type(src)).is_some() || minifloat_of(cx.m.value_type(r)).is_some() {
        return minifloat_cast(cx, op, which, inst);
    }
    let (from, to) = (cx.vty(op, src)?, cx.vty(op, r)?);
    let mut x = cx.val(src)?;
    let mut from_ty = from.clone();
    // bf16 sources are widened first; bf16 results are produced from f32.
    if from == "bfloat" && (which != ArithOp::Extf || to == "double") {
        x = cx.assign(format!("fpext bfloat {x} to float"));
        from_ty = "float".into();
    }
    if to == "bfloat" {
        let f = match which {
            ArithOp::Truncf if from_ty == "double" => {
                cx.assign(format!("fptrunc double {x} to float"))
            }
            ArithOp::Truncf => x,
            ArithOp::Sitofp | ArithOp::Uitofp => {
                cx.assign(format!("{inst} {from_ty} {x} to float"))
            }
            _ => {
                return Err(op_error(
                    cx.m,
                    op,
                    format!("invalid cast from {from} to {to}"),
                ))
            }
        };
        let rhs = narrow_from_float(cx, &f, FloatKind::BF16);
        cx.define(r, rhs);
        return Ok(());
    }
    if from_ty == to {
        cx.alias(r, x);
        return Ok(());
    }
    cx.define(r, format!("{inst} {from_ty} {x} to {to}"));
    Ok(())
}

/// The format of an 8- or 4-bit float type.
fn minifloat_of(t: &ir::Type) -> Option<ir::types::MiniFloat> {
    match t {
        ir::Type::Float(k) => k.minifloat(),
        _ => None,
    }
}

/// A cast from or to an 8- or 4-bit float: through f32 (from one; exact),
/// or from f32 or f64 (to one; integers via f64, so one rounding up to 53
/// bits).
fn minifloat_cast(cx: &mut FnCx<'_>, op: OpId, which: ArithOp, inst: &str) -> Result<()> {
    if cx.m.value_type(cx.operand(op, 0)?).as_vector().is_some() {
        return Err(op_error(
            cx.m,
            op,
            "vectors of 8- or 4-bit floats are unsupported in codegen",
        ));
    }
    let (src, r) = (cx.operand(op, 0)?, cx.result(op, 0)?);
    let (from_t, to_t) = (cx.m.value_type(src).clone(), cx.m.value_type(r).clone());
    let (from, to) = (cx.vty(op, src)?, cx.vty(op, r)?);
    let x = cx.val(src)?;
    // The source as f32 or f64.
    let (v, vty) = match (&from_t, which) {
        (ir::Type::Float(FloatKind::F64), _) => (x, "double"),
        (ir::Type::Float(k), _) => (to_float(cx, &x, &from, *k), "float"),
        (_, ArithOp::Sitofp | ArithOp::Uitofp) => {
            (cx.assign(format!("{inst} {from} {x} to double")), "double")
        }
        _ => {
            return Err(op_error(
                cx.m,
                op,
                format!("invalid cast from {from_t} to {to_t}"),
            ))
        }
    };
    if let Some(fm) = minifloat_of(&to_t) {
        let code = minifloat::narrow(cx, &v, vty, &fm);
        cx.alias(r, code);
        return Ok(());
    }
    let rhs = match (&to_t, which) {
        (ir::Type::Float(FloatKind::BF16), _) => {
            let f = match vty {
                "double" => cx.assign(format!("fptrunc double {v} to float")),
                _ => v,
            };
            narrow_from_float(cx, &f, FloatKind::BF16)
        }
        (ir::Type::Float(_), _) if to == vty => {
            cx.alias(r, v);
            return Ok(());
        }
        (ir::Type::Float(FloatKind::F64), _) => format!("fpext {vty} {v} to double"),
        (ir::Type::Float(_), _) => format!("fptrunc {vty} {v} to {to}"),
        (_, ArithOp::Fptosi | ArithOp::Fptoui) => format!("{inst} {vty} {v} to {to}"),
        _ => {
            return Err(op_error(
                cx.m,
                op,
                format!("invalid cast from {from_t} to {to_t}"),
            ))
        }
    };
    cx.define(r, rhs);
    Ok(())
}

/// An integer width change; `signed`: sign-extends.
fn int_cast(cx: &mut FnCx<'_>, op: OpId, signed: bool) -> Result<()> {
    let (src, r) = (cx.operand(op, 0)?, cx.result(op, 0)?);
    let (from, to) = (int_width(cx, op, src)?, int_width(cx, op, r)?);
    let (fty, tty) = (cx.vty(op, src)?, cx.vty(op, r)?);
    let x = cx.val(src)?;
    let inst = match from.cmp(&to) {
        std::cmp::Ordering::Equal => {
            cx.alias(r, x);
            return Ok(());
        }
        std::cmp::Ordering::Greater => "trunc",
        std::cmp::Ordering::Less if signed => "sext",
        std::cmp::Ordering::Less => "zext",
    };
    cx.define(r, format!("{inst} {fty} {x} to {tty}"));
    Ok(())
}

fn bitcast(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let (src, r) = (cx.operand(op, 0)?, cx.result(op, 0)?);
    let (from, to) = (cx.vty(op, src)?, cx.vty(op, r)?);
    let x = cx.val(src)?;
    // A 4-bit float is an i8 code: to and from i4 by width.
    let width = |t: &str| t.strip_prefix('i').and_then(|w| w.parse::<u32>().ok());
    if from == to {
        cx.alias(r, x);
    } else if let (Some(a), Some(b)) = (width(&from), width(&to)) {
        let inst = if a > b { "trunc" } else { "zext" };
        cx.define(r, format!("{inst} {from} {x} to {to}"));
    } else {
        cx.define(r, format!("bitcast {from} {x} to {to}"));
    }
    Ok(())
}
