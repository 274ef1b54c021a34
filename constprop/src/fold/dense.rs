//! Dense row-major tensors of `WideNum` for the kernels that need random
//! access (reductions, gathers, convolutions), and packing results into
//! `Elements` in their dtype (8- and 4-bit floats round to nearest even).

use ir::dialects::op_error;
use ir::elements::{decode, encode, DType, Elements, NumClass, WideNum};
use ir::{Diagnostic, Module, OpId};

/// A dense tensor: `data` holds the values of `dtype`'s class.
#[derive(Clone, Debug)]
pub struct T {
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub data: Vec<WideNum>,
}

pub fn row_strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1].max(1);
    }
    s
}

/// Row-major multi-index of `flat`.
pub fn unravel(mut flat: usize, shape: &[usize], out: &mut [usize]) {
    for (o, &d) in out.iter_mut().zip(shape).rev() {
        let d = d.max(1);
        *o = flat % d;
        flat /= d;
    }
}

impl T {
    pub fn of(e: &Elements) -> T {
        T {
            dtype: e.dtype(),
            shape: e.shape().iter().map(|&d| d.max(0) as usize).collect(),
            data: e.to_wide_vec(),
        }
    }
    pub fn new(dtype: DType, shape: Vec<usize>, data: Vec<WideNum>) -> T {
        T { dtype, shape, data }
    }
    pub fn class(&self) -> NumClass {
        self.dtype.class()
    }
    pub fn rank(&self) -> usize {
        self.shape.len()
    }
    pub fn len(&self) -> usize {
        self.data.len()
    }
    pub fn f(&self, i: usize) -> f64 {
        self.data[i].to_f64(self.class())
    }
    pub fn floats(&self) -> Vec<f64> {
        let c = self.class();
        self.data.iter().map(|v| v.to_f64(c)).collect()
    }
    pub fn ints(&self) -> Vec<i64> {
        let c = self.class();
        self.data
            .iter()
            .map(|v| match c {
                NumClass::Float => v.f64() as i64,
                _ => v.i64(),
            })
            .collect()
    }
    /// A float tensor of the same shape and dtype from f64 values.
    pub fn with_floats(&self, dtype: DType, v: Vec<f64>) -> T {
        T::new(dtype, self.shape.clone(), from_f64s(dtype, v))
    }
}

/// An op's operands as dense tensors; `None` for omitted optional ones.
pub struct Dense(Vec<Option<T>>);

impl Dense {
    pub fn of(inputs: &[Option<Elements>]) -> Dense {
        Dense(inputs.iter().map(|i| i.as_ref().map(T::of)).collect())
    }
    /// Operand `i` when present.
    pub fn get(&self, i: usize) -> Option<&T> {
        self.0.get(i).and_then(Option::as_ref)
    }
    /// The operands present, in order.
    pub fn present(&self) -> impl Iterator<Item = &T> {
        self.0.iter().flatten()
    }
}

/// f64 values converted to `dtype`'s class.
pub fn from_f64s(dtype: DType, v: Vec<f64>) -> Vec<WideNum> {
    let c = dtype.class();
    v.into_iter().map(|x| wide_of(c, x)).collect()
}

pub fn wide_of(c: NumClass, x: f64) -> WideNum {
    match c {
        NumClass::Float => WideNum::from_f64(x),
        NumClass::Signed => WideNum::from_i64(x as i64),
        NumClass::Unsigned => WideNum::from_u64(x as u64),
    }
}

/// Converts a number between classes (float → int truncates, like C).
pub fn convert(v: WideNum, from: NumClass, to: NumClass) -> WideNum {
    match (from, to) {
        (a, b) if a == b => v,
        (_, NumClass::Float) => WideNum::from_f64(v.to_f64(from)),
        (NumClass::Float, NumClass::Signed) => WideNum::from_i64(v.f64() as i64),
        (NumClass::Float, NumClass::Unsigned) => {
            let f = v.f64();
            if f < 0.0 {
                WideNum::from_i64(f as i64)
            } else {
                WideNum::from_u64(f as u64)
            }
        }
        _ => v,
    }
}

fn is_small_float(d: DType) -> bool {
    matches!(
        d,
        DType::F8E4M3FN
            | DType::F8E4M3FNUZ
            | DType::F8E5M2
            | DType::F8E5M2FNUZ
            | DType::F8E8M0FNU
            | DType::F4E2M1FN
    )
}

