//! ConvInteger and QLinearConv onto the int8 convolution: which operands
//! it takes (constant 8-bit weights, per-tensor or per-channel zero points
//! and scales) and what the function is passed.

use super::super::{flat_all, QOut, Slots};
use super::{call, pack_weights, Packed, QConvCall, QConvVariant};
use crate::convert::{contiguous, dims, Lowering};
use crate::kernels::convolution::window::{Spatial, WindowAttrs};
use crate::kernels::linalg::gemm::ConvGeometry;
use crate::kernels::{
    support::alloc_result, support::checks, support::constant_elements, support::shape_of,
};
use ir::elements::DType;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::{ops, OpKind};

const CONV_INTEGER: Slots = Slots {
    data: ops::ConvInteger::X,
    data_zp: ops::ConvInteger::X_ZERO_POINT,
    weights: ops::ConvInteger::W,
    weights_zp: ops::ConvInteger::W_ZERO_POINT,
};
const QLINEAR_CONV: Slots = Slots {
    data: ops::QLinearConv::X,
    data_zp: ops::QLinearConv::X_ZERO_POINT,
    weights: ops::QLinearConv::W,
    weights_zp: ops::QLinearConv::W_ZERO_POINT,
};

/// ConvInteger with constant 8-bit weights; `None` otherwise.
pub fn conv_integer(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
) -> Result<Option<Vec<ValueId>>> {
    let Some(plan) = Plan::new(cx, b, op, &CONV_INTEGER)? else {
        return Ok(None);
    };
    plan.emit(cx, b, op, QOut::I32, &CONV_INTEGER).map(Some)
}

/// QLinearConv with constant 8-bit weights and per-tensor or per-channel
/// weight scales; `None` otherwise.
pub fn qlinear_conv(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
) -> Result<Option<Vec<ValueId>>> {
    let elem = crate::kernels::support::result_memref_type(b.m, op, 0)?
        .element_type()
        .clone();
    let scalars_ok = [
        ops::QLinearConv::X_SCALE,
        ops::QLinearConv::Y_SCALE,
        ops::QLinearConv::Y_ZERO_POINT,
    ]
    .iter()
    .all(|&i| super::super::ops::single(b.m, cx.input(b.m, op, i).ok()));
    let ws = constant_elements(b.m, op, ops::QLinearConv::W_SCALE);
    let (Some(ws), true, Some(8)) = (ws, scalars_ok, elem.int_width()) else {
        return Ok(None);
    };
    let Some(mut plan) = Plan::new(cx, b, op, &QLINEAR_CONV)? else {
        return Ok(None);
    };
    let m = plan.v.groups * plan.v.mg;
    let ws: Vec<f64> = ws.iter().map(|w| w.f64()).collect();
    let Some(ws) = super::super::ops::per_column(&ws, m) else {
        return Ok(None);
    };
    let bytes: Vec<u8> = ws.iter().flat_map(|&x| (x as f32).to_le_bytes()).collect();
    let ws = super::super::ops::constant(cx, b, DType::F32, bytes)?;
    let mut scalars = [ws; 3];
    for (s, i) in scalars.iter_mut().zip([
        ops::QLinearConv::X_SCALE,
        ops::QLinearConv::Y_SCALE,
        ops::QLinearConv::Y_ZERO_POINT,
    ]) {
        let x = cx.input(b.m, op, i)?;
        *s = crate::kernels::support::scalar_at(b, op, x, None, &Type::f32())?;
    }
    plan.requant = Some((ws, scalars));
    if cx.has_input(b.m, op, ops::QLinearConv::B) {
        let bias = contiguous(b, cx.input(b.m, op, ops::QLinearConv::B)?);
        plan.bias = Some(flat_all(b, bias));
        plan.v.bias = true;
    }
    plan.emit(cx, b, op, QOut::Requant { elem }, &QLINEAR_CONV)
        .map(Some)
}

