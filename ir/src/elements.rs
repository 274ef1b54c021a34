//! Tensor constants as strided views over `Arc`-shared byte buffers.
//!
//! A buffer is a `bytes::Bytes`: a slice of the mapped model file, a heap
//! vector, or a small inline value; cloning a view never copies the data.
//! Values are read as little-endian (ONNX `raw_data` is unaligned) and
//! widened to `WideNum`, so arithmetic only knows three number classes.

use crate::types::{FloatKind, Signedness, Type};
use bytes::Bytes;
use std::sync::Arc;

/// Element types of tensor constants: every numeric ONNX dtype.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum DType {
    Bool,
    I2,
    U2,
    I4,
    U4,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F16,
    BF16,
    F32,
    F64,
    F8E4M3FN,
    F8E4M3FNUZ,
    F8E5M2,
    F8E5M2FNUZ,
    F8E8M0FNU,
    F4E2M1FN,
}

/// How a dtype computes: as f64, i64 or u64.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum NumClass {
    Float,
    Signed,
    Unsigned,
}

impl DType {
    pub fn bits(self) -> u32 {
        use DType::*;
        match self {
            Bool | I8 | U8 => 8,
            I2 | U2 => 2,
            I4 | U4 | F4E2M1FN => 4,
            I16 | U16 | F16 | BF16 => 16,
            I32 | U32 | F32 => 32,
            I64 | U64 | F64 => 64,
            F8E4M3FN | F8E4M3FNUZ | F8E5M2 | F8E5M2FNUZ | F8E8M0FNU => 8,
        }
    }
    pub fn class(self) -> NumClass {
        use DType::*;
        match self {
            Bool | U2 | U4 | U8 | U16 | U32 | U64 => NumClass::Unsigned,
            I2 | I4 | I8 | I16 | I32 | I64 => NumClass::Signed,
            _ => NumClass::Float,
        }
    }
    /// Bytes needed for `n` elements, sub-byte types packed low nibble first.
    pub fn storage_bytes(self, n: usize) -> Option<usize> {
        let bits = (n as u128) * u128::from(self.bits());
        usize::try_from(bits.div_ceil(8)).ok()
    }
    /// The IR element type (ONNX conventions: signed ints are signless).
    pub fn to_type(self) -> Type {
        use DType::*;
        match self {
            Bool => Type::i(1),
            I2 => Type::i(2),
            U2 => Type::ui(2),
            I4 => Type::i(4),
            U4 => Type::ui(4),
            I8 => Type::i(8),
            U8 => Type::ui(8),
            I16 => Type::i(16),
            U16 => Type::ui(16),
            I32 => Type::i(32),
            U32 => Type::ui(32),
            I64 => Type::i(64),
            U64 => Type::ui(64),
            F16 => Type::Float(FloatKind::F16),
            BF16 => Type::Float(FloatKind::BF16),
            F32 => Type::Float(FloatKind::F32),
            F64 => Type::Float(FloatKind::F64),
            F8E4M3FN => Type::Float(FloatKind::F8E4M3FN),
            F8E4M3FNUZ => Type::Float(FloatKind::F8E4M3FNUZ),
            F8E5M2 => Type::Float(FloatKind::F8E5M2),
            F8E5M2FNUZ => Type::Float(FloatKind::F8E5M2FNUZ),
            F8E8M0FNU => Type::Float(FloatKind::F8E8M0FNU),
            F4E2M1FN => Type::Float(FloatKind::F4E2M1FN),
        }
    }
    pub fn from_type(t: &Type) -> Option<DType> {
        use DType::*;
        Some(match t {
            Type::Int { width, sign } => {
                let unsigned = *sign == Signedness::Unsigned;
                match (width, unsigned) {
                    (1, _) => Bool,
                    (2, false) => I2,
                    (2, true) => U2,
                    (4, false) => I4,
                    (4, true) => U4,
                    (8, false) => I8,
                    (8, true) => U8,
                    (16, false) => I16,
                    (16, true) => U16,
                    (32, false) => I32,
                    (32, true) => U32,
                    (64, false) => I64,
                    (64, true) => U64,
                    _ => return None,
                }
            }
            Type::Index => I64,
            Type::Float(k) => match k {
                FloatKind::F16 => F16,
                FloatKind::BF16 => BF16,
                FloatKind::F32 => F32,
                FloatKind::F64 => F64,
                FloatKind::F8E4M3FN => F8E4M3FN,
                FloatKind::F8E4M3FNUZ => F8E4M3FNUZ,
                FloatKind::F8E5M2 => F8E5M2,
                FloatKind::F8E5M2FNUZ => F8E5M2FNUZ,
                FloatKind::F8E8M0FNU => F8E8M0FNU,
                FloatKind::F4E2M1FN => F4E2M1FN,
            },
            _ => return None,
        })
    }
}

