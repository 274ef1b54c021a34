//! The 8- and 4-bit float formats in integer code: a value is its code in
//! an `i8` (see `types`). [`widen`] decodes a code to f32 exactly;
//! [`narrow`] encodes an f32 or f64 with IEEE semantics (what
//! `arith.truncf` means): round to nearest even, a result beyond the
//! largest finite value becomes infinity (E5M2) or NaN (the formats
//! without infinities; f4E2M1FN, which has neither, saturates), NaN stays
//! NaN and the FNUZ formats have no negative zero. Saturating casts clamp
//! before they narrow (bufferize's Cast).

use super::types::float_literal;
use super::FnCx;
use ir::types::{FloatKind, MiniFloat};

/// f32 (`float`) from the code `x` (`i8`) of format `fm`; exact.
pub(crate) fn widen(cx: &mut FnCx<'_>, x: &str, fm: &MiniFloat) -> String {
    let c = cx.assign(format!("zext i8 {x} to i32"));
    let mag_mask = (1u32 << fm.bits) - 1 - fm.sign;
    let mag = cx.assign(format!("and i32 {c}, {mag_mask}"));
    let e = cx.assign(format!("lshr i32 {mag}, {}", fm.man));
    let man = cx.assign(format!("and i32 {mag}, {}", (1u32 << fm.man) - 1));
    // Normal: rebias the exponent, move the mantissa to the top.
    let en = cx.assign(format!("add i32 {e}, {}", 127 - fm.bias));
    let hi = cx.assign(format!("shl i32 {en}, 23"));
    let lo = cx.assign(format!("shl i32 {man}, {}", 23 - fm.man));
    let normal = cx.assign(format!("or i32 {hi}, {lo}"));
    // Exponent 0: man · 2^(1 - bias - man bits), exact in f32; without a
    // mantissa (f8E8M0FNU) code 0 is 2^-bias.
    let sub = if fm.man == 0 {
        (2f64.powi(-(fm.bias as i32)) as f32).to_bits().to_string()
    } else {
        let mf = cx.assign(format!("uitofp i32 {man} to float"));
        let scale = 2f64.powi((1 - fm.bias - i64::from(fm.man)) as i32);
        let scale = float_literal(scale, FloatKind::F32).unwrap_or_default();
        let sf = cx.assign(format!("fmul float {mf}, {scale}"));
        cx.assign(format!("bitcast float {sf} to i32"))
    };
    let is_sub = cx.assign(format!("icmp eq i32 {e}, 0"));
    let mut b = cx.assign(format!("select i1 {is_sub}, i32 {sub}, i32 {normal}"));
    // Infinity (E5M2): an overflow code that is neither NaN nor finite.
    let has_inf = Some(fm.overflow) != fm.nan && fm.overflow != fm.max;
    if has_inf {
        let inf = cx.assign(format!("icmp eq i32 {mag}, {}", fm.overflow));
        b = cx.assign(format!("select i1 {inf}, i32 2139095040, i32 {b}"));
    }
    let is_nan = fm.nan.map(|nan| match (has_inf, fm.signed_specials) {
        (true, _) => format!("icmp ugt i32 {mag}, {}", fm.overflow),
        (false, true) => format!("icmp eq i32 {mag}, {nan}"),
        (false, false) => format!("icmp eq i32 {c}, {nan}"),
    });
    if let Some(test) = is_nan {
        let nan = cx.assign(test);
        b = cx.assign(format!("select i1 {nan}, i32 2143289344, i32 {b}"));
    }
    if fm.sign != 0 {
        let s = cx.assign(format!("and i32 {c}, {}", fm.sign));
        let s = cx.assign(format!("shl i32 {s}, {}", 32 - fm.bits));
        b = cx.assign(format!("or i32 {b}, {s}"));
    }
    cx.assign(format!("bitcast i32 {b} to float"))
}

/// The source float's layout: LLVM type, integer type, width, mantissa
/// bits, bias.
fn source(ty: &str) -> (&'static str, &'static str, u32, u32, i64) {
    if ty == "double" {
        ("double", "i64", 64, 52, 1023)
    } else {
        ("float", "i32", 32, 23, 127)
    }
}

