//! MatMul (batched, broadcast, 1-D operands) and Gemm as reduction nests.

use super::checks;
use super::scalar;
use super::{alloc_result, elem_of, shape_of};
use crate::convert::{contiguous, dims, Lowering};
use crate::loops::{loop_nest, reduce_nest, Bounds};
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
    if blocked_matmul(b, a, w, out, &elem)? {
        return Ok(vec![out]);
    }
    let bounds = Bounds::new(b);
    let zero = bounds.zero;
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
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
    });
    Ok(vec![out])
}

/// `A[..., M, K] × B[K, N]` with static shapes over contiguous float
/// buffers, as one blocked GEMM: A viewed as [R, K] rows (R = batch·M),
/// B as [1, K, N], the result as [1, R, N]. Returns false when it does
/// not apply.
fn blocked_matmul(
    b: &mut Builder<'_>,
    a: ValueId,
    w: ValueId,
    out: ValueId,
    elem: &Type,
) -> Result<bool> {
    let (sa, sb, so) = (shape_of(b.m, a), shape_of(b.m, w), shape_of(b.m, out));
    let identity = |v: ValueId| {
        b.m.value_type(v)
            .as_memref()
            .is_some_and(ir::types::MemRefType::is_identity_layout)
    };
    // f16/bf16 take the loop nest, which accumulates in f32.
    let fits = matches!(elem, Type::Float(_))
        && scalar::acc_type(elem) == *elem
        && sa.len() >= 2
        && sb.len() == 2
        && !sa.iter().chain(&sb).chain(&so).any(|&d| d == ir::DYN)
        && identity(a)
        && identity(w)
        && identity(out);
    if !fits {
        return Ok(false);
    }
    let (k, n) = (sb[0], sb[1]);
    let rows: i64 = sa[..sa.len() - 1].iter().product();
    if sa[sa.len() - 1] != k || so.iter().product::<i64>() != rows * n {
        return Ok(false);
    }
    let a2 = super::conv::view(b, a, elem, &[rows, k]);
    let b3 = super::conv::view(b, w, elem, &[1, k, n]);
    let o3 = super::conv::view(b, out, elem, &[1, rows, n]);
    let zero = b.const_index(0);
    let m_rows = b.const_index(rows);
    let call = GemmCall {
        w: a2,
        x: b3,
        out: o3,
        bias: None,
        xn: zero,
        xr0: zero,
        on: zero,
        or0: zero,
        m_rows,
    };
    call_gemm(b, elem, &call)?;
    Ok(true)
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

/// A 2-D view into a buffer for the blocked GEMM: element (r, c) lives at
/// `buf[lead..., row0 + r, c]`.
struct Mat {
    buf: ValueId,
    lead: Vec<ValueId>,
    row0: Option<ValueId>,
}

impl Mat {
    fn idx(&self, b: &mut Builder<'_>, r: ValueId, c: ValueId) -> Vec<ValueId> {
        let mut idx = self.lead.clone();
        idx.push(match self.row0 {
            Some(r0) => b.add(r0, r),
            None => r,
        });
        idx.push(c);
        idx
    }
    fn load(&self, b: &mut Builder<'_>, r: ValueId, c: ValueId) -> ValueId {
        let idx = self.idx(b, r, c);
        b.load(self.buf, &idx)
    }
    fn store(&self, b: &mut Builder<'_>, v: ValueId, r: ValueId, c: ValueId) {
        let idx = self.idx(b, r, c);
        b.store(v, self.buf, &idx);
    }
}

/// Columns per tile: the innermost, unit-stride loop (vectorized by LLVM).
const TILE_P: i64 = 256;
/// Reduction rows per tile, so that a tile of `x` stays in cache.
const TILE_K: i64 = 128;
/// Register block: rows of `out` (BM) and of `x` (BK) combined per inner
/// loop; each step loads BK vectors of `x` and updates BM of `out`.
const BM: i64 = 4;
const BK: i64 = 8;

/// A call to a shared blocked GEMM of element type `elem`:
/// `out[on, or0 + m, p] = init(m) + Σk w[or0 + m, k] · x[xn, xr0 + k, p]` for m
/// below `m_rows` (a constant), with `init(m) = bias[or0 + m]` or 0. `w`
/// is 2-D, `x` and `out` 3-D row-major buffers of static shape; K and P come
/// from `w` and `out`. One function per distinct signature, so that ops of
/// the same shape share one copy of the tiled loop nest (small IR, fast
/// LLVM builds).
pub(super) struct GemmCall {
    pub w: ValueId,
    pub x: ValueId,
    pub out: ValueId,
    pub bias: Option<ValueId>,
    pub xn: ValueId,
    pub xr0: ValueId,
    pub on: ValueId,
    pub or0: ValueId,
    pub m_rows: ValueId,
}

pub(super) fn call_gemm(b: &mut Builder<'_>, elem: &Type, c: &GemmCall) -> Result<()> {
    let name = gemm_function(b, elem, c)?;
    let mut args = vec![c.w, c.x, c.out];
    args.extend(c.bias);
    args.extend([c.xn, c.xr0, c.on, c.or0]);
    b.call(&name, &args, &[]);
    Ok(())
}

/// The GEMM function for these operand types and row count, created at the
/// end of the module on first use. Static shapes let LLVM see constant
/// strides (one alias check per buffer instead of one per row).
fn gemm_function(b: &mut Builder<'_>, elem: &Type, c: &GemmCall) -> Result<String> {
    let shape = |v: ValueId| shape_of(b.m, v);
    let (sw, sx, so) = (shape(c.w), shape(c.x), shape(c.out));
    let m_rows =
        b.m.defining_op(c.m_rows)
            .and_then(|d| b.m.attr(d, "value"))
            .and_then(ir::Attribute::as_int);
    let (Some(m_rows), [_, k], [_, _, _], [_, _, p]) =
        (m_rows, sw.as_slice(), sx.as_slice(), so.as_slice())
    else {
        return Err(ir::Diagnostic::error(
            "blocked GEMM needs static 2-D/3-D operands",
        ));
    };
    let (k, p) = (*k, *p);
    let name = format!(
        "__onnxc_gemm_{}{}_{m_rows}_w{}_x{}_o{}",
        super::type_tag(elem),
        if c.bias.is_some() { "_bias" } else { "" },
        super::shape_tag(&sw),
        super::shape_tag(&sx),
        super::shape_tag(&so)
    );
    if b.m.lookup_symbol(&name).is_some() {
        return Ok(name);
    }
    let mut inputs = vec![
        b.m.value_type(c.w).clone(),
        b.m.value_type(c.x).clone(),
        b.m.value_type(c.out).clone(),
    ];
    if let Some(bias) = c.bias {
        inputs.push(b.m.value_type(bias).clone());
    }
    inputs.extend(std::iter::repeat_n(Type::Index, 4));
    let has_bias = c.bias.is_some();
    let (mut fb, args) = super::private_func(b.m, &name, inputs);
    let (w, x, out) = (args[0], args[1], args[2]);
    let bias_buf = has_bias.then(|| args[3]);
    let rest = &args[3 + usize::from(has_bias)..];
    let (xn, xr0, on, or0) = (rest[0], rest[1], rest[2], rest[3]);
    let mkp = [fb.const_index(m_rows), fb.const_index(k), fb.const_index(p)];
    // Weight rows are output channels, offset like the output's.
    let wm = Mat {
        buf: w,
        lead: vec![],
        row0: Some(or0),
    };
    let xm = Mat {
        buf: x,
        lead: vec![xn],
        row0: Some(xr0),
    };
    let om = Mat {
        buf: out,
        lead: vec![on],
        row0: Some(or0),
    };
    let elem2 = elem.clone();
    let init = move |b: &mut Builder<'_>, m: ValueId| match bias_buf {
        Some(bv) => {
            let i = b.add(or0, m);
            b.load(bv, &[i])
        }
        None => b.zero(&elem2),
    };
    blocked_gemm(&mut fb, &wm, &xm, &om, &init, mkp);
    fb.ret(&[]);
    Ok(name)
}

