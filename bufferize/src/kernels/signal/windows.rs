//! The generalized cosine windows: HannWindow, HammingWindow and
//! BlackmanWindow.

use crate::convert::Lowering;
use crate::kernels::support::index::{from_index, to_index};
use crate::kernels::{
    support::alloc_result, support::finish, support::shape_of, support::store_converted,
};
use crate::loops::{loop_nest, Bounds};
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

/// The generalized cosine windows.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Window {
    Hann,
    Hamming,
    Blackman,
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