/// A number widened to 64 bits; its class says how to read the bits.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct WideNum(u64);

impl WideNum {
    pub fn from_f64(v: f64) -> Self {
        WideNum(v.to_bits())
    }
    pub fn from_i64(v: i64) -> Self {
        WideNum(v as u64)
    }
    pub fn from_u64(v: u64) -> Self {
        WideNum(v)
    }
    pub fn f64(self) -> f64 {
        f64::from_bits(self.0)
    }
    pub fn i64(self) -> i64 {
        self.0 as i64
    }
    pub fn u64(self) -> u64 {
        self.0
    }
    /// The value as f64 whatever its class.
    pub fn to_f64(self, class: NumClass) -> f64 {
        match class {
            NumClass::Float => self.f64(),
            NumClass::Signed => self.i64() as f64,
            NumClass::Unsigned => self.u64() as f64,
        }
    }
}

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
fn push_raw(out: &mut Vec<u8>, dtype: DType, index: usize, raw: u64) {
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
/// cast kernels, so here they are refused.
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

#[derive(Debug)]
struct ElementsData {
    dtype: DType,
    shape: Vec<i64>,
    /// Element strides into `bytes`, per dimension; 0 broadcasts.
    strides: Vec<i64>,
    offset: usize,
    bytes: Bytes,
}

/// A tensor constant: shape, dtype and a strided view over shared bytes.
#[derive(Clone, Debug)]
pub struct Elements(Arc<ElementsData>);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ElementsError {
    #[error("shape {shape:?} has a negative or overflowing dimension")]
    BadShape { shape: Vec<i64> },
    #[error("{dtype:?} data of {have} bytes is too small for {want} elements")]
    TooSmall {
        dtype: DType,
        have: usize,
        want: usize,
    },
    #[error("value cannot be encoded as {0:?} here")]
    Unencodable(DType),
}

fn checked_count(shape: &[i64]) -> Result<usize, ElementsError> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| {
            usize::try_from(d).ok().and_then(|d| acc.checked_mul(d))
        })
        .ok_or_else(|| ElementsError::BadShape {
            shape: shape.to_vec(),
        })
}

fn row_major(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![0; shape.len()];
    let mut acc = 1i64;
    for (i, &d) in shape.iter().enumerate().rev() {
        strides[i] = acc;
        acc = acc.saturating_mul(d.max(1));
    }
    strides
}

impl Elements {
    /// A contiguous row-major view of packed little-endian `bytes`.
    pub fn from_bytes(dtype: DType, shape: Vec<i64>, bytes: Bytes) -> Result<Self, ElementsError> {
        let n = checked_count(&shape)?;
        let want = dtype.storage_bytes(n).ok_or(ElementsError::BadShape {
            shape: shape.clone(),
        })?;
        if bytes.len() < want {
            return Err(ElementsError::TooSmall {
                dtype,
                have: bytes.len(),
                want: n,
            });
        }
        let strides = row_major(&shape);
        Ok(Elements(Arc::new(ElementsData {
            dtype,
            shape,
            strides,
            offset: 0,
            bytes,
        })))
    }

