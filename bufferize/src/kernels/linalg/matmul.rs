//! MatMul (batched, broadcast, 1-D operands) and Gemm as reduction nests.

use crate::convert::{contiguous, dims, Lowering};
use crate::kernels::linalg::gemm;
use crate::kernels::support::checks;
use crate::kernels::support::scalar;
use crate::kernels::{support::alloc_result, support::elem_of, support::shape_of};
use crate::loops::{loop_nest, loop_nest_by_work, reduce_nest, Bounds, GEMM_MIN_WORK};
use ir::builder::Cmp;
use ir::dialects::op_error;
use ir::{Builder, Module, OpId, Result, Type, ValueId};
use onnx::{ops, OpKind};

/// Batch indices of an operand: its leading dims aligned right to the
/// output's batch dims, broadcast (size-1) dims pinned to 0; `is1[k]` is
/// the runtime test of a dynamic dim that may broadcast.
fn batch_index(
    b: &mut Builder<'_>,
    shape: &[i64],
    is1: &[Option<ValueId>],
    out_batch: &[i64],
    ivs: &[ValueId],
    zero: ValueId,
) -> Vec<ValueId> {
    let off = out_batch.len() - is1.len();
    (0..is1.len())
        .map(|k| match is1[k] {
            Some(c) => b.select(c, zero, ivs[k + off]),
            None if shape[k] == 1 && out_batch[k + off] != 1 => zero,
            None => ivs[k + off],
        })
        .collect()
}

/// The MatMul that computes a Transpose folded into its operands (the last
/// of them in program order), when every use of the Transpose is an
/// operand of a MatMul on the packed GEMM: the GEMM then reads the
/// Transpose's input through permuted strides and no copy is made.
pub fn transpose_deferrable(cx: &Lowering, m: &Module, op: OpId) -> Option<(OpId, u32)> {
    if !onnx::is(m, op, OpKind::Transpose) {
        return None;
    }
    let r = m.result(op, 0)?;
    let uses = m.uses(r);
    let mut last: Option<OpId> = None;
    for u in uses {
        let user = u.op;
        let operands_are_matrices = m
            .operands(user)
            .iter()
            .all(|&v| m.value_type(v).shape().is_some_and(|s| s.len() >= 2));
        let folds = onnx::is(m, user, OpKind::MatMul)
            && u.index < 2
            && m.op_block(user) == m.op_block(op)
            && gemm_elem(m.value_type(r).element_type())
            && operands_are_matrices;
        if !folds {
            return None;
        }
        if last.is_none_or(|l| cx.position(user) > cx.position(l)) {
            last = Some(user);
        }
    }
    Some((last?, 1))
}

/// A MatMul operand as the GEMM reads it: `x[i] = buf[Σ i_d · strides[d]]`.
/// For a folded Transpose, `buf` is the Transpose's input and the dims and
/// strides are its own, permuted.
struct Operand {
    buf: ValueId,
    /// The permutation that reads `buf`, when it is a folded Transpose's
    /// input (`x[i] = buf[j]` with `j[perm[d]] = i[d]`).
    perm: Option<Vec<usize>>,
    shape: Vec<i64>,
    dims: Vec<ValueId>,
    strides: Vec<ValueId>,
    /// The last dim is read at unit stride.
    unit_last: bool,
}

/// A buffer read as a GEMM operand through `order` of its dims (`None`:
/// a dim of 1 it lacks): an einsum term as `[batch…, rows, cols]`.
pub(crate) struct View {
    pub buf: ValueId,
    pub order: Vec<Option<usize>>,
}

