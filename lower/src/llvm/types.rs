//! IR types to LLVM types, element sizes and literal syntax.
//!
//! The 8- and 4-bit float formats (f8E4M3FN, f8E4M3FNUZ, f8E5M2,
//! f8E5M2FNUZ, f8E8M0FNU, f4E2M1FN) have no LLVM type: a value is its
//! code in an `i8` (4-bit codes in the low bits), converted with integer
//! code (`minifloat`). In memory every element below 8 bits takes a byte:
//! `i2`/`i4` are stored sign- or zero-extended to `i8` (see [`storage`]).

use ir::types::{FloatKind, Type};

/// The LLVM type of a scalar (`index` is `i64`; signedness is dropped).
pub(crate) fn scalar(ty: &Type) -> Result<String, String> {
    match ty {
        Type::Index => Ok("i64".into()),
        Type::Int { width, .. } => Ok(format!("i{width}")),
        Type::Float(k) => float(*k).map(str::to_string),
        other => Err(format!("type {other} is not a scalar supported in codegen")),
    }
}

pub(crate) fn float(k: FloatKind) -> Result<&'static str, String> {
    match k {
        FloatKind::F16 => Ok("half"),
        FloatKind::BF16 => Ok("bfloat"),
        FloatKind::F32 => Ok("float"),
        FloatKind::F64 => Ok("double"),
        FloatKind::F8E4M3FN
        | FloatKind::F8E4M3FNUZ
        | FloatKind::F8E5M2
        | FloatKind::F8E5M2FNUZ
        | FloatKind::F8E8M0FNU
        | FloatKind::F4E2M1FN => Ok("i8"),
    }
}

/// The LLVM type of an element in memory: integers narrower than a byte
/// are stored as `i8` (extended by their signedness), the rest as
/// [`scalar`]. `Some(signed)` when loads and stores must convert.
pub(crate) fn storage(ty: &Type) -> Result<(String, Option<bool>), String> {
    match ty {
        Type::Int { width, sign } if (2..8).contains(width) => {
            Ok(("i8".into(), Some(*sign != ir::types::Signedness::Unsigned)))
        }
        _ => Ok((scalar(ty)?, None)),
    }
}

/// The LLVM type of any value the emitter handles: scalars and memref
/// descriptors.
pub(crate) fn llvm_type(ty: &Type) -> Result<String, String> {
    match ty {
        Type::MemRef(mt) => {
            scalar(&mt.elem)?;
            Ok(desc_type(mt.rank()))
        }
        Type::Tensor(_) => Err(format!(
            "tensor type {ty} cannot be lowered to LLVM IR (bufferize first)"
        )),
        Type::Vector(v) => match v.shape.as_slice() {
            [n] => Ok(format!("<{n} x {}>", scalar(&v.elem)?)),
            _ => Err(format!("vector type {ty} must be 1-D in codegen")),
        },
        _ => scalar(ty),
    }
}

/// MLIR's memref descriptor: allocated and aligned pointers, offset, sizes,
/// strides.
pub(crate) fn desc_type(rank: usize) -> String {
    if rank == 0 {
        "{ ptr, ptr, i64 }".into()
    } else {
        format!("{{ ptr, ptr, i64, [{rank} x i64], [{rank} x i64] }}")
    }
}

/// Bytes one element occupies in memory (LLVM's alloc size on x86-64 and
/// AArch64 for the types we emit).
pub(crate) fn elem_size(ty: &Type) -> Result<u64, String> {
    match ty {
        Type::Index => Ok(8),
        Type::Int { width, .. } => match width {
            0 => Err("zero-width integers are unsupported in codegen".into()),
            1..=8 => Ok(1),
            9..=16 => Ok(2),
            17..=32 => Ok(4),
            33..=64 => Ok(8),
            65..=128 => Ok(16),
            w => Err(format!("i{w} elements are unsupported in codegen")),
        },
        Type::Float(k) => {
            float(*k)?;
            Ok(u64::from(k.bits().div_ceil(8)))
        }
        other => Err(format!("element type {other} is unsupported in codegen")),
    }
}

/// An integer literal of width `width`: `true`/`false` for i1, otherwise
/// the value sign-extended from its low `width` bits.
pub(crate) fn int_literal(v: i64, width: u32) -> String {
    match width {
        1 => (if v & 1 != 0 { "true" } else { "false" }).into(),
        w if w < 64 => {
            let shift = 64 - w;
            ((v << shift) >> shift).to_string()
        }
        _ => v.to_string(),
    }
}