/// The group count and the window of the constant weights' kernel, when
/// `kernel_shape` (if given) agrees with it.
fn window(m: &ir::Module, op: OpId, s: &Slots) -> Result<Option<(i64, Spatial)>> {
    let (group, kernel_attr, attrs): (_, _, WindowAttrs<'_>) =
        if OpKind::of(m, op) == Some(OpKind::QLinearConv) {
            let a = ops::QLinearConv::of(m, op);
            (a.group(), a.kernel_shape(), a.into())
        } else {
            let a = ops::ConvInteger::of(m, op);
            (a.group(), a.kernel_shape(), a.into())
        };
    let Some(w) = constant_elements(m, op, s.weights) else {
        return Ok(None);
    };
    let kernel = w.shape().get(2..).unwrap_or(&[]).to_vec();
    if kernel.is_empty() || kernel_attr.is_some_and(|k| k != kernel) {
        return Ok(None);
    }
    Ok(Some((group, Spatial::new(m, op, kernel, attrs)?)))
}

/// What the function needs of the op.
struct Plan {
    v: QConvVariant,
    spatial: Spatial,
    packed: Packed,
    bias: Option<ValueId>,
    requant: Option<(ValueId, [ValueId; 3])>,
}

impl Plan {
    fn new(cx: &Lowering, b: &mut Builder<'_>, op: OpId, s: &Slots) -> Result<Option<Plan>> {
        let Some((group, spatial)) = window(b.m, op, s)? else {
            return Ok(None);
        };
        let x = cx.input(b.m, op, s.data)?;
        let x_elem = b.m.value_type(x).element_type().clone();
        let Some(w) = constant_elements(b.m, op, s.weights) else {
            return Ok(None);
        };
        let ws = w.shape().to_vec();
        let x_zp = cx.optional_input(b.m, op, s.data_zp)?;
        let ok = matches!(w.dtype(), DType::I8 | DType::U8)
            && (x_elem == Type::i(8) || x_elem == Type::ui(8))
            && ws.len() >= 3
            && shape_of(b.m, x).len() == ws.len()
            && group >= 1
            && ws[0] % group == 0
            && x_zp.is_none_or(|z| super::super::ops::single(b.m, Some(z)));
        if !ok {
            return Ok(None);
        }
        let wz = match constant_elements(b.m, op, s.weights_zp) {
            Some(z) => z.iter().map(|x| x.i64()).collect(),
            None if cx.has_input(b.m, op, s.weights_zp) => return Ok(None),
            None => vec![0],
        };
        let Some(wz) = super::super::ops::per_column(&wz, ws[0]) else {
            return Ok(None);
        };
        let bits = cx.vector_bits;
        let mut v = QConvVariant {
            geometry: ConvGeometry {
                kernel: ws[2..].to_vec(),
                strides: spatial.strides.clone(),
                dilations: spatial.dilations.clone(),
            },
            groups: group,
            cg: ws[1],
            mg: ws[0] / group,
            x_elem,
            col_sums: false,
            bias: false,
            out: QOut::I32,
            vw: i64::from(bits / 32).max(4),
            // Groups of few outputs (depthwise: one) take that many rows.
            mr: (if bits >= 512 { 8 } else { 4 }).min(ws[0] / group),
            nv: if bits >= 512 { 3 } else { 2 },
            vnni: cx.int8_dot,
        };
        let w_signed = w.dtype() == DType::I8;
        let Some(packed) = pack_weights(&w.to_contiguous_bytes(), w_signed, &wz, &v) else {
            return Ok(None);
        };
        v.col_sums = packed.alpha.iter().any(|&a| a != 0);
        Ok(Some(Plan {
            v,
            spatial,
            packed,
            bias: None,
            requant: None,
        }))
    }

    fn emit(
        self,
        cx: &mut Lowering,
        b: &mut Builder<'_>,
        op: OpId,
        out: QOut,
        s: &Slots,
    ) -> Result<Vec<ValueId>> {
        let mut v = self.v;
        v.out = out;
        let x = contiguous(b, cx.input(b.m, op, s.data)?);
        let dx = dims(b, x);
        let c = b.const_index(v.groups * v.cg);
        checks::equal(
            b,
            op,
            dx[1],
            c,
            "the input's channels differ from the weight's",
        )?;
        let place = self.spatial.runtime(b, &dx[2..]);
        let mut od = vec![dx[0], b.const_index(v.groups * v.mg)];
        od.extend(&place.outs);
        let y = alloc_result(b, op, 0, &od)?;
        let words = |x: &[i32]| -> Vec<u8> { x.iter().flat_map(|w| w.to_le_bytes()).collect() };
        let rowfix = super::super::ops::constant(cx, b, DType::I32, words(&self.packed.rowfix))?;
        let alpha = match v.col_sums {
            true => Some(super::super::ops::constant(
                cx,
                b,
                DType::I32,
                words(&self.packed.alpha),
            )?),
            false => None,
        };
        let w = super::super::ops::constant(cx, b, DType::I32, self.packed.words)?;
        let x_zp = cx.optional_input(b.m, op, s.data_zp)?;
        let beta = super::super::ops::shifted_zero_point(b, op, x_zp, v.x_signed())?;
        let mut geometry = place.ins.clone();
        geometry.extend(&place.outs);
        geometry.extend(&place.begins);
        let c = QConvCall {
            x: flat_all(b, x),
            w,
            rowfix,
            alpha,
            bias: self.bias,
            requant: self.requant,
            y: flat_all(b, y),
            batch: dx[0],
            geometry,
            beta,
        };
        call(b, &v, &c, super::super::with_vnni_level(cx));
        Ok(vec![y])
    }
}
