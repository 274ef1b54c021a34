//! Tensor constants as strided views over `Arc`-shared byte buffers.
//!
//! A buffer is a `bytes::Bytes`: a slice of the mapped model file, a heap
//! vector, or a small inline value; cloning a view never copies the data.
//! Values are read as little-endian (ONNX `raw_data` is unaligned) and
//! widened to `WideNum`, so arithmetic only knows three number classes.

use crate::types::{FloatKind, Signedness, Type};
use bytes::Bytes;
use std::sync::Arc;

mod codec;
mod generated;
mod lazy;
mod pack;
pub mod pool;

use codec::push_raw;
pub use codec::{decode, encode, encode_exact, read_raw};
pub use generated::FillFn;
pub use lazy::MapFn;

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

#[derive(Debug)]
struct ElementsData {
    dtype: DType,
    shape: Vec<i64>,
    /// Element strides into `bytes`, per dimension; 0 broadcasts.
    strides: Vec<i64>,
    offset: usize,
    bytes: Bytes,
    /// A lazily applied transform: values come from it, not `bytes`.
    lazy: Option<lazy::Lazy>,
    /// Bytes computed on read (`bytes` is empty).
    generated: Option<generated::Generated>,
}

/// An exported model's constants up to this many bytes are written whole,
/// repeating or not: a node and its shape initializer weigh about as much
/// as a small tensor (a zero Conv bias of 32 floats is one initializer, as
/// onnx-simplifier writes it). See `constprop::canon::repeats`.
pub const WHOLE_BYTES: usize = 1024;

/// A tensor constant: shape, dtype and a strided view over shared bytes.
#[derive(Clone, Debug)]
pub struct Elements(Arc<ElementsData>);

impl Drop for ElementsData {
    fn drop(&mut self) {
        pool::release(&self.bytes);
    }
}

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

impl ElementsData {
    /// A stored row-major tensor.
    fn row_major(dtype: DType, shape: Vec<i64>, bytes: Bytes) -> ElementsData {
        ElementsData {
            dtype,
            strides: row_major(&shape),
            shape,
            offset: 0,
            bytes,
            lazy: None,
            generated: None,
        }
    }
}

