//! MatMulInteger and QLinearMatMul on the int8 GEMM: A of any rank with
//! per-tensor quantization, B a constant `[K, N]` matrix (per-tensor or
//! per-column). `None` when the operands do not fit (per-row A, runtime
//! or batched B): the caller's loop nest computes those.

use super::{call, flat_all, pack_b, QCall, QOut, QVariant, Slots};
use crate::convert::{contiguous, dims, Lowering};
use crate::kernels::linalg::gemm::flat;
use crate::kernels::support::index::product;
use crate::kernels::{
    support::alloc_result, support::checks, support::constant_elements, support::scalar_at,
    support::shape_of,
};
use ir::elements::{DType, Elements};
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

const MATMUL_INTEGER: Slots = Slots {
    data: ops::MatMulInteger::A,
    data_zp: ops::MatMulInteger::A_ZERO_POINT,
    weights: ops::MatMulInteger::B,
    weights_zp: ops::MatMulInteger::B_ZERO_POINT,
};
const QLINEAR_MATMUL: Slots = Slots {
    data: ops::QLinearMatMul::A,
    data_zp: ops::QLinearMatMul::A_ZERO_POINT,
    weights: ops::QLinearMatMul::B,
    weights_zp: ops::QLinearMatMul::B_ZERO_POINT,
};

pub fn matmul_integer(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
) -> Result<Option<Vec<ValueId>>> {
    let Some(plan) = Plan::new(cx, b, op, &MATMUL_INTEGER)? else {
        return Ok(None);
    };
    plan.emit(cx, b, op, QOut::I32, None).map(Some)
}

pub fn qlinear_matmul(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
) -> Result<Option<Vec<ValueId>>> {
    let scalar_input = |b: &Builder<'_>, i| single(b.m, cx.input(b.m, op, i).ok());
    if ![
        ops::QLinearMatMul::A_SCALE,
        ops::QLinearMatMul::Y_SCALE,
        ops::QLinearMatMul::Y_ZERO_POINT,
    ]
    .iter()
    .all(|&i| scalar_input(b, i))
    {
        return Ok(None);
    }
    let Some(sb) = constant_elements(b.m, op, ops::QLinearMatMul::B_SCALE) else {
        return Ok(None);
    };
    let elem = crate::kernels::support::result_memref_type(b.m, op, 0)?
        .element_type()
        .clone();
    if elem.int_width() != Some(8) {
        return Ok(None);
    }
    let Some(plan) = Plan::new(cx, b, op, &QLINEAR_MATMUL)? else {
        return Ok(None);
    };
    let Some(sb) = per_column(&sb.iter().map(|w| w.f64()).collect::<Vec<_>>(), plan.v.n) else {
        return Ok(None);
    };
    let padded = plan.padded();
    let sb: Vec<f32> = (0..padded)
        .map(|i| sb.get(i).copied().unwrap_or(0.0) as f32)
        .collect();
    let bytes: Vec<u8> = sb.iter().flat_map(|x| x.to_le_bytes()).collect();
    let sb = constant(cx, b, DType::F32, bytes)?;
    let mut scalars = [sb; 3];
    for (s, i) in scalars.iter_mut().zip([
        ops::QLinearMatMul::A_SCALE,
        ops::QLinearMatMul::Y_SCALE,
        ops::QLinearMatMul::Y_ZERO_POINT,
    ]) {
        let x = cx.input(b.m, op, i)?;
        *s = scalar_at(b, op, x, None, &Type::f32())?;
    }
    plan.emit(cx, b, op, QOut::Requant { elem }, Some((sb, scalars)))
        .map(Some)
}

/// At most one element, statically.
pub(super) fn single(m: &ir::Module, v: Option<ValueId>) -> bool {
    v.is_some_and(|v| {
        m.value_type(v)
            .shape()
            .is_some_and(|s| s.iter().all(|&d| d == 1))
    })
}

/// `vals` per column of `n`: one value for all, or one each.
pub(super) fn per_column<T: Copy>(vals: &[T], n: i64) -> Option<Vec<T>> {
    let n = usize::try_from(n).ok()?;
    match vals.len() {
        1 => Some(vec![vals[0]; n]),
        l if l == n => Some(vals.to_vec()),
        _ => None,
    }
}

/// A flat constant buffer of `dtype` holding `bytes`.
pub(super) fn constant(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    dtype: DType,
    bytes: Vec<u8>,
) -> Result<ValueId> {
    let width = dtype.storage_bytes(1).unwrap_or(1).max(1);
    let len = i64::try_from(bytes.len() / width).unwrap_or(0);
    let e = Elements::from_bytes(dtype, vec![len], ir::elements::pool::heap(bytes))
        .map_err(|e| ir::Diagnostic::error(format!("int8 GEMM constant: {e:?}")))?;
    let g = cx.global(b, &e);
    let len = b.const_index(len);
    Ok(flat(b, g, len))
}