impl Operand {
    fn of(cx: &Lowering, b: &mut Builder<'_>, op: OpId, i: usize) -> Result<Operand> {
        let folded =
            b.m.operand(op, i)
                .and_then(|v| b.m.defining_op(v))
                .filter(|&t| cx.is_deferred(t) && onnx::is(b.m, t, OpKind::Transpose));
        let (buf, perm) = match folded {
            Some(t) => {
                // The blocked GEMM wants a plain buffer to stride through.
                let y = contiguous(b, cx.input(b.m, t, ops::Transpose::DATA)?);
                let perm =
                    crate::kernels::support::views::transpose_perm(b.m, t, shape_of(b.m, y).len())?;
                (y, Some(perm))
            }
            None => (contiguous(b, cx.input(b.m, op, i)?), None),
        };
        Ok(Operand::permuted(b, buf, perm))
    }

    /// The operand `x` with `x[i] = buf[j]`, `j[perm[d]] = i[d]` (a
    /// Transpose of `buf` by `perm`).
    fn permuted(b: &mut Builder<'_>, buf: ValueId, perm: Option<Vec<usize>>) -> Operand {
        let own_shape = shape_of(b.m, buf);
        let own_dims = dims(b, buf);
        let own_strides: Vec<ValueId> = (0..own_dims.len())
            .map(|d| product(b, &own_dims[d + 1..]))
            .collect();
        let order: Vec<usize> = perm
            .clone()
            .unwrap_or_else(|| (0..own_dims.len()).collect());
        Operand {
            buf,
            shape: order.iter().map(|&p| own_shape[p]).collect(),
            dims: order.iter().map(|&p| own_dims[p]).collect(),
            strides: order.iter().map(|&p| own_strides[p]).collect(),
            unit_last: order.last() == own_dims.len().checked_sub(1).as_ref(),
            perm,
        }
    }

    /// An einsum view, read by the GEMM only: `perm` marks it as not the
    /// buffer itself unless `order` is the identity.
    fn view(b: &mut Builder<'_>, v: &View) -> Operand {
        let own = Operand::permuted(b, v.buf, None);
        let one = b.const_index(1);
        let pick =
            |p: Option<usize>, of: &[ValueId]| p.and_then(|p| of.get(p).copied()).unwrap_or(one);
        let identity = v.order.iter().enumerate().all(|(i, &p)| p == Some(i))
            && v.order.len() == own.dims.len();
        Operand {
            buf: v.buf,
            shape: v
                .order
                .iter()
                .map(|&p| p.and_then(|p| own.shape.get(p).copied()).unwrap_or(1))
                .collect(),
            dims: v.order.iter().map(|&p| pick(p, &own.dims)).collect(),
            strides: v.order.iter().map(|&p| pick(p, &own.strides)).collect(),
            unit_last: match v.order.last() {
                Some(&Some(p)) => p + 1 == own.dims.len(),
                _ => true,
            },
            perm: (!identity).then(|| v.order.iter().flatten().copied().collect()),
        }
    }

    /// The index of `buf` that holds element `idx` of the operand.
    fn index(&self, idx: Vec<ValueId>) -> Vec<ValueId> {
        match &self.perm {
            None => idx,
            Some(perm) => {
                let mut j = idx.clone();
                for (d, &p) in perm.iter().enumerate() {
                    j[p] = idx[d];
                }
                j
            }
        }
    }

    /// Whether the last dim is read at unit stride.
    fn unit_last(&self) -> bool {
        self.unit_last
    }
}

