//! BitCast (same element width) and CenterCropPad.

use crate::convert::{dims, Lowering};
use crate::kernels::{support::alloc_result, support::elem_of, support::shape_of};
use crate::loops::{loop_nest, Bounds};
use ir::builder::CmpI;
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

pub fn bitcast(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::BitCast::INPUT)?;
    let from = elem_of(b.m, x);
    let to = crate::kernels::support::result_memref_type(b.m, op, 0)?
        .element_type()
        .clone();
    let (fw, tw) = (from.bit_width(), to.bit_width());
    // bool is stored as one byte holding 0 or 1; 4- and 2-bit values are
    // values of their width (a byte each in memory).
    let from_bool = fw == Some(1) && tw == Some(8);
    if !from_bool && (fw != tw || fw.is_none_or(|w| w < 2)) {
        return Err(op_error(
            b.m,
            op,
            "BitCast between element sizes is not supported",
        ));
    }
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let v = b.load(x, ivs);
        let r = if from == to {
            v
        } else if from_bool {
            b.extui(v, to.clone())
        } else {
            b.bitcast(v, to.clone())
        };
        b.store(r, out, ivs);
    });
    Ok(vec![out])
}

/// CenterCropPad: each listed axis is cropped or zero-padded around its
/// center (the extra element goes to the end).
pub fn center_crop_pad(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::CenterCropPad::INPUT_DATA)?;
    let s = cx.input(b.m, op, ops::CenterCropPad::SHAPE)?;
    let rank = shape_of(b.m, x).len();
    let axes: Vec<usize> = match ops::CenterCropPad::of(b.m, op).axes() {
        Some(a) => a
            .iter()
            .map(|&v| crate::kernels::support::axis(b.m, op, v, rank))
            .collect::<Result<_>>()?,
        None => (0..rank).collect(),
    };
    let dx = dims(b, x);
    let mut od = dx.clone();
    for (j, &d) in axes.iter().enumerate() {
        od[d] = crate::kernels::support::index::index_at(b, s, Some(j as i64));
    }
    let out = alloc_result(b, op, 0, &od)?;
    let bounds = Bounds::new(b);
    let two = b.const_index(2);
    // Source offset per dim: +⌊(in-out)/2⌋ when cropping, -⌊(out-in)/2⌋ when padding.
    let offs: Vec<ValueId> = (0..rank)
        .map(|d| {
            let crop = b.subi(dx[d], od[d]);
            let pad = b.subi(od[d], dx[d]);
            let c = b.divsi(crop, two);
            let p = b.divsi(pad, two);
            let np = b.subi(bounds.zero, p);
            let ge = b.cmpi(CmpI::Sge, dx[d], od[d]);
            b.select(ge, c, np)
        })
        .collect();
    let elem = elem_of(b.m, x);
    let zero = if elem == Type::i1() {
        b.const_bool(false)
    } else {
        b.constant(&elem, 0.0)
    };
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let mut inside = b.const_bool(true);
        let mut idx = Vec::with_capacity(rank);
        for d in 0..rank {
            let i = b.addi(ivs[d], offs[d]);
            let ge = b.cmpi(CmpI::Sge, i, bounds.zero);
            let lt = b.cmpi(CmpI::Slt, i, dx[d]);
            let ok = b.andi(ge, lt);
            inside = b.andi(inside, ok);
            idx.push(b.select(ok, i, bounds.zero));
        }
        let v = b.load(x, &idx);
        let r = b.select(inside, v, zero);
        b.store(r, out, ivs);
    });
    Ok(vec![out])
}
