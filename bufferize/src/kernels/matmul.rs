//! MatMul (batched, broadcast, 1-D operands) and Gemm as reduction nests.

use super::checks;
use super::gemm;
use super::scalar;
use super::{alloc_result, elem_of, shape_of};
use crate::convert::{contiguous, dims, Lowering};
use crate::loops::{loop_nest, loop_nest_by_work, reduce_nest, Bounds, GEMM_MIN_WORK};
use ir::builder::Cmp;
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

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

pub fn matmul(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    // The blocked GEMM wants unit strides.
    let a = contiguous(b, cx.input(b.m, op, 0)?);
    let w = contiguous(b, cx.input(b.m, op, 1)?);
    let (sa, sb) = (shape_of(b.m, a), shape_of(b.m, w));
    if sa.is_empty() || sb.is_empty() {
        return Err(op_error(b.m, op, "MatMul operands must have rank >= 1"));
    }
    let out_ty = super::result_memref_type(b.m, op, 0)?;
    let out_shape = out_ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    let (a_vec, b_vec) = (sa.len() == 1, sb.len() == 1);
    let mat_dims = usize::from(!a_vec) + usize::from(!b_vec);
    let Some(batch_rank) = out_shape.len().checked_sub(mat_dims) else {
        return Err(op_error(b.m, op, "inconsistent MatMul result rank"));
    };
    let out_batch = out_shape[..batch_rank].to_vec();
    let (a_batch, b_batch) = (sa.len().saturating_sub(2), sb.len().saturating_sub(2));
    let da = dims(b, a);
    let db = dims(b, w);
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
    let out = alloc_result(b, op, 0, &out_dims)?;
    let elem = elem_of(b.m, out);
    if gemm_elem(&elem) {
        let operands = MatMulOperands {
            a,
            w,
            out,
            da: &da,
            db: &db,
            out_dims: &out_dims,
            batch_rank,
            is1: &is1,
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
                let x = b.load(a, &aidx);
                let y = b.load(w, &bidx);
                scalar::mul_acc(b, acc, x, y)
            });
            let sum = scalar::fcast(b, sum, &elem);
            ai.clear();
            bi.clear();
            b.store(sum, out, ivs);
        },
    );
    Ok(vec![out])
}

/// The element types the packed GEMM computes in (f16/bf16 take the loop
/// nest, which accumulates in f32).
pub(super) fn gemm_elem(elem: &Type) -> bool {
    matches!(
        elem.float_kind(),
        Some(ir::types::FloatKind::F32 | ir::types::FloatKind::F64)
    )
}

use gemm::{product, BiasArg};

/// The operand's batch strides, in elements, aligned to the output's
/// `batch_rank` batch dims: 0 where it broadcasts (a dim of 1, known
/// statically or tested at run time by `is1`).
fn batch_strides(
    b: &mut Builder<'_>,
    d: &[ValueId],
    n_batch: usize,
    is1: &[Option<ValueId>],
    shape: &[i64],
    batch_rank: usize,
) -> Vec<ValueId> {
    let zero = b.const_index(0);
    let mut out = vec![zero; batch_rank];
    for k in 0..n_batch {
        let stride = product(b, &d[k + 1..]);
        let j = k + batch_rank - n_batch;
        out[j] = match is1.get(k).copied().flatten() {
            Some(t) => b.select(t, zero, stride),
            None if shape[k] == 1 => zero,
            None => stride,
        };
    }
    out
}

/// The operands of [`gemm_matmul`].
struct MatMulOperands<'a> {
    a: ValueId,
    w: ValueId,
    out: ValueId,
    da: &'a [ValueId],
    db: &'a [ValueId],
    out_dims: &'a [ValueId],
    batch_rank: usize,
    is1: &'a [Vec<Option<ValueId>>; 2],
}