/// A float literal LLVM reads back exactly: integral values in decimal,
/// everything else as the bits of the (exactly widened) double; half and
/// bfloat in their own hex forms; the 8- and 4-bit formats as their `i8`
/// code (rounded to nearest even).
pub(crate) fn float_literal(v: f64, k: FloatKind) -> Result<String, String> {
    Ok(match k {
        FloatKind::F64 => double_literal(v),
        FloatKind::F32 => double_literal(f64::from(v as f32)),
        FloatKind::F16 => format!("0xH{:04X}", half::f16::from_f64(v).to_bits()),
        FloatKind::BF16 => format!("0xR{:04X}", half::bf16::from_f64(v).to_bits()),
        other => match other.minifloat() {
            // The code as the `i8` that holds it.
            Some(fm) => (fm.encode(v) as u8 as i8).to_string(),
            None => return Err(format!("no literal for {}", other.name())),
        },
    })
}

fn double_literal(d: f64) -> String {
    if d.is_finite() && d == d.trunc() && d.abs() < 1e15 {
        format!("{d:.1}")
    } else {
        format!("0x{:016X}", d.to_bits())
    }
}

/// `@name`, quoted when it is not a plain LLVM identifier.
pub(crate) fn global_name(sym: &str) -> String {
    let plain = !sym.is_empty()
        && !sym.starts_with(|c: char| c.is_ascii_digit())
        && sym
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '$' | '.' | '_'));
    if plain {
        format!("@{sym}")
    } else {
        format!("@\"{}\"", escape_bytes(sym.as_bytes()))
    }
}

/// Bytes for a `c"..."` string: printable ASCII kept, the rest as `\XX`.
pub(crate) fn escape_bytes(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len());
    for &b in bytes {
        if (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\' {
            s.push(b as char);
        } else {
            s.push_str(&format!("\\{b:02X}"));
        }
    }
    s
}

/// The overload suffix of an intrinsic on `ty`: `f32`, `i64`, `v8f32`.
pub(crate) fn overload_suffix(ty: &Type) -> Result<String, String> {
    let elem = |t: &Type| -> Result<String, String> {
        Ok(match t {
            Type::Float(k) => match k {
                FloatKind::F16 => "f16".into(),
                FloatKind::BF16 => "bf16".into(),
                FloatKind::F32 => "f32".into(),
                FloatKind::F64 => "f64".into(),
                other => return Err(format!("element type {} is unsupported", other.name())),
            },
            Type::Index => "i64".into(),
            Type::Int { width, .. } => format!("i{width}"),
            other => return Err(format!("no intrinsic overload for {other}")),
        })
    };
    match ty {
        Type::Vector(v) => Ok(format!("v{}{}", v.len(), elem(&v.elem)?)),
        t => elem(t),
    }
}

/// `<v, v, ...>` of the vector type `ty` (a scalar literal for scalars).
pub(crate) fn splat_literal(ty: &Type, scalar_lit: &str) -> Result<String, String> {
    match ty {
        Type::Vector(v) => {
            let e = scalar(&v.elem)?;
            let items = vec![format!("{e} {scalar_lit}"); usize::try_from(v.len()).unwrap_or(0)];
            Ok(format!("<{}>", items.join(", ")))
        }
        _ => Ok(scalar_lit.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(int_literal(255, 8), "-1");
        assert_eq!(int_literal(1, 1), "true");
        assert_eq!(int_literal(-5, 64), "-5");
        assert_eq!(float_literal(1.0, FloatKind::F32).unwrap(), "1.0");
        assert_eq!(
            float_literal(0.1, FloatKind::F32).unwrap(),
            "0x3FB99999A0000000"
        );
        assert_eq!(
            float_literal(f64::NAN, FloatKind::F32).unwrap(),
            "0x7FF8000000000000"
        );
        assert_eq!(float_literal(1.0, FloatKind::F16).unwrap(), "0xH3C00");
        assert_eq!(float_literal(1.0, FloatKind::F8E4M3FN).unwrap(), "56");
        assert_eq!(float_literal(-0.0, FloatKind::F8E5M2).unwrap(), "-128");
        assert_eq!(float_literal(6.0, FloatKind::F4E2M1FN).unwrap(), "7");
        assert_eq!(float_literal(f64::NAN, FloatKind::F4E2M1FN).unwrap(), "8");
        assert_eq!(global_name("main"), "@main");
        assert_eq!(global_name("a b"), "@\"a b\"");
    }
}
