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
use ir::types::FloatKind;

/// The layout and special values of a format (codes of the magnitude).
struct Format {
    bits: u32,
    man: u32,
    bias: i64,
    /// The sign bit (0 for the unsigned f8E8M0FNU).
    sign: u32,
    /// Largest finite magnitude code.
    max: u32,
    /// The code for overflow, before the sign.
    overflow: u32,
    /// The NaN code (before the sign); `None`: NaN becomes -0 (f4E2M1FN).
    nan: Option<u32>,
    /// Whether a NaN or overflow code takes the sign.
    signed_specials: bool,
    /// Whether negative zero exists (not in the FNUZ formats).
    neg_zero: bool,
}

fn format(k: FloatKind) -> Format {
    let f = |bits, man, bias, max, overflow, nan, signed_specials, neg_zero| Format {
        bits,
        man,
        bias,
        sign: 1 << (bits - 1),
        max,
        overflow,
        nan,
        signed_specials,
        neg_zero,
    };
    match k {
        FloatKind::F8E4M3FNUZ => f(8, 3, 8, 0x7f, 0x80, Some(0x80), false, false),
        FloatKind::F8E5M2 => f(8, 2, 15, 0x7b, 0x7c, Some(0x7e), true, true),
        FloatKind::F8E5M2FNUZ => f(8, 2, 16, 0x7f, 0x80, Some(0x80), false, false),
        FloatKind::F8E8M0FNU => Format {
            sign: 0,
            ..f(8, 0, 127, 0xfe, 0xff, Some(0xff), false, false)
        },
        FloatKind::F4E2M1FN => f(4, 1, 1, 0x7, 0x7, None, true, true),
        // F8E4M3FN (the wider kinds never get here).
        _ => f(8, 3, 7, 0x7e, 0x7f, Some(0x7f), true, true),
    }
}

/// f32 (`float`) from the code `x` (`i8`) of format `k`; exact.
pub(crate) fn widen(cx: &mut FnCx<'_>, x: &str, k: FloatKind) -> String {
    let fm = format(k);
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
    // Subnormal: man · 2^(1 - bias - man bits), exact in f32.
    let sub = if k == FloatKind::F8E8M0FNU {
        "4194304".to_string() // code 0 is 2^-127, an f32 subnormal
    } else {
        let mf = cx.assign(format!("uitofp i32 {man} to float"));
        let scale = float_literal(
            2f64.powi((1 - fm.bias - i64::from(fm.man)) as i32),
            FloatKind::F32,
        )
        .unwrap_or_default();
        let sf = cx.assign(format!("fmul float {mf}, {scale}"));
        cx.assign(format!("bitcast float {sf} to i32"))
    };
    let is_sub = cx.assign(format!("icmp eq i32 {e}, 0"));
    let mut b = cx.assign(format!("select i1 {is_sub}, i32 {sub}, i32 {normal}"));
    if k == FloatKind::F8E5M2 {
        let inf = cx.assign(format!("icmp eq i32 {mag}, 124"));
        b = cx.assign(format!("select i1 {inf}, i32 2139095040, i32 {b}"));
    }
    let is_nan = match k {
        FloatKind::F8E4M3FN => Some(format!("icmp eq i32 {mag}, 127")),
        FloatKind::F8E5M2 => Some(format!("icmp ugt i32 {mag}, 124")),
        FloatKind::F8E4M3FNUZ | FloatKind::F8E5M2FNUZ => Some(format!("icmp eq i32 {c}, 128")),
        FloatKind::F8E8M0FNU => Some(format!("icmp eq i32 {c}, 255")),
        _ => None,
    };
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

/// The code (`i8`) of format `k` nearest to `x`, an f32 (`float`) or f64
/// (`double`) as `ty` says; see the module doc.
pub(crate) fn narrow(cx: &mut FnCx<'_>, x: &str, ty: &str, k: FloatKind) -> String {
    let fm = format(k);
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
