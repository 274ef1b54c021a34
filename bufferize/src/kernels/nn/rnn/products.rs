//! The gate products of a recurrent cell, `C = A · Wᵀ` against one
//! direction's rows of W or R: on the packed GEMM for f32 and f64
//! (constant weights packed at compile time, so a step of one sequence
//! reads its panels in place), else a loop nest.

use super::Ctx;
use crate::convert::Lowering;
use crate::kernels::linalg::gemm::{self, Variant};
use crate::kernels::{linalg::matmul::gemm_elem, support::packed_global, support::scalar};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::{Builder, OpId, ValueId};
use onnx::ops;

/// Rows `first..first + n` of direction `d` of a `[dirs, rows, k]` weight
/// tensor, used transposed: the B of `A · Wᵀ`.
pub(super) struct Weights {
    tensor: ValueId,
    d: ValueId,
    first: ValueId,
    n: ValueId,
    k: ValueId,
    gemm: Option<GemmB>,
}

/// How the GEMM reads the rows: packed panels or strides over the tensor.
struct GemmB {
    variant: Variant,
    buf: ValueId,
    off: ValueId,
    args: Vec<ValueId>,
}

/// Gates `gates.0 .. gates.0 + gates.1` of operand `input` (1: W, 2: R)
/// for direction `dir`.
pub(super) fn weights(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    c: &Ctx,
    (op, input): (OpId, usize),
    dir: usize,
    gates: (i64, i64),
) -> Weights {
    // W of each RNN kind
    let is_w = input == ops::RNN::W;
    let tensor = if is_w { c.w } else { c.r };
    let k = if is_w { c.input } else { c.hidden };
    let g0 = b.const_index(gates.0);
    let gn = b.const_index(gates.1);
    let mut w = Weights {
        tensor,
        d: b.const_index(dir as i64),
        first: b.muli(g0, c.hidden),
        n: b.muli(gn, c.hidden),
        k,
        gemm: None,
    };
    if gemm_elem(&c.elem) {
        let packed = packed(cx, b, c, (op, input), dir, gates);
        w.gemm = Some(packed.unwrap_or_else(|| strided(b, c, &w)));
    }
    w
}

/// The rows read in place, transposed by strides (packed per call).
fn strided(b: &mut Builder<'_>, c: &Ctx, w: &Weights) -> GemmB {
    let dims = crate::convert::dims(b, w.tensor);
    let len = crate::kernels::support::index::product(b, &dims);
    let rows = b.muli(w.d, dims[1]);
    let row = b.addi(rows, w.first);
    let mut variant = Variant::plain(&c.elem, c.gemm, unit_n(false));
    variant.a_direct = true;
    let one = b.const_index(1);
    GemmB {
        variant,
        buf: gemm::flat(b, w.tensor, len),
        off: b.muli(row, w.k),
        args: vec![one, w.k],
    }
}

fn unit_n(unit: bool) -> gemm::BSource {
    gemm::BSource::Matrix { unit_n: unit }
}

/// Constant weights of static shape, transposed and packed into the
/// GEMM's B panels at compile time.
fn packed(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    c: &Ctx,
    (op, input): (OpId, usize),
    dir: usize,
    (g0, gn): (i64, i64),
) -> Option<GemmB> {
    // W of each RNN kind
    let shape =
        crate::kernels::support::shape_of(b.m, if input == ops::RNN::W { c.w } else { c.r });
    let [_, rows, k] = shape[..] else { return None };
    if rows == ir::DYN || k == ir::DYN || rows % c.cell.gates() != 0 {
        return None;
    }
    let hidden = rows / c.cell.gates();
    let (rows, k) = (usize::try_from(rows).ok()?, usize::try_from(k).ok()?);
    let first = usize::try_from(g0 * hidden).ok()? + dir * rows;
    let n = usize::try_from(gn * hidden).ok()?;
    let weights = crate::kernels::support::constant_elements(b.m, op, input)?;
    let dtype = ir::elements::DType::from_type(&c.elem)?;
    if weights.dtype() != dtype || weights.len() < (first + n) * k {
        return None;
    }
    let mut variant = Variant::plain(&c.elem, c.gemm, unit_n(true));
    variant.a_direct = true;
    variant.b_packed = true;
    let width = dtype.storage_bytes(1)?;
    let layout = gemm::PackedB::new(width, (k, n), variant.blocking)?;
    let source = (weights, layout.elements());
    let (global, len) = packed_global(cx, b, source, move |w, out| {
        let t = transpose_rows(w, width, (first, n), k);
        layout.pack(&t, out)
    })?;
    let len = b.const_index(len);
    Some(GemmB {
        variant,
        buf: gemm::flat(b, global, len),
        off: b.const_index(0),
        args: vec![
            b.const_index(i64::try_from(layout.npad).ok()?),
            b.const_index(1),
        ],
    })
}

/// Rows `first..first + n` of a row-major `[_, k]` matrix of `width`-byte
/// elements as a `[k, n]` matrix.
fn transpose_rows(src: &[u8], width: usize, (first, n): (usize, usize), k: usize) -> Vec<u8> {
    let mut out = vec![0u8; k * n * width];
    for j in 0..n {
        let row = (first + j) * k * width;
        let Some(src_row) = src.get(row..row + k * width) else {
            continue;
        };
        for (kk, e) in src_row.chunks_exact(width).enumerate() {
            let at = (kk * n + j) * width;
            if let Some(o) = out.get_mut(at..at + width) {
                o.copy_from_slice(e);
            }
        }
    }
    out
}

/// `C[c_off + m·ldc + n] = Σ_k A[m·K + k] · W[n, k]` for `m < rows`: A and
/// C are flat views.
pub(super) struct Product {
    pub a: ValueId,
    pub rows: ValueId,
    pub c: ValueId,
    pub c_off: ValueId,
    pub ldc: ValueId,
}

pub(super) fn multiply(b: &mut Builder<'_>, c: &Ctx, w: &Weights, p: &Product) {
    let Some(g) = &w.gemm else {
        return multiply_nest(b, c, w, p);
    };
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let call = gemm::Call {
        a: p.a,
        a_off: zero,
        a_rs: w.k,
        a_cs: one,
        b: g.buf,
        b_off: g.off,
        b_args: g.args.clone(),
        c: p.c,
        c_off: p.c_off,
        ldc: p.ldc,
        bias: None,
        residual: None,
        m: p.rows,
        n: w.n,
        k: w.k,
    };
    gemm::call(b, &g.variant, &call);
}

/// The product as a loop nest, summed in f32 for narrower floats.
fn multiply_nest(b: &mut Builder<'_>, c: &Ctx, w: &Weights, p: &Product) {
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &[p.rows, w.n], &mut |b, ivs| {
        let (m, n) = (ivs[0], ivs[1]);
        let row = b.addi(w.first, n);
        let a_row = b.muli(m, w.k);
        let init = b.zero(&scalar::acc_type(&c.elem));
        let sum = reduce_nest(b, &bounds, &[w.k], init, &mut |b, k, acc| {
            let at = b.addi(a_row, k[0]);
            let x = b.load(p.a, &[at]);
            let y = b.load(w.tensor, &[w.d, row, k[0]]);
            scalar::mul_acc(b, acc, x, y)
        });
        let sum = scalar::fcast(b, sum, &c.elem);
        let c_row = b.muli(m, p.ldc);
        let at = b.addi(p.c_off, c_row);
        let at = b.addi(at, n);
        b.store(sum, p.c, &[at]);
    });
}