    /// One value broadcast to `shape`: all strides zero, one element stored.
    pub fn splat(dtype: DType, shape: Vec<i64>, v: WideNum) -> Result<Self, ElementsError> {
        checked_count(&shape)?;
        let raw = encode(dtype, v).ok_or(ElementsError::Unencodable(dtype))?;
        let mut out = Vec::with_capacity(8);
        push_raw(&mut out, dtype, 0, raw);
        let strides = vec![0; shape.len()];
        Ok(Elements(Arc::new(ElementsData {
            dtype,
            shape,
            strides,
            offset: 0,
            bytes: Bytes::from(out),
        })))
    }

    /// Packs row-major values into a fresh buffer of `dtype`.
    pub fn from_wide(
        dtype: DType,
        shape: Vec<i64>,
        values: &[WideNum],
    ) -> Result<Self, ElementsError> {
        let n = checked_count(&shape)?;
        if values.len() != n {
            return Err(ElementsError::TooSmall {
                dtype,
                have: values.len(),
                want: n,
            });
        }
        let mut out = Vec::with_capacity(dtype.storage_bytes(n).unwrap_or(0));
        for (i, &v) in values.iter().enumerate() {
            let raw = encode(dtype, v).ok_or(ElementsError::Unencodable(dtype))?;
            push_raw(&mut out, dtype, i, raw);
        }
        Self::from_bytes(dtype, shape, Bytes::from(out))
    }

    pub fn dtype(&self) -> DType {
        self.0.dtype
    }
    pub fn shape(&self) -> &[i64] {
        &self.0.shape
    }
    pub fn strides(&self) -> &[i64] {
        &self.0.strides
    }
    pub fn len(&self) -> usize {
        checked_count(&self.0.shape).unwrap_or(0)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The tensor type `tensor<shape x dtype>`.
    pub fn tensor_type(&self) -> Type {
        Type::tensor(self.0.shape.clone(), self.0.dtype.to_type())
    }
    pub fn is_splat(&self) -> bool {
        self.0.strides.iter().all(|&s| s == 0)
    }
    /// The backing bytes when the view is the whole buffer in row-major order.
    pub fn contiguous_bytes(&self) -> Option<&[u8]> {
        let n = self.len();
        if self.0.offset == 0 && self.0.strides == row_major(&self.0.shape) {
            self.0.bytes.get(..self.0.dtype.storage_bytes(n)?)
        } else {
            None
        }
    }
    /// The shared buffer under the view (for zero-copy checks and accounting).
    pub fn buffer(&self) -> &Bytes {
        &self.0.bytes
    }
    /// Buffer position of the element at row-major position `flat`.
    fn position(&self, mut flat: usize) -> usize {
        let mut pos = self.0.offset as i64;
        for (&d, &s) in self.0.shape.iter().zip(&self.0.strides).rev() {
            let d = d.max(1) as usize;
            pos += (flat % d) as i64 * s;
            flat /= d;
        }
        pos.max(0) as usize
    }
    /// Element at row-major position `flat`; `None` out of range.
    pub fn get(&self, flat: usize) -> Option<WideNum> {
        if flat >= self.len() {
            return None;
        }
        let raw = read_raw(&self.0.bytes, self.0.dtype, self.position(flat))?;
        Some(decode(self.0.dtype, raw))
    }
    /// All elements in row-major order.
    pub fn iter(&self) -> impl Iterator<Item = WideNum> + '_ {
        (0..self.len()).filter_map(move |i| self.get(i))
    }
    pub fn to_wide_vec(&self) -> Vec<WideNum> {
        self.iter().collect()
    }
    /// Packed row-major bytes in the view's dtype (copies only when strided).
    pub fn to_contiguous_bytes(&self) -> Bytes {
        if let Some(b) = self.contiguous_bytes() {
            return self.0.bytes.slice_ref(b);
        }
        let mut out = Vec::with_capacity(self.0.dtype.storage_bytes(self.len()).unwrap_or(0));
        for i in 0..self.len() {
            let raw = read_raw(&self.0.bytes, self.0.dtype, self.position(i)).unwrap_or(0);
            push_raw(&mut out, self.0.dtype, i, raw);
        }
        Bytes::from(out)
    }
    fn with_view(&self, shape: Vec<i64>, strides: Vec<i64>, offset: usize) -> Elements {
        Elements(Arc::new(ElementsData {
            dtype: self.0.dtype,
            shape,
            strides,
            offset,
            bytes: self.0.bytes.clone(),
        }))
    }