pub fn matmul(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let oa = Operand::of(cx, b, op, ops::MatMul::A)?;
    let ob = Operand::of(cx, b, op, ops::MatMul::B)?;
    let (a, w) = (oa.buf, ob.buf);
    let (sa, sb) = (oa.shape.clone(), ob.shape.clone());
    if sa.is_empty() || sb.is_empty() {
        return Err(op_error(b.m, op, "MatMul operands must have rank >= 1"));
    }
    let out_ty = crate::kernels::support::result_memref_type(b.m, op, 0)?;
    let out_shape = out_ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    let (a_vec, b_vec) = (sa.len() == 1, sb.len() == 1);
    let mat_dims = usize::from(!a_vec) + usize::from(!b_vec);
    let Some(batch_rank) = out_shape.len().checked_sub(mat_dims) else {
        return Err(op_error(b.m, op, "inconsistent MatMul result rank"));
    };
    let out_batch = out_shape[..batch_rank].to_vec();
    let (a_batch, b_batch) = (sa.len().saturating_sub(2), sb.len().saturating_sub(2));
    let da = oa.dims.clone();
    let db = ob.dims.clone();
    let k_dim = da[da.len() - 1];
    // Output batch dims: the operands' dims folded with "1 broadcasts".
    let one = b.const_index(1);
    let mut out_dims = Vec::new();
    // The operand a dynamic output dim starts from (its check always holds).
    let mut lead = vec![None; batch_rank];
    if a_batch > batch_rank || b_batch > batch_rank {
        return Err(op_error(b.m, op, "inconsistent MatMul batch ranks"));
    }
    for (j, &od) in out_batch.iter().enumerate() {
        if od != ir::DYN {
            out_dims.push(b.const_index(od));
            continue;
        }
        let ds: Vec<(usize, ValueId)> = [(&sa, &da, a_batch), (&sb, &db, b_batch)]
            .into_iter()
            .enumerate()
            .filter_map(|(i, (s, d, n))| {
                let k = (j + n).checked_sub(batch_rank)?;
                (s[k] != 1).then(|| (i, d[k]))
            })
            .collect();
        let (o, l) = checks::broadcast_dim(b, &ds);
        out_dims.push(o);
        lead[j] = l;
    }
    let k_b = if b_vec { db[0] } else { db[db.len() - 2] };
    checks::equal(b, op, k_dim, k_b, "the inner dims of A and B differ")?;
    let mut is1 = [Vec::new(), Vec::new()];
    for (i, (s, d, n)) in [(&sa, &da, a_batch), (&sb, &db, b_batch)]
        .into_iter()
        .enumerate()
    {
        for k in 0..n {
            let j = k + batch_rank - n;
            if lead[j] != Some(i) {
                let msg = checks::broadcast_msg(i, k);
                checks::broadcasts(b, op, d[k], out_dims[j], &msg)?;
            }
            let dynamic = s[k] == ir::DYN;
            is1[i].push(dynamic.then(|| b.cmp(Cmp::Eq, d[k], one)));
        }
    }
    if !a_vec {
        out_dims.push(da[da.len() - 2]);
    }
    if !b_vec {
        out_dims.push(db[db.len() - 1]);
    }
    let c = result_buffer(cx, b, op, &out_dims)?;
    let out = c.buf;
    let elem = elem_of(b.m, out);
    if gemm_elem(&elem) {
        let operands = MatMulOperands {
            a: &oa,
            w: &ob,
            c: &c,
            out_dims: &out_dims,
            batch_rank,
            is1: &is1,
            weights_op: Some(op),
        };
        gemm_matmul(cx, b, &operands, &elem);
        return Ok(vec![out]);
    }
    let bounds = Bounds::new(b);
    let zero = bounds.zero;
    let mut work = out_dims.clone();
    work.push(da[da.len() - 1]);
    loop_nest_by_work(
        b,
        &bounds,
        &out_dims,
        &work,
        GEMM_MIN_WORK,
        &mut |b, ivs| {
            let i = (!a_vec).then(|| ivs[batch_rank]);
            let j = (!b_vec).then(|| ivs[ivs.len() - 1]);
            let mut ai = batch_index(b, &sa, &is1[0], &out_batch, ivs, zero);
            let mut bi = batch_index(b, &sb, &is1[1], &out_batch, ivs, zero);
            let init = b.zero(&scalar::acc_type(&elem));
            let sum = reduce_nest(b, &bounds, &[k_dim], init, &mut |b, k, acc| {
                let mut aidx = ai.clone();
                aidx.extend(i);
                aidx.push(k[0]);
                let mut bidx = bi.clone();
                bidx.push(k[0]);
                bidx.extend(j);
                let x = b.load(a, &oa.index(aidx));
                let y = b.load(w, &ob.index(bidx));
                scalar::mul_acc(b, acc, x, y)
            });
            let sum = scalar::fcast(b, sum, &elem);
            ai.clear();
            bi.clear();
            b.store(sum, out, &c.index(ivs.to_vec()));
        },
    );
    Ok(vec![out])
}