/// What the GEMM needs of the op: the variant, the packed B, A and the
/// runtime α.
struct Plan {
    v: QVariant,
    a: ValueId,
    a_zp: Option<ValueId>,
    packed: Vec<u8>,
    colsum: Vec<i32>,
    beta: Vec<i32>,
}

impl Plan {
    fn new(cx: &Lowering, b: &mut Builder<'_>, op: OpId, s: &Slots) -> Result<Option<Plan>> {
        let a = cx.input(b.m, op, s.data)?;
        let a_elem = b.m.value_type(a).element_type().clone();
        let sa = shape_of(b.m, a);
        let Some(w) = constant_elements(b.m, op, s.weights) else {
            return Ok(None);
        };
        let (b_signed, a_signed) = (w.dtype() == DType::I8, a_elem == Type::i(8));
        let ok_types =
            matches!(w.dtype(), DType::I8 | DType::U8) && (a_signed || a_elem == Type::ui(8));
        let &[k, n] = w.shape() else {
            return Ok(None);
        };
        let a_zp = cx.optional_input(b.m, op, s.data_zp)?;
        if !ok_types || sa.is_empty() || a_zp.is_some_and(|z| !single(b.m, Some(z))) {
            return Ok(None);
        }
        let zb = match constant_elements(b.m, op, s.weights_zp) {
            Some(z) => z.iter().map(|x| x.i64()).collect(),
            None if cx.has_input(b.m, op, s.weights_zp) => return Ok(None),
            None => vec![0],
        };
        let Some(zb) = per_column(&zb, n) else {
            return Ok(None);
        };
        let mut v = QVariant::new(cx.vector_bits, cx.int8_dot, (k, n), a_signed);
        let shift = if b_signed { 0 } else { 128 };
        let beta: Vec<i32> = zb.iter().map(|&z| (z - shift) as i32).collect();
        v.row_sums = beta.iter().any(|&x| x != 0);
        let Some((packed, colsum)) = pack_b(&w.to_contiguous_bytes(), b_signed, &v) else {
            return Ok(None);
        };
        Ok(Some(Plan {
            v,
            a,
            a_zp,
            packed,
            colsum,
            beta,
        }))
    }

    /// Columns of the packed panels.
    fn padded(&self) -> usize {
        usize::try_from(self.v.panels() * self.v.nr()).unwrap_or(0)
    }

    fn emit(
        self,
        cx: &mut Lowering,
        b: &mut Builder<'_>,
        op: OpId,
        out: QOut,
        requant: Option<(ValueId, [ValueId; 3])>,
    ) -> Result<Vec<ValueId>> {
        let mut v = self.v.clone();
        v.out = out;
        let a = contiguous(b, self.a);
        let da = dims(b, a);
        let (lead, last) = da.split_at(da.len() - 1);
        let k = b.const_index(v.k);
        checks::equal(b, op, last[0], k, "the inner dims of A and B differ")?;
        let mut od = lead.to_vec();
        od.push(b.const_index(v.n));
        let c = alloc_result(b, op, 0, &od)?;
        let padded = self.padded();
        let words = |x: &[i32]| -> Vec<u8> {
            (0..padded)
                .flat_map(|i| x.get(i).copied().unwrap_or(0).to_le_bytes())
                .collect()
        };
        let colsum = constant(cx, b, DType::I32, words(&self.colsum))?;
        let beta = match v.row_sums {
            true => Some(constant(cx, b, DType::I32, words(&self.beta))?),
            false => None,
        };
        let packed = constant(cx, b, DType::I32, self.packed)?;
        let alpha = shifted_zero_point(b, op, self.a_zp, v.a_signed)?;
        let m = product(b, lead);
        let call_args = QCall {
            a: flat_all(b, a),
            b: packed,
            colsum,
            beta,
            requant,
            c: flat_all(b, c),
            m,
            alpha,
        };
        call(b, &v, &call_args, super::with_vnni_level(cx));
        Ok(vec![c])
    }
}

/// An unsigned-side operand's zero point as i32 (0 when absent), +128
/// for an s8 operand (shifted to unsigned in the kernels).
pub(super) fn shifted_zero_point(
    b: &mut Builder<'_>,
    op: OpId,
    zp: Option<ValueId>,
    signed: bool,
) -> Result<ValueId> {
    let shift = b.const_int(if signed { 128 } else { 0 }, Type::i(32));
    let Some(z) = zp else {
        return Ok(shift);
    };
    let z = scalar_at(b, op, z, None, &Type::i(32))?;
    Ok(b.addi(z, shift))
}