/// Emits `out = init + w * x` tiled for cache: p-tiles outermost, then
/// k-tiles, then 4x4 register blocks of (m, k) around a unit-stride loop
/// over p, so each loaded `x` feeds four rows and each `out` element is
/// read and written once per four k. `mkp` are the sizes M, K, P.
fn blocked_gemm(
    b: &mut Builder<'_>,
    w: &Mat,
    x: &Mat,
    out: &Mat,
    init: &dyn Fn(&mut Builder<'_>, ValueId) -> ValueId,
    mkp: [ValueId; 3],
) {
    let [m_ub, k_ub, p_ub] = mkp;
    let bounds = Bounds::new(b);
    let (zero, one) = (bounds.zero, bounds.one);
    let (tp, tk, bm, bk) = (
        b.const_index(TILE_P),
        b.const_index(TILE_K),
        b.const_index(BM),
        b.const_index(BK),
    );
    let m_rem = b.remsi(m_ub, bm);
    let m4 = b.subi(m_ub, m_rem);
    let k_rem = b.remsi(k_ub, bk);
    let k4 = b.subi(k_ub, k_rem);
    b.scf_for(zero, p_ub, tp, &[], |b, p0, _| {
        let rest = b.subi(p_ub, p0);
        let pn = b.minsi(rest, tp);
        let p_end = b.addi(p0, pn);
        // Initialize the tile.
        b.scf_for(zero, m_ub, one, &[], |b, m, _| {
            let v = init(b, m);
            b.scf_for(p0, p_end, one, &[], |b, p, _| {
                out.store(b, v, m, p);
                Vec::new()
            });
            Vec::new()
        });
        // 4x4 blocks over k-tiles.
        b.scf_for(zero, k4, tk, &[], |b, kt, _| {
            let kt_rest = b.subi(k4, kt);
            let kn = b.minsi(kt_rest, tk);
            let kt_end = b.addi(kt, kn);
            b.scf_for(zero, m4, bm, &[], |b, m0, _| {
                b.scf_for(kt, kt_end, bk, &[], |b, k0, _| {
                    let offs: Vec<ValueId> = (0..BM.max(BK)).map(|i| b.const_index(i)).collect();
                    let rows: Vec<ValueId> =
                        offs[..BM as usize].iter().map(|&o| b.addi(m0, o)).collect();
                    let ks: Vec<ValueId> =
                        offs[..BK as usize].iter().map(|&o| b.addi(k0, o)).collect();
                    let mut ws = Vec::new();
                    for &r in &rows {
                        for &kk in &ks {
                            ws.push(w.load(b, r, kk));
                        }
                    }
                    let inner = b.scf_for(p0, p_end, one, &[], |b, p, _| {
                        let xs: Vec<ValueId> = ks.iter().map(|&kk| x.load(b, kk, p)).collect();
                        for (i, &r) in rows.iter().enumerate() {
                            let mut acc = out.load(b, r, p);
                            for (j, &xv) in xs.iter().enumerate() {
                                acc = fma(b, ws[i * BK as usize + j], xv, acc);
                            }
                            out.store(b, acc, r, p);
                        }
                        Vec::new()
                    });
                    vectorize(b, inner);
                    Vec::new()
                });
                Vec::new()
            });
            Vec::new()
        });
        // Leftover k for the blocked rows, then leftover rows.
        b.scf_for(zero, m4, one, &[], |b, m, _| {
            rank1_rows(b, w, x, out, m, [k4, k_ub], [p0, p_end]);
            Vec::new()
        });
        b.scf_for(m4, m_ub, one, &[], |b, m, _| {
            rank1_rows(b, w, x, out, m, [zero, k_ub], [p0, p_end]);
            Vec::new()
        });
        Vec::new()
    });
}

/// `out[m, p] += w[m, k] * x[k, p]` for k in `ks` and p in `ps`.
fn rank1_rows(
    b: &mut Builder<'_>,
    w: &Mat,
    x: &Mat,
    out: &Mat,
    m: ValueId,
    ks: [ValueId; 2],
    ps: [ValueId; 2],
) {
    let one = b.const_index(1);
    b.scf_for(ks[0], ks[1], one, &[], |b, k, _| {
        let wv = w.load(b, m, k);
        let inner = b.scf_for(ps[0], ps[1], one, &[], |b, p, _| {
            let xv = x.load(b, k, p);
            let acc = out.load(b, m, p);
            let r = fma(b, wv, xv, acc);
            out.store(b, r, m, p);
            Vec::new()
        });
        vectorize(b, inner);
        Vec::new()
    });
}

/// `acc + x * y` as a multiply and an add, not `math.fma`: an exact fused
/// multiply-add is a slow libm call on targets without FMA, while the
/// clang builds (`-ffp-contract=fast`) fuse the pair where the CPU can.
fn fma(b: &mut Builder<'_>, x: ValueId, y: ValueId, acc: ValueId) -> ValueId {
    let product = b.mulf(x, y);
    b.addf(acc, product)
}

/// Asks LLVM to vectorize `for_op` even when it must check at run time that
/// the rows of `out` and `x` do not overlap (they never do: distinct
/// buffers, or disjoint rows of one).
fn vectorize(b: &mut Builder<'_>, for_op: ir::OpId) {
    b.m.set_attr(for_op, "onnxc.vectorize", ir::Attribute::Unit);
}