/// An einsum contraction (`einsum.rs`) on the batched GEMM: the views
/// A `[batch…, m, k]`, B `[batch…, k, n]` and C `[batch…, m, n]` of
/// output dims `out_dims`. A batch dim of 1 broadcasts; the depths must
/// agree.
pub(crate) fn einsum_product(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    [a, w, c]: [&View; 3],
    out_dims: &[ValueId],
) -> Result<()> {
    let (a, w, c) = (
        Operand::view(b, a),
        Operand::view(b, w),
        Operand::view(b, c),
    );
    let batch_rank = out_dims.len().saturating_sub(2);
    let one = b.const_index(1);
    let mut is1 = [Vec::new(), Vec::new()];
    for (i, x) in [&a, &w].into_iter().enumerate() {
        for (j, &out) in out_dims.iter().enumerate().take(batch_rank) {
            checks::broadcasts(b, op, x.dims[j], out, &checks::broadcast_msg(i, j))?;
            let dynamic = x.shape[j] == ir::DYN;
            is1[i].push(dynamic.then(|| b.cmp(Cmp::Eq, x.dims[j], one)));
        }
    }
    let (ka, kb) = (a.dims[batch_rank + 1], w.dims[batch_rank]);
    checks::equal(b, op, ka, kb, "a summed label's dims differ")?;
    let elem = elem_of(b.m, c.buf);
    let operands = MatMulOperands {
        a: &a,
        w: &w,
        c: &c,
        out_dims,
        batch_rank,
        is1: &is1,
        weights_op: None,
    };
    gemm_matmul(cx, b, &operands, &elem);
    Ok(())
}

/// The Transpose that is the only use of MatMul `op`'s result, when it
/// keeps the last dim last: the GEMM then writes its rows through the
/// Transpose's strides (attention's `[B, H, S, D] → [B, S, H, D]` before
/// the heads merge).
fn transposed_use(m: &Module, op: OpId) -> Option<(OpId, Vec<usize>)> {
    let r = m.result(op, 0)?;
    let [u] = m.uses(r) else {
        return None;
    };
    let t = u.op;
    let rank = m.value_type(r).shape()?.len();
    let matrices = m
        .operands(op)
        .iter()
        .all(|&v| m.value_type(v).shape().is_some_and(|s| s.len() >= 2));
    if !onnx::is(m, t, OpKind::Transpose)
        || m.op_block(t) != m.op_block(op)
        || !gemm_elem(m.value_type(r).element_type())
        || !matrices
    {
        return None;
    }
    let perm = crate::kernels::support::views::transpose_perm(m, t, rank).ok()?;
    (perm.last() == Some(&(rank - 1))).then_some((t, perm))
}

/// The buffer a MatMul writes: its own result, or (see [`transposed_use`])
/// its Transpose's, which the MatMul then computes (absorbed).
fn result_buffer(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    out_dims: &[ValueId],
) -> Result<Operand> {
    let (buf, perm) = match transposed_use(b.m, op) {
        Some((t, perm)) => {
            let t_dims: Vec<ValueId> = perm.iter().map(|&p| out_dims[p]).collect();
            let buf = alloc_result(b, t, 0, &t_dims)?;
            if let Some(r) = b.m.result(t, 0) {
                cx.bind(r, buf);
            }
            cx.absorb(t);
            // The result is the inverse Transpose of the buffer.
            let mut inverse = vec![0; perm.len()];
            for (e, &p) in perm.iter().enumerate() {
                inverse[p] = e;
            }
            (buf, Some(inverse))
        }
        None => (alloc_result(b, op, 0, out_dims)?, None),
    };
    Ok(Operand::permuted(b, buf, perm))
}