/// MatMul on the packed GEMM: one call per output batch entry (batch dims
/// that broadcast are read at stride 0), or one call over all rows when B
/// has no batch dims.
fn gemm_matmul(cx: &Lowering, b: &mut Builder<'_>, o: &MatMulOperands<'_>, elem: &Type) {
    let (sa, sb) = (shape_of(b.m, o.a), shape_of(b.m, o.w));
    let (a_vec, b_vec) = (sa.len() == 1, sb.len() == 1);
    let one = b.const_index(1);
    let k = o.da[o.da.len() - 1];
    let m = if a_vec { one } else { o.da[o.da.len() - 2] };
    let n = if b_vec { one } else { o.db[o.db.len() - 1] };
    let (a_batch, b_batch) = (sa.len().saturating_sub(2), sb.len().saturating_sub(2));
    let alen = product(b, o.da);
    let blen = product(b, o.db);
    let olen = product(b, o.out_dims);
    let af = gemm::flat(b, o.a, alen);
    let bf = gemm::flat(b, o.w, blen);
    let of = gemm::flat(b, o.out, olen);
    let mut v = gemm::Variant::plain(elem, cx.vector_bits, gemm::BSource::Matrix { unit_n: true });
    v.a_direct = true;
    let zero = b.const_index(0);
    let mut call = gemm::Call {
        a: af,
        a_off: zero,
        a_rs: k,
        a_cs: one,
        b: bf,
        b_off: zero,
        b_args: vec![n, one],
        c: of,
        c_off: zero,
        ldc: n,
        bias: None,
        residual: None,
        m,
        n,
        k,
    };
    if b_batch == 0 && !a_vec {
        // [..., M, K] × [K, N]: every row of A at once.
        call.m = product(b, &o.da[..o.da.len() - 1]);
        gemm::call(b, &v, &call);
        return;
    }
    let sa_b = batch_strides(b, o.da, a_batch, &o.is1[0], &sa, o.batch_rank);
    let sb_b = batch_strides(b, o.db, b_batch, &o.is1[1], &sb, o.batch_rank);
    let mn = b.muli(m, n);
    let sc_b: Vec<ValueId> = (0..o.batch_rank)
        .map(|j| {
            let rest = product(b, &o.out_dims[j + 1..o.batch_rank]);
            b.muli(rest, mn)
        })
        .collect();
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
    let (a, w) = (cx.input(b.m, op, 0)?, cx.input(b.m, op, 1)?);
    let c = if cx.has_input(b.m, op, 2) {
        Some(cx.input(b.m, op, 2)?)
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
        // Constant weights stored [N, K] are transposed once, here: the
        // GEMM then reads B's rows with vector loads instead of gathers.
        let (w, tb) = match tb.then(|| transposed_constant(cx, b, op, w)).flatten() {
            Some(t) => (t, false),
            None => (w, tb),
        };
        let g = GemmOperands {
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
        let fused = super::epilogue::Fused::of(b.m, op);
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

/// Operand 1 of `op` (`w`, a constant [N, K] matrix of f32 or f64) as a
/// [K, N] global, when it is a constant.
fn transposed_constant(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    w: ValueId,
) -> Option<ValueId> {
    let (n, k) = match shape_of(b.m, w)[..] {
        [n, k] if n != ir::DYN && k != ir::DYN => {
            (usize::try_from(n).ok()?, usize::try_from(k).ok()?)
        }
        _ => return None,
    };
    let vals = super::constant_floats(b.m, op, 1)?;
    if vals.len() != n * k {
        return None;
    }
    let dtype = ir::elements::DType::from_type(&elem_of(b.m, w))?;
    let t: Vec<ir::elements::WideNum> = (0..k * n)
        .map(|i| ir::elements::WideNum::from_f64(vals[(i % n) * k + i / n]))
        .collect();
    let e = ir::elements::Elements::from_wide(dtype, vec![k as i64, n as i64], &t).ok()?;
    Some(cx.global(b, &e))
}

/// The operands of [`gemm_packed`]; `c` carries whether its first dim is
/// 1 at run time (when that is dynamic).
struct GemmOperands {
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
    cx: &Lowering,
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
    let kn = b.muli(g.k, g.n);
    let mn = b.muli(g.m, g.n);
    let af = gemm::flat(b, g.a, mk);
    let bf = gemm::flat(b, g.w, kn);
    let of = gemm::flat(b, g.out, mn);
    let (a_rs, a_cs) = if g.ta { (one, g.m) } else { (g.k, one) };
    let b_args = if g.tb { vec![one, g.k] } else { vec![g.n, one] };
    let source = gemm::BSource::Matrix { unit_n: !g.tb };
    let mut v = gemm::Variant::plain(&elem, cx.vector_bits, source);
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
        let len = gemm::product(b, &dc);
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
