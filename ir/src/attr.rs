//! Attributes in MLIR syntax.

use crate::elements::{Elements, NumClass};
use crate::sym::Sym;
use crate::types::{FloatKind, Type};
use std::fmt;
use std::sync::Arc;

#[derive(Clone, Debug)]
pub enum Attribute {
    Unit,
    Bool(bool),
    /// `5 : i64`, `3 : index`.
    Int(i64, Type),
    /// `1.500000e+00 : f32`.
    Float(f64, Type),
    String(Arc<str>),
    Array(Arc<[Attribute]>),
    Dict(Arc<[(Sym, Attribute)]>),
    Type(Type),
    /// `@name` or nested `@a::@b` (kept as `a::@b`).
    SymbolRef(Arc<str>),
    /// `array<i64: 1, 2>` (also i32/i1 element types).
    DenseArray(Type, Arc<[i64]>),
    /// `dense<...> : tensor<...>`, backed by shared element buffers.
    Elements(Elements),
    /// A dialect attribute kept verbatim: `#vector.kind<add>` is
    /// `Opaque("vector.kind<add>")`.
    Opaque(Arc<str>),
}

impl PartialEq for Attribute {
    fn eq(&self, other: &Self) -> bool {
        use Attribute::*;
        match (self, other) {
            (Unit, Unit) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a, t), Int(b, u)) => a == b && t == u,
            (Float(a, t), Float(b, u)) => a.to_bits() == b.to_bits() && t == u,
            (String(a), String(b)) => a == b,
            (Array(a), Array(b)) => a == b,
            (Dict(a), Dict(b)) => a == b,
            (Type(a), Type(b)) => a == b,
            (SymbolRef(a), SymbolRef(b)) => a == b,
            (Opaque(a), Opaque(b)) => a == b,
            (DenseArray(t, a), DenseArray(u, b)) => t == u && a == b,
            (Elements(a), Elements(b)) => a.same_content(b),
            _ => false,
        }
    }
}