/// The element types the packed GEMM computes in (f16/bf16 take the loop
/// nest, which accumulates in f32).
pub(crate) fn gemm_elem(elem: &Type) -> bool {
    matches!(
        elem.float_kind(),
        Some(ir::types::FloatKind::F32 | ir::types::FloatKind::F64)
    )
}

use crate::kernels::support::index::product;
use gemm::BiasArg;

/// The operand's batch strides, in elements, aligned to the output's
/// `batch_rank` batch dims: 0 where it broadcasts (a dim of 1, known
/// statically or tested at run time by `is1`).
fn batch_strides(
    b: &mut Builder<'_>,
    x: &Operand,
    n_batch: usize,
    is1: &[Option<ValueId>],
    batch_rank: usize,
) -> Vec<ValueId> {
    let zero = b.const_index(0);
    let mut out = vec![zero; batch_rank];
    for k in 0..n_batch {
        let stride = x.strides[k];
        let j = k + batch_rank - n_batch;
        out[j] = match is1.get(k).copied().flatten() {
            Some(t) => b.select(t, zero, stride),
            None if x.shape[k] == 1 => zero,
            None => stride,
        };
    }
    out
}

/// The operands of [`gemm_matmul`].
struct MatMulOperands<'a> {
    a: &'a Operand,
    w: &'a Operand,
    /// The result, written through its strides.
    c: &'a Operand,
    out_dims: &'a [ValueId],
    batch_rank: usize,
    is1: &'a [Vec<Option<ValueId>>; 2],
    /// The op whose operand 1 is B, when its constant may be packed.
    weights_op: Option<OpId>,
}

/// MatMul on the packed GEMM: one call per output batch entry (batch dims
/// that broadcast are read at stride 0), or one call over all rows when B
/// has no batch dims.
fn gemm_matmul(cx: &mut Lowering, b: &mut Builder<'_>, o: &MatMulOperands<'_>, elem: &Type) {
    let (da, db) = (&o.a.dims, &o.w.dims);
    let (a_vec, b_vec) = (da.len() == 1, db.len() == 1);
    let one = b.const_index(1);
    let k = da[da.len() - 1];
    let m = if a_vec { one } else { da[da.len() - 2] };
    let n = if b_vec { one } else { db[db.len() - 1] };
    let (a_batch, b_batch) = (da.len().saturating_sub(2), db.len().saturating_sub(2));
    let alen = product(b, da);
    let blen = product(b, db);
    let olen = product(b, o.out_dims);
    let af = gemm::flat(b, o.a.buf, alen);
    let bf = gemm::flat(b, o.w.buf, blen);
    let of = gemm::flat(b, o.c.buf, olen);
    // A 1-D operand is its own row (A) or column (B).
    let stride = |x: &Operand, back: usize| {
        let r = x.strides.len();
        if r < back {
            one
        } else {
            x.strides[r - back]
        }
    };
    let (a_rs, a_cs) = (if a_vec { k } else { stride(o.a, 2) }, stride(o.a, 1));
    let (b_rs, b_cs) = (stride(o.w, 2), if b_vec { one } else { stride(o.w, 1) });
    let unit_n = o.w.unit_last();
    let mut v = gemm::Variant::plain(elem, cx.gemm, gemm::BSource::Matrix { unit_n });
    v.a_direct = o.a.unit_last();
    let zero = b.const_index(0);
    let mut call = gemm::Call {
        a: af,
        a_off: zero,
        a_rs,
        a_cs,
        b: bf,
        b_off: zero,
        b_args: vec![b_rs, b_cs],
        c: of,
        c_off: zero,
        ldc: if a_vec || b_vec { n } else { stride(o.c, 2) },
        bias: None,
        residual: None,
        m,
        n,
        k,
    };
    if b_batch == 0 && !a_vec && o.a.perm.is_none() && o.c.perm.is_none() {
        // [..., M, K] × [K, N]: every row of A at once.
        call.m = product(b, &da[..da.len() - 1]);
        let packed = o.weights_op.and_then(|op| {
            let kn = matmul_weights_shape(o.w)?;
            packed_weights(cx, b, op, kn, false, &v)
        });
        if let Some((packed, npad)) = packed {
            v.b_packed = true;
            call.b = packed;
            call.b_args = vec![b.const_index(npad), one];
        }
        gemm::call(b, &v, &call);
        return;
    }
    let sa_b = batch_strides(b, o.a, a_batch, &o.is1[0], o.batch_rank);
    let sb_b = batch_strides(b, o.w, b_batch, &o.is1[1], o.batch_rank);
    let sc_b = o.c.strides[..o.batch_rank].to_vec();
    let bounds = Bounds::new(b);
    let mut work = o.out_dims[..o.batch_rank].to_vec();
    work.extend([m, n, k]);
    loop_nest_by_work(
        b,
        &bounds,
        &o.out_dims[..o.batch_rank],
        &work,
        GEMM_MIN_WORK,
        &mut |b, ivs| {
            let dot = |b: &mut Builder<'_>, s: &[ValueId]| {
                let mut acc = b.const_index(0);
                for (&i, &st) in ivs.iter().zip(s) {
                    let t = b.muli(i, st);
                    acc = b.addi(acc, t);
                }
                acc
            };
            let mut c = call.clone();
            c.a_off = dot(b, &sa_b);
            c.b_off = dot(b, &sb_b);
            c.c_off = dot(b, &sc_b);
            gemm::call(b, &v, &c);
        },
    );
}

