//! BitCast (same element width), the Hann/Hamming/Blackman windows and
//! CenterCropPad.

use crate::convert::{dims, Lowering};
use crate::kernels::support::index::{from_index, to_index};
use crate::kernels::{
    support::alloc_result, support::elem_of, support::finish, support::shape_of,
    support::store_converted,
};
use crate::loops::{loop_nest, Bounds};
use ir::builder::CmpI;
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

/// The generalized cosine windows.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Window {
    Hann,
    Hamming,
    Blackman,
}

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

pub fn window(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kind: Window,
) -> Result<Vec<ValueId>> {
    // size of each window kind
    let s = cx.input(b.m, op, ops::HannWindow::SIZE)?;
    let r = shape_of(b.m, s).len();
    let zero_idx: Vec<ValueId> = (0..r).map(|_| b.const_index(0)).collect();
    let n = b.load(s, &zero_idx);
    let n = to_index(b, n);
    let periodic = match kind {
        Window::Hann => ops::HannWindow::of(b.m, op).periodic(),
        Window::Hamming => ops::HammingWindow::of(b.m, op).periodic(),
        Window::Blackman => ops::BlackmanWindow::of(b.m, op).periodic(),
    } != 0;
    let out = alloc_result(b, op, 0, &[n])?;
    let elem = crate::kernels::support::result_memref_type(b.m, op, 0)?
        .element_type()
        .clone();
    let f = Type::f64();
    let nf = from_index(b, n, &f);
    let one = b.constant(&f, 1.0);
    let den = if periodic { nf } else { b.sub(nf, one) };
    let bounds = Bounds::new(b);
    let mut err = None;
    loop_nest(b, &bounds, &[n], &mut |b, ivs| {
        let k = from_index(b, ivs[0], &f);
        let tau = b.constant(&f, 2.0 * std::f64::consts::PI);
        let a = b.mul(tau, k);
        let a = b.div(a, den);
        let c1 = b.cos(a);
        let v = match kind {
            Window::Hann | Window::Hamming => {
                let (a0, a1) = if kind == Window::Hann {
                    (0.5, 0.5)
                } else {
                    (25.0 / 46.0, 21.0 / 46.0)
                };
                let (a0, a1) = (b.constant(&f, a0), b.constant(&f, a1));
                let t = b.mul(a1, c1);
                b.sub(a0, t)
            }
            Window::Blackman => {
                let two = b.constant(&f, 2.0);
                let a2 = b.mul(two, a);
                let c2 = b.cos(a2);
                let (a0, a1, a2c) = (
                    b.constant(&f, 0.42),
                    b.constant(&f, 0.5),
                    b.constant(&f, 0.08),
                );
                let t1 = b.mul(a1, c1);
                let t2 = b.mul(a2c, c2);
                let v = b.sub(a0, t1);
                b.add(v, t2)
            }
        };
        store_converted(b, op, v, &elem, out, ivs, &mut err);
    });
    finish(err, vec![out])
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
