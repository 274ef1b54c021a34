//! `TensorProto` → `Elements`: raw data stays a view of its buffer, typed
//! value lists are packed into a new buffer after their size is checked.

use crate::load::ExternalData;
use crate::proto::tensor_proto::{DataLocation, DataType};
use crate::proto::TensorProto;
use bytes::Bytes;
use ir::elements::{DType, Elements};
use ir::{Diagnostic, Type};

/// The element dtype of an ONNX `TensorProto.DataType` number.
pub fn dtype_from_onnx(code: i32) -> Option<DType> {
    use DataType as D;
    Some(match DataType::try_from(code).ok()? {
        D::Float => DType::F32,
        D::Uint8 => DType::U8,
        D::Int8 => DType::I8,
        D::Uint16 => DType::U16,
        D::Int16 => DType::I16,
        D::Int32 => DType::I32,
        D::Int64 => DType::I64,
        D::Bool => DType::Bool,
        D::Float16 => DType::F16,
        D::Double => DType::F64,
        D::Uint32 => DType::U32,
        D::Uint64 => DType::U64,
        D::Bfloat16 => DType::BF16,
        D::Float8e4m3fn => DType::F8E4M3FN,
        D::Float8e4m3fnuz => DType::F8E4M3FNUZ,
        D::Float8e5m2 => DType::F8E5M2,
        D::Float8e5m2fnuz => DType::F8E5M2FNUZ,
        D::Uint4 => DType::U4,
        D::Int4 => DType::I4,
        D::Float4e2m1 => DType::F4E2M1FN,
        D::Float8e8m0 => DType::F8E8M0FNU,
        D::Uint2 => DType::U2,
        D::Int2 => DType::I2,
        D::Undefined | D::String | D::Complex64 | D::Complex128 | D::Float6e2m3 | D::Float6e3m2 => {
            return None
        }
    })
}

/// The ONNX `TensorProto.DataType` number of a dtype.
pub fn dtype_to_onnx(d: DType) -> i32 {
    use DataType as D;
    let t = match d {
        DType::Bool => D::Bool,
        DType::I2 => D::Int2,
        DType::U2 => D::Uint2,
        DType::I4 => D::Int4,
        DType::U4 => D::Uint4,
        DType::I8 => D::Int8,
        DType::U8 => D::Uint8,
        DType::I16 => D::Int16,
        DType::U16 => D::Uint16,
        DType::I32 => D::Int32,
        DType::U32 => D::Uint32,
        DType::I64 => D::Int64,
        DType::U64 => D::Uint64,
        DType::F16 => D::Float16,
        DType::BF16 => D::Bfloat16,
        DType::F32 => D::Float,
        DType::F64 => D::Double,
        DType::F8E4M3FN => D::Float8e4m3fn,
        DType::F8E4M3FNUZ => D::Float8e4m3fnuz,
        DType::F8E5M2 => D::Float8e5m2,
        DType::F8E5M2FNUZ => D::Float8e5m2fnuz,
        DType::F8E8M0FNU => D::Float8e8m0,
        DType::F4E2M1FN => D::Float4e2m1,
    };
    t as i32
}

/// The IR element type of an ONNX data type number.
pub fn elem_type_from_onnx(code: i32) -> Option<Type> {
    dtype_from_onnx(code).map(DType::to_type)
}

/// Name of an ONNX data type number for messages.
pub fn onnx_type_name(code: i32) -> String {
    match DataType::try_from(code) {
        Ok(d) => format!("{d:?}").to_uppercase(),
        Err(_) => format!("#{code}"),
    }
}

