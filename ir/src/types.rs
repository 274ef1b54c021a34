//! Types in MLIR syntax: `index`, `i32`, `ui8`, `f32`, `tensor<2x?xf32>`,
//! `memref<4x?xf32, strided<[?, 1], offset: ?>>`, `(i32) -> f32`, `!dialect.x`.

use crate::dim::DimExpr;
use std::fmt;
use std::sync::Arc;

/// A dynamic dimension, stride or offset (MLIR's `ShapedType::kDynamic`).
pub const DYN: i64 = i64::MIN;

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Signedness {
    Signless,
    Signed,
    Unsigned,
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum FloatKind {
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

impl FloatKind {
    pub const ALL: [FloatKind; 10] = [
        FloatKind::F16,
        FloatKind::BF16,
        FloatKind::F32,
        FloatKind::F64,
        FloatKind::F8E4M3FN,
        FloatKind::F8E4M3FNUZ,
        FloatKind::F8E5M2,
        FloatKind::F8E5M2FNUZ,
        FloatKind::F8E8M0FNU,
        FloatKind::F4E2M1FN,
    ];
    pub fn name(self) -> &'static str {
        match self {
            FloatKind::F16 => "f16",
            FloatKind::BF16 => "bf16",
            FloatKind::F32 => "f32",
            FloatKind::F64 => "f64",
            FloatKind::F8E4M3FN => "f8E4M3FN",
            FloatKind::F8E4M3FNUZ => "f8E4M3FNUZ",
            FloatKind::F8E5M2 => "f8E5M2",
            FloatKind::F8E5M2FNUZ => "f8E5M2FNUZ",
            FloatKind::F8E8M0FNU => "f8E8M0FNU",
            FloatKind::F4E2M1FN => "f4E2M1FN",
        }
    }
    pub fn bits(self) -> u32 {
        match self {
            FloatKind::F16 | FloatKind::BF16 => 16,
            FloatKind::F32 => 32,
            FloatKind::F64 => 64,
            FloatKind::F4E2M1FN => 4,
            _ => 8,
        }
    }
    pub fn from_name(s: &str) -> Option<FloatKind> {
        FloatKind::ALL.into_iter().find(|k| k.name() == s)
    }
    /// The layout of the 8- and 4-bit formats; `None` for the others.
    pub fn minifloat(self) -> Option<MiniFloat> {
        let f = |bits, man, bias, max, overflow, nan, signed_specials, neg_zero| MiniFloat {
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
        Some(match self {
            FloatKind::F8E4M3FN => f(8, 3, 7, 0x7e, 0x7f, Some(0x7f), true, true),
            FloatKind::F8E4M3FNUZ => f(8, 3, 8, 0x7f, 0x80, Some(0x80), false, false),
            FloatKind::F8E5M2 => f(8, 2, 15, 0x7b, 0x7c, Some(0x7e), true, true),
            FloatKind::F8E5M2FNUZ => f(8, 2, 16, 0x7f, 0x80, Some(0x80), false, false),
            FloatKind::F8E8M0FNU => MiniFloat {
                sign: 0,
                ..f(8, 0, 127, 0xfe, 0xff, Some(0xff), false, false)
            },
            FloatKind::F4E2M1FN => f(4, 1, 1, 0x7, 0x7, None, true, true),
            _ => return None,
        })
    }
}

/// An 8- or 4-bit float format: its fields and special codes (codes of
/// the magnitude, before the sign).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct MiniFloat {
    pub bits: u32,
    /// Mantissa bits (the exponent takes the rest but the sign).
    pub man: u32,
    pub bias: i64,
    /// The sign bit (0 for the unsigned f8E8M0FNU).
    pub sign: u32,
    /// Largest finite magnitude code.
    pub max: u32,
    /// What a finite value past `max` rounds to: infinity (E5M2), NaN,
    /// or `max` itself (f4E2M1FN saturates: it has neither).
    pub overflow: u32,
    /// The NaN code; `None`: NaN becomes -0 (f4E2M1FN).
    pub nan: Option<u32>,
    /// Whether NaN and overflow codes take the sign.
    pub signed_specials: bool,
    /// Whether -0 exists (not in the FNUZ formats).
    pub neg_zero: bool,
}

impl MiniFloat {
    /// The code nearest to `v` (IEEE semantics: round to nearest even,
    /// overflow to `overflow`, NaN to `nan`, no -0 without `neg_zero`),
    /// computed on the f64 bits as `lower`'s emitter does on f32/f64.
    /// f8E8M0FNU has no mantissa, so its ties round up.
    pub fn encode(&self, v: f64) -> u32 {
        let bits = v.to_bits();
        let abs = bits & !(1u64 << 63);
        let es = (abs >> 52) as i64;
        let sig = (abs & ((1u64 << 52) - 1)) | if es != 0 { 1u64 << 52 } else { 0 };
        let ce = es.max(1) + self.bias - 1023;
        let m = i64::from(self.man);
        let s = (1 - ce).clamp(0, m + 2) + 52 - m;
        let half = (1u64 << (s - 1)) - 1;
        let r = (sig + half + ((sig >> s) & 1)) >> s;
        let code = r + (((ce.max(1) - 1) as u64) << m);
        let mut mag = if code > u64::from(self.max) {
            self.overflow
        } else {
            code as u32
        };
        if v.is_nan() {
            mag = self.nan.unwrap_or(0);
        }
        if self.sign == 0 {
            return mag;
        }
        let special = !self.signed_specials && mag == self.overflow;
        let zero = !self.neg_zero && mag == 0;
        let takes =
            (v.is_sign_negative() && !special && !zero) || (v.is_nan() && self.nan.is_none());
        if takes {
            mag | self.sign
        } else {
            mag
        }
    }
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Type {
    Index,
    Int {
        width: u32,
        sign: Signedness,
    },
    Float(FloatKind),
    None,
    Complex(Arc<Type>),
    Tensor(Arc<TensorType>),
    MemRef(Arc<MemRefType>),
    /// `vector<8xf32>`: a register value of static shape.
    Vector(Arc<VectorType>),
    Function(Arc<FunctionType>),
    /// `!dialect.body`, e.g. `!onnx.Seq<tensor<f32>>`; the body is kept verbatim.
    Opaque(Arc<str>),
}

/// `tensor<2x?xf32>`; `shape == None` is `tensor<*xf32>`.
///
/// `dims` gives each dim's symbolic size when shape inference knows one
/// for a dynamic dim (`tensor<?x3xf32, #onnx.dims<"N, 3">>`); it is `None`
/// when every dim is static or none is known. Construct with
/// [`Type::tensor_dims`] to keep that invariant.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct TensorType {
    pub shape: Option<Vec<i64>>,
    pub elem: Type,
    pub dims: Option<Arc<[Option<DimExpr>]>>,
}

impl TensorType {
    /// The symbolic size of dim `i`: its constant when static, its
    /// expression when known, `None` for an unknown dynamic dim.
    pub fn dim(&self, i: usize) -> Option<DimExpr> {
        let d = *self.shape.as_ref()?.get(i)?;
        if d != DYN {
            return Some(DimExpr::constant(d));
        }
        self.dims.as_ref()?.get(i)?.clone()
    }
    /// Every dim's symbolic size (see [`TensorType::dim`]); `None` unranked.
    pub fn sym_dims(&self) -> Option<Vec<Option<DimExpr>>> {
        let rank = self.shape.as_ref()?.len();
        Some((0..rank).map(|i| self.dim(i)).collect())
    }
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Layout {
    Identity,
    /// `strided<[s0, s1], offset: o>`; entries may be `DYN`.
    Strided {
        offset: i64,
        strides: Vec<i64>,
    },
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct MemRefType {
    pub shape: Vec<i64>,
    pub elem: Type,
    pub layout: Layout,
}

/// `vector<8xf32>`, `vector<4x8xi32>`; every dim static and positive.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct VectorType {
    pub shape: Vec<i64>,
    pub elem: Type,
}

impl VectorType {
    pub fn len(&self) -> i64 {
        self.shape.iter().product()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct FunctionType {
    pub inputs: Vec<Type>,
    pub results: Vec<Type>,
}

impl Type {
    pub fn i(width: u32) -> Type {
        Type::Int {
            width,
            sign: Signedness::Signless,
        }
    }
    pub fn ui(width: u32) -> Type {
        Type::Int {
            width,
            sign: Signedness::Unsigned,
        }
    }
    pub fn i1() -> Type {
        Type::i(1)
    }
    pub fn i64() -> Type {
        Type::i(64)
    }
    pub fn f32() -> Type {
        Type::Float(FloatKind::F32)
    }
    pub fn f64() -> Type {
        Type::Float(FloatKind::F64)
    }
    pub fn tensor(shape: Vec<i64>, elem: Type) -> Type {
        Type::Tensor(Arc::new(TensorType {
            shape: Some(shape),
            elem,
            dims: None,
        }))
    }
    /// A ranked tensor from symbolic sizes: constant dims are static,
    /// the others dynamic with their expression kept (`None`: unknown).
    pub fn tensor_dims(dims: Vec<Option<DimExpr>>, elem: Type) -> Type {
        let shape: Vec<i64> = dims
            .iter()
            .map(|d| d.as_ref().and_then(DimExpr::as_const).unwrap_or(DYN))
            .collect();
        let symbolic = dims
            .iter()
            .any(|d| d.as_ref().is_some_and(|e| e.as_const().is_none()));
        let dims = symbolic.then(|| {
            dims.into_iter()
                .map(|d| d.filter(|e| e.as_const().is_none()))
                .collect()
        });
        Type::Tensor(Arc::new(TensorType {
            shape: Some(shape),
            elem,
            dims,
        }))
    }
    pub fn unranked_tensor(elem: Type) -> Type {
        Type::Tensor(Arc::new(TensorType {
            shape: None,
            elem,
            dims: None,
        }))
    }
    /// The same type without symbolic sizes.
    pub fn without_dims(&self) -> Type {
        match self {
            Type::Tensor(t) if t.dims.is_some() => Type::Tensor(Arc::new(TensorType {
                shape: t.shape.clone(),
                elem: t.elem.clone(),
                dims: None,
            })),
            other => other.clone(),
        }
    }
    pub fn memref(shape: Vec<i64>, elem: Type) -> Type {
        Type::MemRef(Arc::new(MemRefType {
            shape,
            elem,
            layout: Layout::Identity,
        }))
    }
    pub fn memref_strided(shape: Vec<i64>, elem: Type, offset: i64, strides: Vec<i64>) -> Type {
        Type::MemRef(Arc::new(MemRefType {
            shape,
            elem,
            layout: Layout::Strided { offset, strides },
        }))
    }
    /// A 1-D vector of `n` elements.
    pub fn vector(n: i64, elem: Type) -> Type {
        Type::Vector(Arc::new(VectorType {
            shape: vec![n],
            elem,
        }))
    }
    /// `self`'s vector of `n` elements, or of `self`'s shape with `elem`
    /// when `self` is already a vector (the type a compare returns).
    pub fn with_elem(&self, elem: Type) -> Type {
        match self {
            Type::Vector(v) => Type::Vector(Arc::new(VectorType {
                shape: v.shape.clone(),
                elem,
            })),
            _ => elem,
        }
    }
    pub fn as_vector(&self) -> Option<&VectorType> {
        match self {
            Type::Vector(v) => Some(v),
            _ => None,
        }
    }
    pub fn function(inputs: Vec<Type>, results: Vec<Type>) -> Type {
        Type::Function(Arc::new(FunctionType { inputs, results }))
    }

    pub fn is_index(&self) -> bool {
        matches!(self, Type::Index)
    }
    pub fn is_int(&self) -> bool {
        matches!(self, Type::Int { .. })
    }
    pub fn is_float(&self) -> bool {
        matches!(self, Type::Float(_))
    }
    pub fn is_int_or_index(&self) -> bool {
        self.is_int() || self.is_index()
    }
    pub fn int_width(&self) -> Option<u32> {
        match self {
            Type::Int { width, .. } => Some(*width),
            _ => None,
        }
    }
    pub fn float_kind(&self) -> Option<FloatKind> {
        match self {
            Type::Float(k) => Some(*k),
            _ => None,
        }
    }
    pub fn as_memref(&self) -> Option<&MemRefType> {
        match self {
            Type::MemRef(m) => Some(m),
            _ => None,
        }
    }
    pub fn as_tensor(&self) -> Option<&TensorType> {
        match self {
            Type::Tensor(t) => Some(t),
            _ => None,
        }
    }
    pub fn as_function(&self) -> Option<&FunctionType> {
        match self {
            Type::Function(f) => Some(f),
            _ => None,
        }
    }
    /// Element type of a tensor or memref; the type itself for scalars.
    pub fn element_type(&self) -> &Type {
        match self {
            Type::Tensor(t) => &t.elem,
            Type::MemRef(m) => &m.elem,
            Type::Vector(v) => &v.elem,
            other => other,
        }
    }
    /// Shape of a ranked tensor or memref.
    pub fn shape(&self) -> Option<&[i64]> {
        match self {
            Type::Tensor(t) => t.shape.as_deref(),
            Type::MemRef(m) => Some(&m.shape),
            _ => None,
        }
    }
    pub fn is_shaped(&self) -> bool {
        matches!(self, Type::Tensor(_) | Type::MemRef(_) | Type::Vector(_))
    }
    /// Scalar types that a memref or tensor may hold.
    pub fn is_scalar(&self) -> bool {
        matches!(
            self,
            Type::Index | Type::Int { .. } | Type::Float(_) | Type::Complex(_)
        )
    }
    /// Size in bits of a scalar; `index` counts as 64.
    pub fn bit_width(&self) -> Option<u32> {
        match self {
            Type::Index => Some(64),
            Type::Int { width, .. } => Some(*width),
            Type::Float(k) => Some(k.bits()),
            Type::Complex(e) => e.bit_width().map(|b| b * 2),
            _ => None,
        }
    }
}

impl MemRefType {
    pub fn rank(&self) -> usize {
        self.shape.len()
    }
    pub fn has_static_shape(&self) -> bool {
        self.shape.iter().all(|&d| d != DYN)
    }
    pub fn num_elements(&self) -> Option<i64> {
        self.shape.iter().try_fold(
            1i64,
            |acc, &d| if d == DYN { None } else { acc.checked_mul(d) },
        )
    }
    /// Strides and offset, the identity layout resolved to row-major strides.
    pub fn strides_and_offset(&self) -> (Vec<i64>, i64) {
        match &self.layout {
            Layout::Strided { offset, strides } => (strides.clone(), *offset),
            Layout::Identity => (identity_strides(&self.shape), 0),
        }
    }
    /// True when the layout is the identity or equal to the row-major strides.
    pub fn is_identity_layout(&self) -> bool {
        match &self.layout {
            Layout::Identity => true,
            Layout::Strided { offset, strides } => {
                *offset == 0 && *strides == identity_strides(&self.shape) && !strides.contains(&DYN)
            }
        }
    }
}

/// The entries of `sizes` (one per dim of `shape`) at the dynamic dims:
/// what an allocation or a view of that shape takes as operands.
pub fn dynamic_sizes<T: Copy>(shape: &[i64], sizes: &[T]) -> Vec<T> {
    shape
        .iter()
        .zip(sizes)
        .filter(|(&d, _)| d == DYN)
        .map(|(_, &v)| v)
        .collect()
}

/// Row-major strides of a shape; a dynamic dim makes all outer strides dynamic.
pub fn identity_strides(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![0i64; shape.len()];
    let mut acc: i64 = 1;
    for (i, &d) in shape.iter().enumerate().rev() {
        strides[i] = acc;
        acc = if acc == DYN || d == DYN {
            DYN
        } else {
            acc.checked_mul(d).unwrap_or(DYN)
        };
    }
    strides
}

fn write_dim(f: &mut fmt::Formatter<'_>, d: i64) -> fmt::Result {
    if d == DYN {
        f.write_str("?")
    } else {
        write!(f, "{d}")
    }
}

fn write_shape_prefix(f: &mut fmt::Formatter<'_>, shape: &[i64]) -> fmt::Result {
    for &d in shape {
        write_dim(f, d)?;
        f.write_str("x")?;
    }
    Ok(())
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Index => f.write_str("index"),
            Type::Int { width, sign } => match sign {
                Signedness::Signless => write!(f, "i{width}"),
                Signedness::Signed => write!(f, "si{width}"),
                Signedness::Unsigned => write!(f, "ui{width}"),
            },
            Type::Float(k) => f.write_str(k.name()),
            Type::None => f.write_str("none"),
            Type::Complex(e) => write!(f, "complex<{e}>"),
            Type::Tensor(t) => {
                f.write_str("tensor<")?;
                match &t.shape {
                    Some(shape) => write_shape_prefix(f, shape)?,
                    None => f.write_str("*x")?,
                }
                write!(f, "{}", t.elem)?;
                if let Some(dims) = &t.dims {
                    // Static dims print as their size, unknown ones as `?`.
                    let items: Vec<String> = (0..dims.len())
                        .map(|i| t.dim(i).map_or_else(|| "?".to_string(), |e| e.to_string()))
                        .collect();
                    write!(f, ", #onnx.dims<{:?}>", items.join(", "))?;
                }
                f.write_str(">")
            }
            Type::MemRef(m) => {
                f.write_str("memref<")?;
                write_shape_prefix(f, &m.shape)?;
                write!(f, "{}", m.elem)?;
                if let Layout::Strided { offset, strides } = &m.layout {
                    f.write_str(", strided<[")?;
                    for (i, &s) in strides.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        write_dim(f, s)?;
                    }
                    f.write_str("]")?;
                    if *offset != 0 {
                        f.write_str(", offset: ")?;
                        write_dim(f, *offset)?;
                    }
                    f.write_str(">")?;
                }
                f.write_str(">")
            }
            Type::Function(ft) => {
                f.write_str("(")?;
                write_list(f, &ft.inputs)?;
                f.write_str(") -> ")?;
                if ft.results.len() == 1 && !matches!(ft.results[0], Type::Function(_)) {
                    write!(f, "{}", ft.results[0])
                } else {
                    f.write_str("(")?;
                    write_list(f, &ft.results)?;
                    f.write_str(")")
                }
            }
            Type::Opaque(body) => write!(f, "!{body}"),
            Type::Vector(v) => {
                f.write_str("vector<")?;
                write_shape_prefix(f, &v.shape)?;
                write!(f, "{}>", v.elem)
            }
        }
    }
}

/// Writes `a, b, c`.
pub fn write_list<T: fmt::Display>(f: &mut fmt::Formatter<'_>, items: &[T]) -> fmt::Result {
    for (i, t) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{t}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display() {
        assert_eq!(
            Type::tensor(vec![2, DYN], Type::f32()).to_string(),
            "tensor<2x?xf32>"
        );
        assert_eq!(
            Type::unranked_tensor(Type::ui(8)).to_string(),
            "tensor<*xui8>"
        );
        assert_eq!(
            Type::memref_strided(vec![4, DYN], Type::f32(), DYN, vec![DYN, 1]).to_string(),
            "memref<4x?xf32, strided<[?, 1], offset: ?>>"
        );
        assert_eq!(
            Type::memref(vec![], Type::Index).to_string(),
            "memref<index>"
        );
        assert_eq!(
            Type::function(vec![Type::i(32)], vec![Type::f32()]).to_string(),
            "(i32) -> f32"
        );
        assert_eq!(Type::function(vec![], vec![]).to_string(), "() -> ()");
    }

    #[test]
    fn strides() {
        assert_eq!(identity_strides(&[2, 3, 4]), vec![12, 4, 1]);
        assert_eq!(identity_strides(&[DYN, 3, 4]), vec![12, 4, 1]);
        assert_eq!(identity_strides(&[2, DYN, 4]), vec![DYN, 4, 1]);
    }
}