/// Y = alpha * A' B' + beta * C, with C broadcast to (M, N).
pub fn gemm(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let (a, w) = (
        cx.input(b.m, op, ops::Gemm::A)?,
        cx.input(b.m, op, ops::Gemm::B)?,
    );
    let c = if cx.has_input(b.m, op, ops::Gemm::C) {
        Some(cx.input(b.m, op, ops::Gemm::C)?)
    } else {
        None
    };
    let attrs = ops::Gemm::of(b.m, op);
    let (ta, tb) = (attrs.trans_a() != 0, attrs.trans_b() != 0);
    let (alpha, beta) = (attrs.alpha(), attrs.beta());
    if shape_of(b.m, a).len() != 2 || shape_of(b.m, w).len() != 2 {
        return Err(op_error(b.m, op, "Gemm operands A and B must be 2-D"));
    }
    let da = dims(b, a);
    let db = dims(b, w);
    let (m_dim, k_dim) = if ta { (da[1], da[0]) } else { (da[0], da[1]) };
    let (n_dim, k_b) = if tb { (db[0], db[1]) } else { (db[1], db[0]) };
    checks::equal(b, op, k_dim, k_b, "the inner dims of A and B differ")?;
    let out = alloc_result(b, op, 0, &[m_dim, n_dim])?;
    let elem = elem_of(b.m, out);
    let c_shape = c.map(|c| shape_of(b.m, c)).unwrap_or_default();
    let bounds = Bounds::new(b);
    let zero = bounds.zero;
    // C's dynamic dims may be 1 at runtime (then they broadcast).
    let mut c_is1 = Vec::new();
    if let Some(c) = c {
        let dc = dims(b, c);
        let off = 2usize.saturating_sub(dc.len());
        for (k, &d) in dc.iter().enumerate().take(2) {
            let o = if k + off == 0 { m_dim } else { n_dim };
            checks::broadcasts(b, op, d, o, &checks::broadcast_msg(2, k))?;
            let dynamic = c_shape[k] == ir::DYN;
            c_is1.push(dynamic.then(|| b.cmp(Cmp::Eq, d, bounds.one)));
        }
    }
    let fast = gemm_elem(&elem) && c_shape.last() != Some(&ir::DYN);
    if fast {
        let g = GemmOperands {
            op,
            a,
            w,
            c: c.map(|c| (c, c_is1.first().copied().flatten())),
            out,
            ta,
            tb,
            m: m_dim,
            n: n_dim,
            k: k_dim,
        };
        let fused = crate::kernels::support::epilogue::Fused::of(b.m, op);
        let act = fused.act();
        gemm_packed(cx, b, &g, alpha, beta, act);
        fused.bind(cx, b.m, out);
        return Ok(vec![out]);
    }
    loop_nest(b, &bounds, &[m_dim, n_dim], &mut |b, ivs| {
        let (i, j) = (ivs[0], ivs[1]);
        let init = b.zero(&scalar::acc_type(&elem));
        let sum = reduce_nest(b, &bounds, &[k_dim], init, &mut |b, k, acc| {
            let aidx = if ta { [k[0], i] } else { [i, k[0]] };
            let bidx = if tb { [j, k[0]] } else { [k[0], j] };
            let x = b.load(a, &aidx);
            let y = b.load(w, &bidx);
            scalar::mul_acc(b, acc, x, y)
        });
        let sum = scalar::fcast(b, sum, &elem);
        let mut r = sum;
        if alpha != 1.0 {
            let al = b.constant(&elem, alpha);
            r = b.mul(r, al);
        }
        if let Some(c) = c {
            // Unidirectional broadcast of C to (M, N).
            let off = 2 - c_shape.len().min(2);
            let idx: Vec<ValueId> = c_shape
                .iter()
                .zip(&c_is1)
                .enumerate()
                .map(|(k, (&d, is1))| match is1 {
                    Some(t) => b.select(*t, zero, ivs[k + off]),
                    None if d == 1 => zero,
                    None => ivs[k + off],
                })
                .collect();
            let mut cv = b.load(c, &idx);
            if beta != 1.0 {
                let be = b.constant(&elem, beta);
                cv = b.mul(cv, be);
            }
            r = b.add(r, cv);
        }
        b.store(r, out, ivs);
    });
    Ok(vec![out])
}