/// Converts a tensor; `external` resolves `data_location = EXTERNAL`.
pub fn tensor_to_elements(
    t: &TensorProto,
    external: Option<&ExternalData>,
) -> Result<Elements, Diagnostic> {
    let err = |msg: String| Diagnostic::error(format!("tensor '{}': {msg}", t.name));
    let dtype = dtype_from_onnx(t.data_type)
        .ok_or_else(|| err(format!("unsupported dtype {}", onnx_type_name(t.data_type))))?;
    if t.segment.is_some() {
        return Err(err("unsupported segmented tensor".into()));
    }
    let n = element_count(&t.dims).ok_or_else(|| {
        err(format!(
            "dims {:?} are negative or their product overflows",
            t.dims
        ))
    })?;
    let want = dtype
        .storage_bytes(n)
        .ok_or_else(|| err(format!("dims {:?} are too large", t.dims)))?;
    let shape = t.dims.clone();
    let build = |bytes: Bytes| {
        Elements::from_bytes(dtype, shape.clone(), bytes).map_err(|e| err(e.to_string()))
    };
    if t.data_location == DataLocation::External as i32 {
        let ext = external.ok_or_else(|| err("external data is not available here".into()))?;
        let bytes = ext.load(t)?;
        check_len(bytes.len(), want).map_err(err)?;
        return build(bytes);
    }
    if !t.raw_data.is_empty() || n == 0 {
        check_len(t.raw_data.len(), want).map_err(err)?;
        // Zero copy: `raw_data` is a slice of the source buffer.
        return build(t.raw_data.clone());
    }
    build(pack_typed(t, dtype, n, want).map_err(err)?)
}

fn check_len(have: usize, want: usize) -> Result<(), String> {
    if have != want {
        return Err(format!("data has {have} bytes, its dims need {want}"));
    }
    Ok(())
}

/// Product of dims, `None` for a negative dim or an overflow.
pub fn element_count(dims: &[i64]) -> Option<usize> {
    dims.iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(usize::try_from(d).ok()?))
}

/// Packs the typed value list of `t` into little-endian storage of `dtype`.
/// The list length is checked against `n` before anything is allocated.
fn pack_typed(t: &TensorProto, dtype: DType, n: usize, want: usize) -> Result<Bytes, String> {
    let count = |have: usize, field: &str, expected: usize| {
        if have == expected {
            Ok(())
        } else {
            Err(format!(
                "{field} has {have} values, its dims need {expected}"
            ))
        }
    };
    let mut out = Vec::new();
    match dtype {
        DType::F32 => {
            count(t.float_data.len(), "float_data", n)?;
            out.reserve_exact(want);
            for v in &t.float_data {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        DType::F64 => {
            count(t.double_data.len(), "double_data", n)?;
            out.reserve_exact(want);
            for v in &t.double_data {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        DType::I64 => {
            count(t.int64_data.len(), "int64_data", n)?;
            out.reserve_exact(want);
            for v in &t.int64_data {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        DType::U32 | DType::U64 => {
            count(t.uint64_data.len(), "uint64_data", n)?;
            out.reserve_exact(want);
            let width = (dtype.bits() / 8) as usize;
            for v in &t.uint64_data {
                out.extend_from_slice(&v.to_le_bytes()[..width]);
            }
        }
        DType::I2 | DType::U2 | DType::I4 | DType::U4 | DType::F4E2M1FN => {
            // Sub-byte types: each int32_data entry holds one packed byte.
            count(t.int32_data.len(), "int32_data", want)?;
            out.extend(t.int32_data.iter().map(|&v| v as u8));
        }
        DType::Bool => {
            count(t.int32_data.len(), "int32_data", n)?;
            out.extend(t.int32_data.iter().map(|&v| u8::from(v != 0)));
        }
        _ => {
            // int8/16/32, uint8/16, and the bit patterns of f16/bf16/f8.
            count(t.int32_data.len(), "int32_data", n)?;
            out.reserve_exact(want);
            let width = (dtype.bits() / 8) as usize;
            for v in &t.int32_data {
                out.extend_from_slice(&v.to_le_bytes()[..width]);
            }
        }
    }
    Ok(Bytes::from(out))
}

/// Encodes elements as a `TensorProto` with little-endian `raw_data`.
pub fn elements_to_tensor(name: &str, e: &Elements) -> TensorProto {
    TensorProto {
        dims: e.shape().to_vec(),
        data_type: dtype_to_onnx(e.dtype()),
        name: name.to_string(),
        raw_data: e.to_contiguous_bytes(),
        ..TensorProto::default()
    }
}