    /// Permutes the dims (ONNX Transpose) without copying.
    pub fn transposed(&self, perm: &[usize]) -> Option<Elements> {
        let rank = self.0.shape.len();
        if perm.len() != rank {
            return None;
        }
        let mut seen = vec![false; rank];
        let mut shape = Vec::with_capacity(rank);
        let mut strides = Vec::with_capacity(rank);
        for &p in perm {
            if p >= rank || std::mem::replace(&mut seen[p], true) {
                return None;
            }
            shape.push(self.0.shape[p]);
            strides.push(self.0.strides[p]);
        }
        Some(self.with_view(shape, strides, self.0.offset))
    }

    /// The same elements under a new shape of equal size: a view when the
    /// data is contiguous or a splat, otherwise a packed copy.
    pub fn reshaped(&self, shape: Vec<i64>) -> Result<Elements, ElementsError> {
        if checked_count(&shape)? != self.len() {
            return Err(ElementsError::BadShape { shape });
        }
        if self.is_splat() {
            let strides = vec![0; shape.len()];
            return Ok(self.with_view(shape, strides, self.0.offset));
        }
        if self.0.strides == row_major(&self.0.shape) && self.0.dtype.bits() >= 8 {
            let strides = row_major(&shape);
            return Ok(self.with_view(shape, strides, self.0.offset));
        }
        Elements::from_bytes(self.0.dtype, shape, self.to_contiguous_bytes())
    }

    /// NumPy broadcast to `shape` (stride 0 on new or size-1 dims), no copy.
    pub fn broadcast_to(&self, shape: &[i64]) -> Option<Elements> {
        let rank = shape.len();
        let off = rank.checked_sub(self.0.shape.len())?;
        let mut strides = vec![0; rank];
        for (i, (&d, &s)) in self.0.shape.iter().zip(&self.0.strides).enumerate() {
            let target = shape[i + off];
            if d == target {
                strides[i + off] = s;
            } else if d != 1 {
                return None;
            }
        }
        checked_count(shape).ok()?;
        Some(self.with_view(shape.to_vec(), strides, self.0.offset))
    }

    /// A packed row-major copy in the view's own dtype (no-op if already so).
    pub fn materialized(&self) -> Elements {
        if self.contiguous_bytes().is_some() {
            return self.clone();
        }
        let bytes = self.to_contiguous_bytes();
        let strides = row_major(&self.0.shape);
        Elements(Arc::new(ElementsData {
            dtype: self.0.dtype,
            shape: self.0.shape.clone(),
            strides,
            offset: 0,
            bytes,
        }))
    }

    /// Bytes of the buffer this view keeps alive.
    pub fn buffer_bytes(&self) -> usize {
        self.0.bytes.len()
    }

    /// Same values, same shape: compares content, not identity.
    pub fn same_content(&self, other: &Elements) -> bool {
        if Arc::ptr_eq(&self.0, &other.0) {
            return true;
        }
        self.0.dtype == other.0.dtype
            && self.0.shape == other.0.shape
            && self.iter().zip(other.iter()).all(|(a, b)| a == b)
    }
}