/// Operand 1 of `op` when it is a constant `[K, N]` matrix (`[N, K]`,
/// read transposed, for Gemm's transB): packed at compile time into the
/// panels the GEMM's micro-kernel reads (`gemm::PackedB`), as a flat
/// global, with N rounded up to the panel width. Packing those weights at
/// run time cost as much as the products when a call has few rows (a
/// transformer's tokens against its weights; a classifier head at batch
/// 2: 2.3× onnxruntime's time, all of it packing).
fn packed_weights(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    (k, n): (i64, i64),
    transposed: bool,
    v: &gemm::Variant,
) -> Option<(ValueId, i64)> {
    let (k, n) = (usize::try_from(k).ok()?, usize::try_from(n).ok()?);
    // B of MatMul and Gemm
    let weights = crate::kernels::support::constant_elements(b.m, op, ops::MatMul::B)?;
    let dtype = ir::elements::DType::from_type(&v.elem)?;
    if weights.dtype() != dtype || weights.len() != k.checked_mul(n)? {
        return None;
    }
    let layout = gemm::PackedB::new(dtype.storage_bytes(1)?, (k, n), v.blocking)?;
    let layout = if transposed {
        layout.with_transposed_source()
    } else {
        layout
    };
    let source = (weights, layout.elements());
    let (global, len) =
        crate::kernels::support::packed_global(cx, b, source, move |w, out| layout.pack(w, out))?;
    let len = b.const_index(len);
    Some((gemm::flat(b, global, len), i64::try_from(layout.npad).ok()?))
}

