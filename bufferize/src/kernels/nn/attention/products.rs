//! Attention's two products on the packed GEMM (f32 and f64), one call
//! per image and query head: the scores `Q·Kᵀ` into a buffer of the
//! scores' shape, and `P·V` into Y. As loop nests, the products were
//! three quarters of an optimized BERT's time (a dot product per score,
//! carried from element to element).

use super::{Geo, Plan};
use crate::convert::{contiguous, dims};
use crate::kernels::linalg::gemm;
use crate::loops::{loop_nest_by_work, Bounds, GEMM_MIN_WORK};
use ir::{Builder, ValueId};

/// Whether the products run on the GEMM.
pub(super) fn on_gemm(elem: &ir::Type) -> bool {
    crate::kernels::linalg::matmul::gemm_elem(elem)
}

/// A contiguous buffer as the flat view the GEMM takes.
fn flat(b: &mut Builder<'_>, buf: ValueId) -> ValueId {
    let buf = contiguous(b, buf);
    let d = dims(b, buf);
    let len = crate::kernels::support::index::product(b, &d);
    gemm::flat(b, buf, len)
}

/// `body(n, h, kv_head)` for every image and query head, on threads
/// when the products `work` (the dims multiplied) are large enough.
fn per_head(
    b: &mut Builder<'_>,
    p: &Plan<'_>,
    work: &[ValueId],
    body: &mut dyn FnMut(&mut Builder<'_>, [ValueId; 3]),
) {
    let g = p.g;
    let bounds = Bounds::new(b);
    let heads = [g.batch, g.q_heads];
    loop_nest_by_work(b, &bounds, &heads, work, GEMM_MIN_WORK, &mut |b, ivs| {
        let kh = b.divui(ivs[1], p.group_v);
        body(b, [ivs[0], ivs[1], kh]);
    });
}

/// Where head `h`'s rows of a Q-shaped tensor start, and their stride:
/// `[b, s, heads · size]` (3-D) or `[b, heads, s, size]`.
fn head_rows(
    b: &mut Builder<'_>,
    g: &Geo,
    (n, h): (ValueId, ValueId),
    size: ValueId,
) -> [ValueId; 2] {
    let image = b.muli(n, g.q_heads);
    if g.rank3 {
        let hidden = b.muli(g.q_heads, size);
        let rows = b.muli(n, g.q_len);
        let at = b.muli(rows, hidden);
        let col = b.muli(h, size);
        [b.addi(at, col), hidden]
    } else {
        let head = b.addi(image, h);
        let rows = b.muli(head, g.q_len);
        [b.muli(rows, size), size]
    }
}

/// Where KV head `kh`'s `[total, size]` block of a present buffer starts.
fn kv_block(b: &mut Builder<'_>, g: &Geo, (n, kh): (ValueId, ValueId), size: ValueId) -> ValueId {
    let image = b.muli(n, g.kv_heads);
    let head = b.addi(image, kh);
    let rows = b.muli(head, g.total);
    b.muli(rows, size)
}

/// Where score row block `(n, h)` starts in a `[b, heads, q_len, total]`
/// buffer.
fn score_block(b: &mut Builder<'_>, g: &Geo, (n, h): (ValueId, ValueId)) -> ValueId {
    let image = b.muli(n, g.q_heads);
    let head = b.addi(image, h);
    let rows = b.muli(head, g.q_len);
    b.muli(rows, g.total)
}

/// `out[n, h, i, j] = Σ_d Q[n, h, i, d] · K[n, h / group, j, d]`,
/// unscaled.
pub(super) fn scores(b: &mut Builder<'_>, isa: gemm::Isa, p: &Plan<'_>, out: ValueId) {
    let g = p.g;
    let (q, k, c) = (flat(b, p.q), flat(b, p.pk), flat(b, out));
    let one = b.const_index(1);
    // B[d, j] = K[j, d]: columns a head size apart.
    let v = gemm::Variant {
        a_direct: true,
        ..gemm::Variant::plain(&p.elem, isa, gemm::BSource::Matrix { unit_n: false })
    };
    let work = [g.batch, g.q_heads, g.q_len, g.total, g.head];
    per_head(b, p, &work, &mut |b, [n, h, kh]| {
        let [a_off, a_rs] = head_rows(b, g, (n, h), g.head);
        let call = gemm::Call {
            a: q,
            a_off,
            a_rs,
            a_cs: one,
            b: k,
            b_off: kv_block(b, g, (n, kh), g.head),
            b_args: vec![one, g.head],
            c,
            c_off: score_block(b, g, (n, h)),
            ldc: g.total,
            bias: None,
            residual: None,
            m: g.q_len,
            n: g.total,
            k: g.head,
        };
        gemm::call(b, &v, &call);
    });
}

/// `y[n, h, i, :] = Σ_j P[n, h, i, j] · V[n, h / group, j, :]`, in the
/// layout of Q.
pub(super) fn weighted_values(b: &mut Builder<'_>, isa: gemm::Isa, p: &Plan<'_>, y: ValueId) {
    let g = p.g;
    let (pr, vv, c) = (flat(b, p.probs), flat(b, p.pv), flat(b, y));
    let one = b.const_index(1);
    let v = gemm::Variant {
        a_direct: true,
        ..gemm::Variant::plain(&p.elem, isa, gemm::BSource::Matrix { unit_n: true })
    };
    let work = [g.batch, g.q_heads, g.q_len, g.v_head, g.total];
    per_head(b, p, &work, &mut |b, [n, h, kh]| {
        let [c_off, ldc] = head_rows(b, g, (n, h), g.v_head);
        let call = gemm::Call {
            a: pr,
            a_off: score_block(b, g, (n, h)),
            a_rs: g.total,
            a_cs: one,
            b: vv,
            b_off: kv_block(b, g, (n, kh), g.v_head),
            b_args: vec![g.v_head, one],
            c,
            c_off,
            ldc,
            bias: None,
            residual: None,
            m: g.q_len,
            n: g.v_head,
            k: g.total,
        };
        gemm::call(b, &v, &call);
    });
}