/// Encodes `v` in an 8- or 4-bit float format, rounding to nearest even;
/// out-of-range values saturate to the largest finite value when
/// `saturate`, else become infinity (E5M2) or NaN.
pub fn encode_small_float(d: DType, v: f64, saturate: bool) -> u64 {
    let bits = d.bits();
    let codes = 1u64 << bits;
    let half = codes / 2;
    let nan = match d {
        DType::F8E4M3FN => 0x7f,
        DType::F8E5M2 => 0x7f,
        DType::F8E4M3FNUZ | DType::F8E5M2FNUZ => 0x80,
        DType::F8E8M0FNU => 0xff,
        _ => 0x7, // F4E2M1FN has no NaN: never produced below
    };
    let unsigned = d == DType::F8E8M0FNU;
    let has_neg_zero = matches!(d, DType::F8E4M3FN | DType::F8E5M2 | DType::F4E2M1FN);
    if v.is_nan() {
        return if d == DType::F4E2M1FN { 0x8 } else { nan };
    }
    let neg = v.is_sign_negative() && !unsigned;
    let mag = v.abs();
    let top = if unsigned { codes } else { half };
    // Finite magnitudes by code, ascending.
    let finite: Vec<(u64, f64)> = (0..top)
        .map(|c| (c, decode(d, c).f64()))
        .filter(|(_, x)| x.is_finite())
        .collect();
    let Some(&(max_code, max)) = finite.last() else {
        return 0;
    };
    let sign = |c: u64| -> u64 {
        if neg && (c != 0 || has_neg_zero) {
            c | half
        } else {
            c
        }
    };
    let overflow = || -> u64 {
        if saturate || d == DType::F4E2M1FN {
            sign(max_code)
        } else if d == DType::F8E5M2 {
            sign(0x7c)
        } else {
            nan
        }
    };
    if mag.is_infinite() {
        if d == DType::F8E5M2 && !saturate {
            return sign(0x7c);
        }
        return overflow();
    }
    if mag > max {
        let prev = finite
            .get(finite.len().wrapping_sub(2))
            .map_or(0.0, |p| p.1);
        let next = max + (max - prev);
        let mid = (max + next) / 2.0;
        return if mag < mid || (mag == mid && max_code % 2 == 0) {
            sign(max_code)
        } else {
            overflow()
        };
    }
    // Nearest finite value, ties to the even code.
    let idx = finite.partition_point(|&(_, x)| x < mag);
    let Some(&(hi_c, hi)) = finite.get(idx) else {
        return sign(max_code);
    };
    if hi == mag || idx == 0 {
        return sign(hi_c);
    }
    let (lo_c, lo) = finite[idx - 1];
    let c = if mag - lo < hi - mag {
        lo_c
    } else if mag - lo > hi - mag {
        hi_c
    } else if lo_c % 2 == 0 {
        lo_c
    } else {
        hi_c
    };
    sign(c)
}

/// Packs values of `dtype`'s class into a fresh contiguous buffer.
pub fn pack(
    dtype: DType,
    shape: &[usize],
    vals: &[WideNum],
    saturate: bool,
) -> Result<Elements, String> {
    let bits = dtype.bits() as usize;
    let n = vals.len();
    let mut out = vec![0u8; (n * bits).div_ceil(8)];
    let small = is_small_float(dtype);
    for (i, &v) in vals.iter().enumerate() {
        let raw = if small {
            encode_small_float(dtype, v.f64(), saturate)
        } else {
            encode(dtype, v).ok_or_else(|| format!("cannot encode {dtype:?}"))?
        };
        if bits < 8 {
            let bit = i * bits;
            out[bit / 8] |= ((raw & ((1 << bits) - 1)) as u8) << (bit % 8);
        } else {
            let w = bits / 8;
            out[i * w..(i + 1) * w].copy_from_slice(&raw.to_le_bytes()[..w]);
        }
    }
    let shape = shape.iter().map(|&d| d as i64).collect();
    Elements::from_bytes(dtype, shape, ir::elements::pool::heap(out)).map_err(|e| e.to_string())
}

impl T {
    pub fn into_elements(self, m: &Module, op: OpId) -> Result<Elements, Diagnostic> {
        pack(self.dtype, &self.shape, &self.data, true).map_err(|e| op_error(m, op, e))
    }
}

/// A fold's dense results packed in their dtypes.
pub fn packed(m: &Module, op: OpId, ts: Vec<T>) -> Result<Option<Vec<Elements>>, Diagnostic> {
    let outs = ts.into_iter().map(|t| t.into_elements(m, op));
    Ok(Some(outs.collect::<Result<Vec<_>, Diagnostic>>()?))
}