impl Elements {
    /// Every view is made here: the pool counts the buffers views hold.
    fn make(data: ElementsData) -> Elements {
        pool::retain(&data.bytes);
        Elements(Arc::new(data))
    }

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
        Ok(Elements::make(ElementsData::row_major(dtype, shape, bytes)))
    }

    /// One value broadcast to `shape`: all strides zero, one element stored.
    pub fn splat(dtype: DType, shape: Vec<i64>, v: WideNum) -> Result<Self, ElementsError> {
        checked_count(&shape)?;
        let raw = encode_exact(dtype, v).ok_or(ElementsError::Unencodable(dtype))?;
        let mut out = Vec::with_capacity(8);
        push_raw(&mut out, dtype, 0, raw);
        let strides = vec![0; shape.len()];
        Ok(Elements::make(ElementsData {
            dtype,
            shape,
            strides,
            offset: 0,
            bytes: pool::heap(out),
            lazy: None,
            generated: None,
        }))
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
            let raw = encode_exact(dtype, v).ok_or(ElementsError::Unencodable(dtype))?;
            push_raw(&mut out, dtype, i, raw);
        }
        Self::from_bytes(dtype, shape, pool::heap(out))
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
    /// One stored value broadcast (a lazy view never counts: it stores
    /// none).
    pub fn is_splat(&self) -> bool {
        self.0.lazy.is_none() && !self.is_generated() && self.0.strides.iter().all(|&s| s == 0)
    }
    /// The backing bytes when the view is the whole buffer in row-major order.
    pub fn contiguous_bytes(&self) -> Option<&[u8]> {
        let n = self.len();
        if self.0.lazy.is_none() && self.0.offset == 0 && self.0.strides == row_major(&self.0.shape)
        {
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
        if let Some(l) = &self.0.lazy {
            return l.get(flat);
        }
        if let Some(s) = self.stored_copy() {
            return s.get(flat);
        }
        let raw = read_raw(&self.0.bytes, self.0.dtype, self.position(flat))?;
        Some(decode(self.0.dtype, raw))
    }
    /// All elements in row-major order: bulk decoding of contiguous data,
    /// an odometer over strided views, the transform of lazy ones.
    pub fn iter(&self) -> impl Iterator<Item = WideNum> + '_ {
        self.iter_range(0, self.len())
    }
    pub fn to_wide_vec(&self) -> Vec<WideNum> {
        self.iter().collect()
    }
    /// Packed row-major bytes in the view's dtype (copies only when strided).
    pub fn to_contiguous_bytes(&self) -> Bytes {
        if let Some(b) = self.contiguous_bytes() {
            return self.0.bytes.slice_ref(b);
        }
        let n = self.len();
        let mut out = Vec::with_capacity(self.0.dtype.storage_bytes(n).unwrap_or(0));
        self.pack_range(0, n, &mut out);
        pool::heap(out)
    }
    /// Row-major bytes as compiled code holds them: one byte per element
    /// for dtypes under 8 bits (integers sign- or zero-extended, 4-bit
    /// float codes in the low bits), the packed bytes otherwise.
    pub fn to_unpacked_bytes(&self) -> Bytes {
        let d = self.0.dtype;
        let packed = self.to_contiguous_bytes();
        if d.bits() >= 8 {
            return packed;
        }
        let bits = d.bits();
        let signed = d.class() == NumClass::Signed;
        let out = (0..self.len())
            .map(|i| {
                let raw = read_raw(&packed, d, i).unwrap_or(0) as u8;
                if signed {
                    (((raw << (8 - bits)) as i8) >> (8 - bits)) as u8
                } else {
                    raw
                }
            })
            .collect();
        pool::heap(out)
    }

    /// The inverse of [`Elements::to_unpacked_bytes`]: for dtypes under 8
    /// bits `bytes` holds one element per byte (its low bits count).
    pub fn from_unpacked_bytes(
        dtype: DType,
        shape: Vec<i64>,
        bytes: Bytes,
    ) -> Result<Self, ElementsError> {
        if dtype.bits() >= 8 {
            return Self::from_bytes(dtype, shape, bytes);
        }
        let n = checked_count(&shape)?;
        if bytes.len() < n {
            return Err(ElementsError::TooSmall {
                dtype,
                have: bytes.len(),
                want: n,
            });
        }
        let mut out = Vec::with_capacity(dtype.storage_bytes(n).unwrap_or(0));
        for (i, &b) in bytes.iter().take(n).enumerate() {
            push_raw(&mut out, dtype, i, u64::from(b));
        }
        Self::from_bytes(dtype, shape, pool::heap(out))
    }
    fn with_view(&self, shape: Vec<i64>, strides: Vec<i64>, offset: usize) -> Elements {
        if let Some(s) = self.stored_copy() {
            return s.with_view(shape, strides, offset);
        }
        if let Some(l) = &self.0.lazy {
            if l.position_free() {
                // Element-wise maps commute with views, and the strides are
                // the base's: view the base.
                let base = l.base.with_view(shape, strides, offset);
                return Elements::lazy(self.0.dtype, base, l.steps.clone());
            }
            // Views index bytes: apply the transform first.
            return self.materialized().with_view(shape, strides, offset);
        }
        Elements::make(ElementsData {
            dtype: self.0.dtype,
            shape,
            strides,
            offset,
            bytes: self.0.bytes.clone(),
            lazy: None,
            generated: None,
        })
    }

    /// True when values are computed on read (see `affine_blocks` and
    /// `generated`).
    pub fn is_lazy(&self) -> bool {
        self.0.lazy.is_some() || self.is_generated()
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
        if self.is_generated() {
            return self
                .regenerated(shape.clone())
                .ok_or(ElementsError::BadShape { shape });
        }
        if let Some(l) = &self.0.lazy {
            // Row-major order is kept, so blocks still line up.
            let base = l.base.reshaped(shape)?;
            return Ok(Elements::lazy(self.0.dtype, base, l.steps.clone()));
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
        Elements::make(ElementsData::row_major(
            self.0.dtype,
            self.0.shape.clone(),
            bytes,
        ))
    }

    /// The same view restricted to `shape`, which keeps each dim or makes it
    /// 1 where the view broadcasts (stride 0): the distinct values of a
    /// broadcast, without copying.
    pub fn broadcast_core(&self, shape: &[i64]) -> Option<Elements> {
        if shape.len() != self.0.shape.len() {
            return None;
        }
        let ok = shape
            .iter()
            .zip(&self.0.shape)
            .zip(&self.0.strides)
            .all(|((&n, &d), &s)| n == d || (n == 1 && s == 0));
        let strides = self.0.strides.clone();
        ok.then(|| self.with_view(shape.to_vec(), strides, self.0.offset))
    }

    /// Bytes the values take once written out compactly: the distinct
    /// values (dims of stride 0 count once) in the view's own dtype,
    /// whatever is stored now (a lazy view computes them). A broadcast is
    /// emitted as its core and an index map (bufferize) or an Expand of it
    /// (export), so Expand of a scalar counts one element.
    pub fn emitted_bytes(&self) -> usize {
        let distinct = self
            .0
            .shape
            .iter()
            .zip(&self.0.strides)
            .filter(|&(_, &s)| s != 0)
            .try_fold(1usize, |n, (&d, _)| n.checked_mul(usize::try_from(d).ok()?));
        distinct
            .and_then(|n| self.0.dtype.storage_bytes(n))
            .unwrap_or(usize::MAX)
    }

    /// The dims of stride 0 and size above 1 (where the view repeats its
    /// values), and the view restricted to its distinct values there; `None`
    /// when no dim repeats.
    pub fn repeated_core(&self) -> Option<(Vec<bool>, Elements)> {
        let repeated: Vec<bool> = self
            .0
            .shape
            .iter()
            .zip(&self.0.strides)
            .map(|(&d, &s)| s == 0 && d > 1)
            .collect();
        if !repeated.contains(&true) {
            return None;
        }
        let core_shape: Vec<i64> = self
            .0
            .shape
            .iter()
            .zip(&repeated)
            .map(|(&d, &r)| if r { 1 } else { d })
            .collect();
        Some((repeated, self.broadcast_core(&core_shape)?))
    }

    /// Bytes of the buffer this view keeps alive (a lazy view: its base's
    /// plus its parameters).
    pub fn buffer_bytes(&self) -> usize {
        match &self.0.lazy {
            Some(l) => {
                l.base.buffer_bytes() + l.steps.iter().map(lazy::Step::params_bytes).sum::<usize>()
            }
            None => self.0.bytes.len(),
        }
    }

    /// The stored buffer the values come from (a lazy view's base buffer).
    pub fn root_buffer(&self) -> &Bytes {
        match &self.0.lazy {
            Some(l) => l.base.root_buffer(),
            None => &self.0.bytes,
        }
    }

    /// Same values, same shape: compares content, not identity.
    pub fn same_content(&self, other: &Elements) -> bool {
        if Arc::ptr_eq(&self.0, &other.0) {
            return true;
        }
        let same_kind = self.0.dtype == other.0.dtype && self.0.shape == other.0.shape;
        if self.is_splat() && other.is_splat() {
            return same_kind && self.get(0) == other.get(0);
        }
        // Whole bytes per element: equal bytes are equal elements.
        let bytes = self
            .0
            .dtype
            .bits()
            .is_multiple_of(8)
            .then(|| self.contiguous_bytes().zip(other.contiguous_bytes()))
            .flatten();
        if let Some((a, b)) = bytes {
            return same_kind && a == b;
        }
        same_kind && self.iter().zip(other.iter()).all(|(a, b)| a == b)
    }
}

/// Bytes of the distinct buffers live constants hold (heap results and
/// slices of the model file alike), read from the pool: after the constant
/// GC compacted `_m`, the module's attributes hold about all of them.
pub fn live_constant_bytes(_m: &crate::module::Module) -> u64 {
    pool::stats().held
}

#[cfg(test)]
mod tests;