impl Attribute {
    pub fn i64(v: i64) -> Attribute {
        Attribute::Int(v, Type::i64())
    }
    pub fn index(v: i64) -> Attribute {
        Attribute::Int(v, Type::Index)
    }
    pub fn string(s: &str) -> Attribute {
        Attribute::String(Arc::from(s))
    }
    pub fn symbol(s: &str) -> Attribute {
        Attribute::SymbolRef(Arc::from(s))
    }
    pub fn i64_array(v: &[i64]) -> Attribute {
        Attribute::DenseArray(Type::i64(), Arc::from(v))
    }
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Attribute::Int(v, _) => Some(*v),
            Attribute::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }
    pub fn as_float(&self) -> Option<f64> {
        match self {
            Attribute::Float(v, _) => Some(*v),
            Attribute::Int(v, _) => Some(*v as f64),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Attribute::String(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_symbol(&self) -> Option<&str> {
        match self {
            Attribute::SymbolRef(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_type(&self) -> Option<&Type> {
        match self {
            Attribute::Type(t) => Some(t),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&[Attribute]> {
        match self {
            Attribute::Array(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_dense_array(&self) -> Option<&[i64]> {
        match self {
            Attribute::DenseArray(_, a) => Some(a),
            _ => None,
        }
    }
    pub fn as_elements(&self) -> Option<&Elements> {
        match self {
            Attribute::Elements(e) => Some(e),
            _ => None,
        }
    }
    /// Integers of an `[1, 2]` array attribute or an `array<i64: ...>`.
    pub fn as_i64_list(&self) -> Option<Vec<i64>> {
        match self {
            Attribute::DenseArray(_, a) => Some(a.to_vec()),
            Attribute::Array(a) => a.iter().map(Attribute::as_int).collect(),
            _ => None,
        }
    }
}

/// Bit pattern of NaN/infinity in the 8- and 4-bit float formats (those
/// without infinities use NaN; f4E2M1FN has neither and saturates).
fn small_float_special(k: FloatKind, v: f64) -> u8 {
    let neg = v.is_sign_negative();
    match k {
        FloatKind::F8E5M2 if v.is_infinite() => {
            if neg {
                0xFC
            } else {
                0x7C
            }
        }
        FloatKind::F8E5M2 | FloatKind::F8E4M3FN => 0x7F,
        FloatKind::F8E4M3FNUZ | FloatKind::F8E5M2FNUZ => 0x80,
        FloatKind::F4E2M1FN => {
            if neg {
                0x0F
            } else {
                0x07
            }
        }
        _ => 0xFF,
    }
}

/// Formats a float so MLIR's lexer reads it back bit-exactly: always with a
/// `.` before the exponent; non-finite values as hex bit patterns.
pub fn format_float(v: f64, ty: &Type) -> String {
    if !v.is_finite() {
        let bits = match ty.float_kind() {
            Some(FloatKind::F64) | None => format!("0x{:016X}", v.to_bits()),
            Some(FloatKind::F32) => format!("0x{:08X}", (v as f32).to_bits()),
            Some(FloatKind::F16) => format!("0x{:04X}", half::f16::from_f64(v).to_bits()),
            Some(FloatKind::BF16) => format!("0x{:04X}", half::bf16::from_f64(v).to_bits()),
            Some(k) => format!("0x{:02X}", small_float_special(k, v)),
        };
        return bits;
    }
    // Shortest text that round-trips in the value's own width.
    let mut s = match ty.float_kind() {
        Some(FloatKind::F32) => format!("{:e}", v as f32),
        _ => format!("{v:e}"),
    };
    if let Some(epos) = s.find('e') {
        if !s[..epos].contains('.') {
            s.insert_str(epos, ".0");
        }
        let (mant, exp) = s.split_at(s.find('e').unwrap_or(s.len()));
        let exp = &exp[1..];
        let (sign, digits) = match exp.strip_prefix('-') {
            Some(d) => ('-', d),
            None => ('+', exp),
        };
        s = format!("{mant}e{sign}{digits:0>2}");
    }
    s
}

/// Whether `elements::encode` can store values of this dtype.
fn encodable(d: crate::elements::DType) -> bool {
    crate::elements::encode(d, crate::elements::WideNum::default()).is_some()
}

fn write_elements(f: &mut fmt::Formatter<'_>, e: &Elements) -> fmt::Result {
    let ty = e.tensor_type();
    let elem = ty.element_type().clone();
    let class = e.dtype().class();
    let write_one = |f: &mut fmt::Formatter<'_>, v: crate::elements::WideNum| -> fmt::Result {
        match class {
            NumClass::Float => f.write_str(&format_float(v.f64(), &elem)),
            NumClass::Signed => write!(f, "{}", v.i64()),
            NumClass::Unsigned if elem.int_width() == Some(1) => {
                f.write_str(if v.u64() != 0 { "true" } else { "false" })
            }
            NumClass::Unsigned => write!(f, "{}", v.u64()),
        }
    };
    f.write_str("dense<")?;
    if e.is_splat() && !e.is_empty() {
        if let Some(v) = e.get(0) {
            write_one(f, v)?;
        }
    } else if (e.len() > 64 || !encodable(e.dtype()))
        && e.dtype().bits() >= 8
        && e.dtype() != crate::elements::DType::Bool
    {
        // Large constants print as one hex blob, which MLIR also accepts;
        // so do the 8-bit floats, whose values are not re-encoded here.
        f.write_str("\"0x")?;
        for b in e.to_contiguous_bytes().iter() {
            write!(f, "{b:02X}")?;
        }
        f.write_str("\"")?;
    } else {
        let shape = e.shape();
        let values = e.to_wide_vec();
        write_nested(f, shape, &values, &write_one)?;
    }
    write!(f, "> : {ty}")
}

fn write_nested(
    f: &mut fmt::Formatter<'_>,
    shape: &[i64],
    values: &[crate::elements::WideNum],
    write_one: &dyn Fn(&mut fmt::Formatter<'_>, crate::elements::WideNum) -> fmt::Result,
) -> fmt::Result {
    let Some((&d, rest)) = shape.split_first() else {
        return match values.first() {
            Some(&v) => write_one(f, v),
            None => Ok(()),
        };
    };
    let inner: usize = rest.iter().map(|&x| x.max(0) as usize).product();
    f.write_str("[")?;
    for i in 0..d.max(0) as usize {
        if i > 0 {
            f.write_str(", ")?;
        }
        let start = i * inner;
        let chunk = values.get(start..start + inner).unwrap_or(&[]);
        write_nested(f, rest, chunk, write_one)?;
    }
    f.write_str("]")
}

/// Writes a string literal with MLIR escapes.
pub fn write_escaped(f: &mut impl fmt::Write, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for b in s.bytes() {
        match b {
            b'"' => f.write_str("\\\"")?,
            b'\\' => f.write_str("\\\\")?,
            b'\n' => f.write_str("\\n")?,
            b'\t' => f.write_str("\\t")?,
            0x20..=0x7e => f.write_char(b as char)?,
            _ => write!(f, "\\{b:02X}")?,
        }
    }
    f.write_char('"')
}

/// Whether `s` can be printed as a bare identifier (`@name`, dict keys).
pub fn is_bare_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '.')
}

/// `@name`, `@"quoted name"`; nested references (`a::@b`) per segment.
pub fn write_symbol(f: &mut impl fmt::Write, s: &str) -> fmt::Result {
    for (i, seg) in s.split("::@").enumerate() {
        f.write_str(if i == 0 { "@" } else { "::@" })?;
        if is_bare_identifier(seg) {
            f.write_str(seg)?;
        } else {
            write_escaped(f, seg)?;
        }
    }
    Ok(())
}

impl fmt::Display for Attribute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Attribute::Unit => f.write_str("unit"),
            Attribute::Bool(b) => write!(f, "{b}"),
            Attribute::Int(v, ty) => {
                if ty.int_width() == Some(1) {
                    // MLIR prints i1 integer attributes as true/false.
                    f.write_str(if *v != 0 { "true" } else { "false" })
                } else if *ty == Type::i64() {
                    write!(f, "{v} : i64")
                } else {
                    write!(f, "{v} : {ty}")
                }
            }
            Attribute::Float(v, ty) => write!(f, "{} : {ty}", format_float(*v, ty)),
            Attribute::String(s) => write_escaped(f, s),
            Attribute::Array(items) => {
                // Like MLIR, array elements elide the default `: i64`.
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    match item {
                        Attribute::Int(v, ty) if *ty == Type::i64() => write!(f, "{v}")?,
                        other => write!(f, "{other}")?,
                    }
                }
                f.write_str("]")
            }
            Attribute::Dict(entries) => write_dict(f, entries),
            Attribute::Type(t) => write!(f, "{t}"),
            Attribute::SymbolRef(s) => write_symbol(f, s),
            Attribute::Opaque(body) => write!(f, "#{body}"),
            Attribute::DenseArray(ty, values) => {
                write!(f, "array<{ty}")?;
                for (i, v) in values.iter().enumerate() {
                    f.write_str(if i == 0 { ": " } else { ", " })?;
                    if ty.int_width() == Some(1) {
                        f.write_str(if *v != 0 { "true" } else { "false" })?;
                    } else {
                        write!(f, "{v}")?;
                    }
                }
                f.write_str(">")
            }
            Attribute::Elements(e) => write_elements(f, e),
        }
    }
}

/// `{a = 1 : i64, b}`; unit attributes print as the bare key.
pub fn write_dict(f: &mut fmt::Formatter<'_>, entries: &[(Sym, Attribute)]) -> fmt::Result {
    f.write_str("{")?;
    for (i, (k, v)) in entries.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        if is_bare_identifier(k.as_str()) {
            f.write_str(k.as_str())?;
        } else {
            write_escaped(f, k.as_str())?;
        }
        if !matches!(v, Attribute::Unit) {
            write!(f, " = {v}")?;
        }
    }
    f.write_str("}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elements::{DType, WideNum};

    #[test]
    fn floats_have_a_dot() {
        assert_eq!(format_float(1.0, &Type::f32()), "1.0e+00");
        assert_eq!(format_float(0.1, &Type::f32()), "1.0e-01");
        assert_eq!(format_float(-2.5e-7, &Type::f64()), "-2.5e-07");
        assert_eq!(format_float(f64::INFINITY, &Type::f32()), "0x7F800000");
    }

    #[test]
    fn display() {
        assert_eq!(Attribute::i64(3).to_string(), "3 : i64");
        assert_eq!(Attribute::Int(1, Type::i1()).to_string(), "true");
        assert_eq!(
            Attribute::i64_array(&[1, 2]).to_string(),
            "array<i64: 1, 2>"
        );
        assert_eq!(Attribute::symbol("main").to_string(), "@main");
        let e = Elements::from_wide(DType::I32, vec![2, 2], &[1, 2, 3, 4].map(WideNum::from_i64))
            .unwrap();
        assert_eq!(
            Attribute::Elements(e).to_string(),
            "dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>"
        );
    }
}
