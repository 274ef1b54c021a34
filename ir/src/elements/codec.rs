//! Reading and writing one element: little-endian raw bits of every dtype
//! to and from `WideNum`.

use super::{DType, WideNum};
use crate::types::Type;

fn decode_minifloat(bits: u32, exp_bits: u32, man_bits: u32, bias: i32) -> f64 {
    let man_mask = (1u32 << man_bits) - 1;
    let exp_mask = (1u32 << exp_bits) - 1;
    let sign = if (bits >> (exp_bits + man_bits)) & 1 == 1 {
        -1.0
    } else {
        1.0
    };
    let e = ((bits >> man_bits) & exp_mask) as i32;
    let m = f64::from(bits & man_mask);
    let scale = f64::from(1u32 << man_bits);
    if e == 0 {
        sign * (m / scale) * 2f64.powi(1 - bias)
    } else {
        sign * (1.0 + m / scale) * 2f64.powi(e - bias)
    }
}

/// Decodes one stored element (`raw` holds its bits, right-aligned).
pub fn decode(dtype: DType, raw: u64) -> WideNum {
    use DType::*;
    let f = |v: f64| WideNum::from_f64(v);
    match dtype {
        Bool => WideNum::from_u64(u64::from(raw != 0)),
        U2 | U4 | U8 | U16 | U32 | U64 => WideNum::from_u64(raw),
        I2 => WideNum::from_i64(((raw as i64) << 62) >> 62),
        I4 => WideNum::from_i64(((raw as i64) << 60) >> 60),
        I8 => WideNum::from_i64(i64::from(raw as u8 as i8)),
        I16 => WideNum::from_i64(i64::from(raw as u16 as i16)),
        I32 => WideNum::from_i64(i64::from(raw as u32 as i32)),
        I64 => WideNum::from_i64(raw as i64),
        F16 => f(f64::from(half::f16::from_bits(raw as u16))),
        BF16 => f(f64::from(half::bf16::from_bits(raw as u16))),
        F32 => f(f64::from(f32::from_bits(raw as u32))),
        F64 => f(f64::from_bits(raw)),
        F8E4M3FN => {
            let b = raw as u32 & 0xff;
            if b & 0x7f == 0x7f {
                f(f64::NAN)
            } else {
                f(decode_minifloat(b, 4, 3, 7))
            }
        }
        F8E4M3FNUZ => {
            let b = raw as u32 & 0xff;
            if b == 0x80 {
                f(f64::NAN)
            } else {
                f(decode_minifloat(b, 4, 3, 8))
            }
        }
        F8E5M2 => {
            let b = raw as u32 & 0xff;
            let neg = b & 0x80 != 0;
            match b & 0x7f {
                0x7c => f(if neg {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }),
                0x7d..=0x7f => f(f64::NAN),
                _ => f(decode_minifloat(b, 5, 2, 15)),
            }
        }
        F8E5M2FNUZ => {
            let b = raw as u32 & 0xff;
            if b == 0x80 {
                f(f64::NAN)
            } else {
                f(decode_minifloat(b, 5, 2, 16))
            }
        }
        F8E8M0FNU => {
            let b = raw as i32 & 0xff;
            if b == 0xff {
                f(f64::NAN)
            } else {
                f(2f64.powi(b - 127))
            }
        }
        F4E2M1FN => f(decode_minifloat(raw as u32 & 0xf, 2, 1, 1)),
    }
}

/// Reads element `i` of a packed little-endian buffer. `None` past the end.
pub fn read_raw(bytes: &[u8], dtype: DType, i: usize) -> Option<u64> {
    let bits = dtype.bits() as usize;
    if bits < 8 {
        let bit = i.checked_mul(bits)?;
        let byte = *bytes.get(bit / 8)?;
        return Some(u64::from(byte >> (bit % 8)) & ((1u64 << bits) - 1));
    }
    let n = bits / 8;
    let start = i.checked_mul(n)?;
    let chunk = bytes.get(start..start.checked_add(n)?)?;
    let mut buf = [0u8; 8];
    buf[..n].copy_from_slice(chunk);
    Some(u64::from_le_bytes(buf))
}

/// Appends the raw bits of one element to a packed buffer being built.
pub(super) fn push_raw(out: &mut Vec<u8>, dtype: DType, index: usize, raw: u64) {
    let bits = dtype.bits() as usize;
    if bits < 8 {
        let bit = index * bits;
        if bit.is_multiple_of(8) {
            out.push(0);
        }
        if let Some(last) = out.last_mut() {
            *last |= ((raw & ((1 << bits) - 1)) as u8) << (bit % 8);
        }
        return;
    }
    out.extend_from_slice(&raw.to_le_bytes()[..bits / 8]);
}

/// Encodes a widened number in a dtype. Floats narrower than f32 round to
/// nearest even; the 8- and 4-bit float formats are encoded by `constprop`'s
/// cast kernels (ONNX's saturating casts), so here they are refused.
pub fn encode(dtype: DType, v: WideNum) -> Option<u64> {
    use DType::*;
    Some(match dtype {
        Bool => u64::from(v.u64() != 0),
        U2 | U4 | U8 | U16 | U32 | U64 | I2 | I4 | I8 | I16 | I32 | I64 => v.u64(),
        F16 => u64::from(half::f16::from_f64(v.f64()).to_bits()),
        BF16 => u64::from(half::bf16::from_f64(v.f64()).to_bits()),
        F32 => u64::from((v.f64() as f32).to_bits()),
        F64 => v.f64().to_bits(),
        F8E4M3FN | F8E4M3FNUZ | F8E5M2 | F8E5M2FNUZ | F8E8M0FNU | F4E2M1FN => return None,
    })
}

/// Like [`encode`], and for the 8- and 4-bit float formats the code of a
/// value the format holds exactly (or NaN): no rounding, so no cast
/// semantics to choose.
pub fn encode_exact(dtype: DType, v: WideNum) -> Option<u64> {
    if let Some(raw) = encode(dtype, v) {
        return Some(raw);
    }
    let Type::Float(k) = dtype.to_type() else {
        return None;
    };
    let raw = u64::from(k.minifloat()?.encode(v.f64()));
    let back = decode(dtype, raw).f64();
    (back == v.f64() || (back.is_nan() && v.f64().is_nan())).then_some(raw)
}