/// Bytes of distinct constant buffers referenced by live attributes (each
/// shared buffer counted once).
pub fn live_constant_bytes(m: &crate::module::Module) -> u64 {
    let mut seen = std::collections::HashSet::new();
    let mut total = 0u64;
    for op in m.collect_ops(m.top()) {
        for (_, a) in m.attrs(op) {
            if let crate::attr::Attribute::Elements(e) = a {
                let b = e.buffer();
                if seen.insert((b.as_ptr() as usize, b.len())) {
                    total += b.len() as u64;
                }
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_f32() {
        let vals: Vec<WideNum> = [1.0, -2.5, 3.25]
            .iter()
            .map(|&v| WideNum::from_f64(v))
            .collect();
        let e = Elements::from_wide(DType::F32, vec![3], &vals).unwrap();
        assert_eq!(e.to_wide_vec(), vals);
        assert_eq!(e.contiguous_bytes().unwrap().len(), 12);
    }

    #[test]
    fn splat_and_int4() {
        let s = Elements::splat(DType::I32, vec![2, 3], WideNum::from_i64(-7)).unwrap();
        assert!(s.is_splat());
        assert_eq!(s.len(), 6);
        assert!(s.iter().all(|v| v.i64() == -7));
        let vals: Vec<WideNum> = [-8, 7, 1].iter().map(|&v| WideNum::from_i64(v)).collect();
        let e = Elements::from_wide(DType::I4, vec![3], &vals).unwrap();
        assert_eq!(e.buffer().len(), 2);
        assert_eq!(e.to_wide_vec(), vals);
    }

    #[test]
    fn minifloats() {
        assert_eq!(decode(DType::F8E4M3FN, 0x7e).f64(), 448.0);
        assert!(decode(DType::F8E4M3FN, 0x7f).f64().is_nan());
        assert_eq!(decode(DType::F8E5M2, 0x7b).f64(), 57344.0);
        assert_eq!(decode(DType::F4E2M1FN, 0x7).f64(), 6.0);
        assert_eq!(decode(DType::F8E8M0FNU, 127).f64(), 1.0);
    }

    #[test]
    fn views_do_not_copy() {
        let vals: Vec<WideNum> = (0..6).map(WideNum::from_i64).collect();
        let e = Elements::from_wide(DType::I64, vec![2, 3], &vals).unwrap();
        let t = e.transposed(&[1, 0]).unwrap();
        assert_eq!(t.shape(), &[3, 2]);
        assert_eq!(
            t.iter().map(|v| v.i64()).collect::<Vec<_>>(),
            vec![0, 3, 1, 4, 2, 5]
        );
        assert_eq!(t.buffer().as_ptr(), e.buffer().as_ptr());
        let r = e.reshaped(vec![3, 2]).unwrap();
        assert_eq!(r.buffer().as_ptr(), e.buffer().as_ptr());
        let rt = t.reshaped(vec![6]).unwrap();
        assert_eq!(
            rt.iter().map(|v| v.i64()).collect::<Vec<_>>(),
            vec![0, 3, 1, 4, 2, 5]
        );
        let row = Elements::from_wide(DType::I64, vec![3], &vals[..3]).unwrap();
        let b = row.broadcast_to(&[2, 3]).unwrap();
        assert_eq!(
            b.iter().map(|v| v.i64()).collect::<Vec<_>>(),
            vec![0, 1, 2, 0, 1, 2]
        );
        assert!(row.broadcast_to(&[2, 4]).is_none());
        let m = t.materialized();
        assert!(m.contiguous_bytes().is_some());
        assert_eq!(m.to_wide_vec(), t.to_wide_vec());
    }

    #[test]
    fn refuses_short_buffers() {
        let r = Elements::from_bytes(DType::F32, vec![4], Bytes::from(vec![0u8; 8]));
        assert!(r.is_err());
        let r = Elements::from_bytes(DType::F32, vec![-1], Bytes::new());
        assert!(r.is_err());
    }
}