/// MatMul's B as `packed_weights` takes it: a static `[K, N]` read as
/// stored.
fn matmul_weights_shape(w: &Operand) -> Option<(i64, i64)> {
    if w.perm.is_some() || !w.unit_last() {
        return None;
    }
    match w.shape[..] {
        [k, n] if k != ir::DYN && n != ir::DYN => Some((k, n)),
        _ => None,
    }
}

/// The operands of [`gemm_packed`]; `c` carries whether its first dim is
/// 1 at run time (when that is dynamic).
struct GemmOperands {
    op: OpId,
    a: ValueId,
    w: ValueId,
    c: Option<(ValueId, Option<ValueId>)>,
    out: ValueId,
    ta: bool,
    tb: bool,
    m: ValueId,
    n: ValueId,
    k: ValueId,
}

/// Gemm on the packed GEMM: transposes are strides, alpha and beta · C
/// are the epilogue (C per row when its last dim is 1, else per column
/// with row stride 0 when it broadcasts along M).
fn gemm_packed(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    g: &GemmOperands,
    alpha: f64,
    beta: f64,
    act: gemm::Act,
) {
    let elem = elem_of(b.m, g.out);
    let one = b.const_index(1);
    let zero = b.const_index(0);
    let mk = b.muli(g.m, g.k);
    let mn = b.muli(g.m, g.n);
    let af = gemm::flat(b, g.a, mk);
    let of = gemm::flat(b, g.out, mn);
    let (a_rs, a_cs) = if g.ta { (one, g.m) } else { (g.k, one) };
    // Constant weights ([K, N], or [N, K] with transB) are packed once,
    // here, as the micro-kernel reads them.
    let mut v = gemm::Variant::plain(&elem, cx.gemm, gemm::BSource::Matrix { unit_n: true });
    let kn = match shape_of(b.m, g.w)[..] {
        [r, c] if r != ir::DYN && c != ir::DYN => Some(if g.tb { (c, r) } else { (r, c) }),
        _ => None,
    };
    let packed = kn.and_then(|kn| packed_weights(cx, b, g.op, kn, g.tb, &v));
    let (bf, b_args) = match packed {
        Some((packed, npad)) => (packed, vec![b.const_index(npad), one]),
        None => {
            let kn = b.muli(g.k, g.n);
            let bf = gemm::flat(b, g.w, kn);
            match g.tb {
                true => {
                    v = gemm::Variant::plain(
                        &elem,
                        cx.gemm,
                        gemm::BSource::Matrix { unit_n: false },
                    );
                    (bf, vec![one, g.k])
                }
                false => (bf, vec![g.n, one]),
            }
        }
    };
    v.b_packed = packed.is_some();
    v.a_direct = !g.ta;
    v.alpha_bits = alpha.to_bits();
    v.beta_bits = beta.to_bits();
    v.act = act;
    let bias = g.c.map(|(c, rows_is1)| {
        let sc = shape_of(b.m, c);
        let dc = dims(b, c);
        let per_row = sc.last().is_none_or(|&d| d == 1);
        v.bias = if per_row {
            gemm::Bias::Row
        } else {
            gemm::Bias::Col
        };
        let row_len = if per_row { one } else { dc[dc.len() - 1] };
        let rs = match (sc.len(), rows_is1) {
            (2, Some(is1)) => b.select(is1, zero, row_len),
            (2, None) if sc[0] != 1 => row_len,
            _ => zero,
        };
        let len = crate::kernels::support::index::product(b, &dc);
        BiasArg {
            buf: gemm::flat(b, c, len),
            off: zero,
            rs,
        }
    });
    let call = gemm::Call {
        a: af,
        a_off: zero,
        a_rs,
        a_cs,
        b: bf,
        b_off: zero,
        b_args,
        c: of,
        c_off: zero,
        ldc: g.n,
        bias,
        residual: None,
        m: g.m,
        n: g.n,
        k: g.k,
    };
    gemm::call(b, &v, &call);
}
