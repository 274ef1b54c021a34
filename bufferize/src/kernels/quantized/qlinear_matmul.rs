//! QLinearMatMul: on the int8 GEMM when its operands qualify
//! (`qgemm::ops`), else as a batched dot of the dequantized operands.

use crate::convert::Lowering;
use crate::kernels::support::scalar;
use crate::kernels::{support::shape_of, support::store_converted};
use ir::builder::is_unsigned;
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

pub fn qlinear_matmul(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    if let Some(r) = crate::kernels::quantized::qgemm::ops::qlinear_matmul(cx, b, op)? {
        return Ok(r);
    }
    let ins: Vec<ValueId> = (0..8)
        .map(|i| cx.input(b.m, op, i))
        .collect::<Result<_>>()?;
    let (a, bm) = (ins[ops::QLinearMatMul::A], ins[ops::QLinearMatMul::B]);
    for &p in &[
        ins[ops::QLinearMatMul::A_SCALE],
        ins[ops::QLinearMatMul::A_ZERO_POINT],
        ins[ops::QLinearMatMul::B_SCALE],
        ins[ops::QLinearMatMul::B_ZERO_POINT],
        ins[ops::QLinearMatMul::Y_SCALE],
        ins[ops::QLinearMatMul::Y_ZERO_POINT],
    ] {
        if shape_of(b.m, p).iter().product::<i64>() != 1 {
            return Err(op_error(b.m, op, "per-axis QLinearMatMul is not supported"));
        }
    }
    let yt = crate::kernels::support::result_memref_type(b.m, op, 0)?
        .element_type()
        .clone();
    let (as_, az, bs, bz, ys, yz) = (
        crate::kernels::support::scalar_at(
            b,
            op,
            ins[ops::QLinearMatMul::A_SCALE],
            None,
            &Type::f64(),
        )?,
        crate::kernels::support::scalar_at(
            b,
            op,
            ins[ops::QLinearMatMul::A_ZERO_POINT],
            None,
            &Type::f64(),
        )?,
        crate::kernels::support::scalar_at(
            b,
            op,
            ins[ops::QLinearMatMul::B_SCALE],
            None,
            &Type::f64(),
        )?,
        crate::kernels::support::scalar_at(
            b,
            op,
            ins[ops::QLinearMatMul::B_ZERO_POINT],
            None,
            &Type::f64(),
        )?,
        crate::kernels::support::scalar_at(
            b,
            op,
            ins[ops::QLinearMatMul::Y_SCALE],
            None,
            &Type::f64(),
        )?,
        crate::kernels::support::scalar_at(
            b,
            op,
            ins[ops::QLinearMatMul::Y_ZERO_POINT],
            None,
            &Type::f64(),
        )?,
    );
    let f = Type::f64();
    let mult = b.mul(as_, bs);
    let mult = b.div(mult, ys);
    let Some((lo, hi)) = yt.int_width().map(|w| {
        if is_unsigned(&yt) {
            (0.0, ((1u64 << w) - 1) as f64)
        } else {
            (-((1i64 << (w - 1)) as f64), ((1i64 << (w - 1)) - 1) as f64)
        }
    }) else {
        return Err(op_error(b.m, op, "expects an integer output"));
    };
    let zero = b.constant(&f, 0.0);
    crate::kernels::quantized::integer::batched_dot(
        b,
        op,
        (a, bm),
        zero,
        &mut |b, av, bv, _, _| {
            let x = scalar::convert(b, op, av, &f)?;
            let y = scalar::convert(b, op, bv, &f)?;
            let x = b.sub(x, az);
            let y = b.sub(y, bz);
            Ok(b.mul(x, y))
        },
        &mut |b, s, out, ivs, err| {
            let v = b.mul(s, mult);
            let v = b.roundeven(v);
            let v = b.add(v, yz);
            let (l, h) = (b.constant(&f, lo), b.constant(&f, hi));
            let v = b.max(v, l);
            let v = b.min(v, h);
            store_converted(b, op, v, &yt, out, ivs, err);
        },
    )
}