/// The code (`i8`) of format `fm` nearest to `x`, an f32 (`float`) or
/// f64 (`double`) as `ty` says; see the module doc. `MiniFloat::encode`
/// is the same computation in Rust.
pub(crate) fn narrow(cx: &mut FnCx<'_>, x: &str, ty: &str, fm: &MiniFloat) -> String {
    let (fty, it, w, ms, bs) = source(ty);
    let m = fm.man;
    let bits = cx.assign(format!("bitcast {fty} {x} to {it}"));
    let abs = cx.assign(format!("and {it} {bits}, {}", (1u64 << (w - 1)) - 1));
    let es = cx.assign(format!("lshr {it} {abs}, {ms}"));
    let man = cx.assign(format!("and {it} {abs}, {}", (1u64 << ms) - 1));
    // Significand with its hidden bit; subnormal sources count as exponent 1.
    let normal = cx.assign(format!("icmp ne {it} {es}, 0"));
    let hidden = cx.assign(format!("select i1 {normal}, {it} {}, {it} 0", 1u64 << ms));
    let sig = cx.assign(format!("or {it} {man}, {hidden}"));
    let ee = umax(cx, it, &es, "1");
    // The target's biased exponent (may be < 1: a subnormal result).
    let ce = cx.assign(format!("add {it} {ee}, {}", fm.bias - bs));
    // Shift right by the mantissa difference plus how far below the
    // normal range (capped: further out everything rounds to zero).
    let below = cx.assign(format!("sub {it} 1, {ce}"));
    let below = smax(cx, it, &below, "0");
    let below = smin(cx, it, &below, &(m + 2).to_string());
    let s = cx.assign(format!("add {it} {below}, {}", ms - m));
    let r = round_shift(cx, it, &sig, &s);
    let base = smax(cx, it, &ce, "1");
    let base = cx.assign(format!("sub {it} {base}, 1"));
    let base = cx.assign(format!("shl {it} {base}, {m}"));
    let code = cx.assign(format!("add {it} {r}, {base}"));
    let over = cx.assign(format!("icmp ugt {it} {code}, {}", fm.max));
    let mag = cx.assign(format!(
        "select i1 {over}, {it} {}, {it} {code}",
        fm.overflow
    ));
    let mag = cx.assign(format!("trunc {it} {mag} to i8"));
    let isnan = cx.assign(format!("fcmp uno {fty} {x}, 0.0"));
    let nan = fm.nan.unwrap_or(0);
    let mag = cx.assign(format!("select i1 {isnan}, i8 {}, i8 {mag}", nan as i8));
    if fm.sign == 0 {
        return mag;
    }
    // The sign goes on every code but unsigned specials and, without a
    // negative zero, on zero; a NaN-less format's NaN is -0.
    let neg = cx.assign(format!("icmp slt {it} {bits}, 0"));
    let mut takes = neg;
    if !fm.signed_specials {
        let special = cx.assign(format!("icmp eq i8 {mag}, {}", fm.overflow as i8));
        let keep = cx.assign(format!("xor i1 {special}, true"));
        takes = cx.assign(format!("and i1 {takes}, {keep}"));
    }
    if !fm.neg_zero {
        let nz = cx.assign(format!("icmp ne i8 {mag}, 0"));
        takes = cx.assign(format!("and i1 {takes}, {nz}"));
    }
    if fm.nan.is_none() {
        takes = cx.assign(format!("or i1 {takes}, {isnan}"));
    }
    let signed = cx.assign(format!("or i8 {mag}, {}", fm.sign as u8 as i8));
    cx.assign(format!("select i1 {takes}, i8 {signed}, i8 {mag}"))
}

/// `v >> s` rounded to nearest, ties to even (1 ≤ s < width).
fn round_shift(cx: &mut FnCx<'_>, it: &str, v: &str, s: &str) -> String {
    let s1 = cx.assign(format!("sub {it} {s}, 1"));
    let half = cx.assign(format!("shl {it} 1, {s1}"));
    let half = cx.assign(format!("sub {it} {half}, 1"));
    let q = cx.assign(format!("lshr {it} {v}, {s}"));
    let odd = cx.assign(format!("and {it} {q}, 1"));
    let t = cx.assign(format!("add {it} {v}, {half}"));
    let t = cx.assign(format!("add {it} {t}, {odd}"));
    cx.assign(format!("lshr {it} {t}, {s}"))
}

fn int_call(cx: &mut FnCx<'_>, f: &str, it: &str, a: &str, b: &str) -> String {
    let name = format!("llvm.{f}.{it}");
    cx.mcx
        .declare(&name, &format!("declare {it} @{name}({it}, {it})"));
    cx.assign(format!("call {it} @{name}({it} {a}, {it} {b})"))
}

fn umax(cx: &mut FnCx<'_>, it: &str, a: &str, b: &str) -> String {
    int_call(cx, "umax", it, a, b)
}

fn smax(cx: &mut FnCx<'_>, it: &str, a: &str, b: &str) -> String {
    int_call(cx, "smax", it, a, b)
}

fn smin(cx: &mut FnCx<'_>, it: &str, a: &str, b: &str) -> String {
    int_call(cx, "smin", it, a, b)
}
