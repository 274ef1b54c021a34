//! ConvTranspose (1-D/2-D/3-D, groups, strides, dilations, pads,
//! output_padding, output_shape, auto_pad) as a scatter: every input
//! element adds its products into the output window it reaches; Col2Im,
//! the same scatter of column blocks into an image. For f32/f64 the
//! products are one GEMM per image and group first (`Wᵀ · X`, a column
//! per input position and a row per output channel and tap), so the
//! scatter only adds: the product loop had a select and a read-modify-
//! write per multiply-add (a U-Net's two upsamplings were two thirds of
//! its time).

use crate::convert::{dims, Lowering};
use crate::kernels::support::index::index_at;
use crate::kernels::{support::alloc_result, support::checks, support::elem_of, support::shape_of};
use crate::loops::{self, loop_nest, Bounds};
use ir::builder::Cmp;
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, ValueId};
use onnx::ops;

pub fn conv_transpose(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::ConvTranspose::X)?;
    let w = cx.input(b.m, op, ops::ConvTranspose::W)?;
    let bias = cx.optional_input(b.m, op, ops::ConvTranspose::B)?;
    let (dx, dw) = (dims(b, x), dims(b, w));
    let sp = dx.len().saturating_sub(2);
    if sp == 0 || dw.len() != dx.len() {
        return Err(op_error(b.m, op, "X and W must have the same rank >= 3"));
    }
    let group = ops::ConvTranspose::of(b.m, op).group();
    if group < 1 {
        return Err(op_error(b.m, op, "group must be positive"));
    }
    let g = b.const_index(group);
    checks::divides(b, op, dx[1], g, "group does not divide the input channels")?;
    checks::equal(b, op, dw[0], dx[1], "W's dim 0 differs from X's channels")?;
    let geo = scatter_geometry(b, op, &dx, &dw)?;
    let mg = dw[1];
    let mut od = vec![dx[0], b.muli(mg, g)];
    od.extend_from_slice(&geo.outs);
    let out = alloc_result(b, op, 0, &od)?;
    if let Some(bb) = bias {
        let n = dims(b, bb);
        if n.len() != 1 {
            return Err(op_error(b.m, op, "B must be 1-D"));
        }
        checks::equal(
            b,
            op,
            n[0],
            od[1],
            "B's length differs from the output channels",
        )?;
    }
    let elem = elem_of(b.m, x);
    let bounds = Bounds::new(b);
    let zero_v = b.zero(&elem);
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let v = match bias {
            Some(bb) => b.load(bb, &[ivs[1]]),
            None => zero_v,
        };
        b.store(v, out, ivs);
    });
    let cg = b.divui(dx[1], g);
    if crate::kernels::linalg::matmul::gemm_elem(&elem) {
        let t = Transposed {
            x,
            w,
            out,
            dx: &dx,
            geo: &geo,
            groups: (g, mg, cg),
        };
        t.gemm_then_scatter(b, cx.gemm);
        return Ok(vec![out]);
    }
    let mut ubs = dx.clone();
    ubs.push(mg);
    ubs.extend_from_slice(&geo.kernel);
    loop_nest(b, &bounds, &ubs, &mut |b, ivs| {
        let (n, ci) = (ivs[0], ivs[1]);
        let m = ivs[2 + sp];
        let ks = &ivs[3 + sp..];
        let mut oi = vec![n];
        let gi = b.divui(ci, cg);
        let base = b.muli(gi, mg);
        oi.push(b.addi(base, m));
        let mut inside = b.const_bool(true);
        for d in 0..sp {
            // Input position i and kernel offset k reach i·s + k·d - pad.
            let p = loops::scale_add(b, None, ivs[2 + d], geo.strides[d]);
            let p = loops::scale_add(b, Some(p), ks[d], geo.dilations[d]);
            let p = b.subi(p, geo.begins[d]);
            let ge = b.cmp(Cmp::Ge, p, bounds.zero);
            let lt = b.cmp(Cmp::Lt, p, od[2 + d]);
            let ok = b.andi(ge, lt);
            inside = b.andi(inside, ok);
            oi.push(b.select(ok, p, bounds.zero));
        }
        let xv = b.load(x, &ivs[..2 + sp]);
        let mut wi = vec![ci, m];
        wi.extend_from_slice(ks);
        let wv = b.load(w, &wi);
        let p = b.mul(xv, wv);
        let zero = b.zero(&elem);
        let p = b.select(inside, p, zero);
        let acc = b.load(out, &oi);
        let s = b.add(acc, p);
        b.store(s, out, &oi);
    });
    Ok(vec![out])
}

/// A ConvTranspose's operands for the GEMM path: `groups` is (groups,
/// output channels per group, input channels per group).
struct Transposed<'a> {
    x: ValueId,
    w: ValueId,
    out: ValueId,
    dx: &'a [ValueId],
    geo: &'a Scatter,
    groups: (ValueId, ValueId, ValueId),
}

impl Transposed<'_> {
    /// Per image and group: `cols[(m, k…), p] = Σ_c W[c, m, k…]·X[c, p]`
    /// (A is W's group block read transposed, B the image's channels as
    /// rows), then each column added where its input position and tap
    /// land in the output.
    fn gemm_then_scatter(&self, b: &mut Builder<'_>, isa: crate::kernels::linalg::gemm::Isa) {
        let (x, w, dx) = (self.x, self.w, self.dx);
        let (groups, mg, cg) = self.groups;
        let elem = elem_of(b.m, x);
        let prod = crate::kernels::support::index::product;
        let taps = prod(b, &self.geo.kernel);
        let rows = b.muli(mg, taps);
        let positions = prod(b, &dx[2..]);
        let cols_len = b.muli(rows, positions);
        let buf_ty = ir::Type::memref(vec![ir::DYN], elem.clone());
        let cols = b.alloc_aligned(&buf_ty, &[cols_len], 64);
        let (xlen, wlen) = (prod(b, dx), prod(b, &[dx[1], rows]));
        let x = crate::convert::contiguous(b, x);
        let w = crate::convert::contiguous(b, w);
        let (xf, wf) = (
            crate::kernels::linalg::gemm::flat(b, x, xlen),
            crate::kernels::linalg::gemm::flat(b, w, wlen),
        );
        let v = crate::kernels::linalg::gemm::Variant::plain(
            &elem,
            isa,
            crate::kernels::linalg::gemm::BSource::Matrix { unit_n: true },
        );
        let bounds = Bounds::new(b);
        let one = bounds.one;
        let group_in = b.muli(cg, positions);
        let image_in = b.muli(dx[1], positions);
        let group_w = b.muli(cg, rows);
        loop_nest(b, &bounds, &[dx[0], groups], &mut |b, ivs| {
            let (n, gi) = (ivs[0], ivs[1]);
            let xi = b.muli(n, image_in);
            let xg = b.muli(gi, group_in);
            let call = crate::kernels::linalg::gemm::Call {
                a: wf,
                a_off: b.muli(gi, group_w),
                a_rs: one,
                a_cs: rows,
                b: xf,
                b_off: b.addi(xi, xg),
                b_args: vec![positions, one],
                c: cols,
                c_off: bounds.zero,
                ldc: positions,
                bias: None,
                residual: None,
                m: rows,
                n: positions,
                k: cg,
            };
            crate::kernels::linalg::gemm::call(b, &v, &call);
            self.scatter(b, (n, gi), cols, positions);
        });
    }

    /// `out[n, g·Mg + m, i·s + k·d - pad] += cols[(m, k…), i]` for every
    /// output channel `m` of the group, tap `k` and input position `i`
    /// that lands inside the output.
    fn scatter(
        &self,
        b: &mut Builder<'_>,
        (n, gi): (ValueId, ValueId),
        cols: ValueId,
        positions: ValueId,
    ) {
        let (dx, geo) = (self.dx, self.geo);
        let sp = dx.len() - 2;
        let mg = self.groups.1;
        let bounds = Bounds::new(b);
        let mut ubs = vec![mg];
        ubs.extend_from_slice(&geo.kernel);
        ubs.extend_from_slice(&dx[2..]);
        let base = b.muli(gi, mg);
        // Output channels write disjoint planes: the outer loop may run
        // in parallel.
        let work = ubs.clone();
        loops::loop_nest_by_work(
            b,
            &bounds,
            &ubs,
            &work,
            loops::PARALLEL_MIN_WORK,
            &mut |b, ivs| {
                let (m, ks, at) = (ivs[0], &ivs[1..=sp], &ivs[1 + sp..]);
                let mut oi = vec![n, b.addi(base, m)];
                let mut inside = b.const_bool(true);
                let mut row = m;
                let mut col = bounds.zero;
                for d in 0..sp {
                    let p = loops::scale_add(b, None, at[d], geo.strides[d]);
                    let p = loops::scale_add(b, Some(p), ks[d], geo.dilations[d]);
                    let p = b.subi(p, geo.begins[d]);
                    let ge = b.cmp(Cmp::Ge, p, bounds.zero);
                    let lt = b.cmp(Cmp::Lt, p, geo.outs[d]);
                    let ok = b.andi(ge, lt);
                    inside = b.andi(inside, ok);
                    oi.push(p);
                    let r = b.muli(row, geo.kernel[d]);
                    row = b.addi(r, ks[d]);
                    let c = b.muli(col, dx[2 + d]);
                    col = b.addi(c, at[d]);
                }
                let mut add = |b: &mut Builder<'_>| {
                    let r = b.muli(row, positions);
                    let idx = b.addi(r, col);
                    let v = b.load(cols, &[idx]);
                    let acc = b.load(self.out, &oi);
                    let s = b.add(acc, v);
                    b.store(s, self.out, &oi);
                    Vec::new()
                };
                b.scf_if(inside, &[], &mut add, None);
            },
        );
    }
}

/// The scatter as a Conv window read backwards, every extent a runtime
/// value: the kernel (kernel_shape, else W's dims), the output extents
/// and the begin pads.
struct Scatter {
    kernel: Vec<ValueId>,
    strides: Vec<i64>,
    dilations: Vec<i64>,
    outs: Vec<ValueId>,
    begins: Vec<ValueId>,
}

/// Output extents: output_shape, else `in·s` for SAME, else
/// `s·(in - 1) + output_padding + (k - 1)·d + 1 - pads`. Begin pads, as the
/// ONNX reference: explicit pads win; else SAME_* split the total (floor
/// division); else none.
fn scatter_geometry(
    b: &mut Builder<'_>,
    op: OpId,
    dx: &[ValueId],
    dw: &[ValueId],
) -> Result<Scatter> {
    let sp = dx.len() - 2;
    let attrs = ops::ConvTranspose::of(b.m, op);
    let or_all = |v: Option<Vec<i64>>, default: i64| v.unwrap_or_else(|| vec![default; sp]);
    let strides = or_all(attrs.strides(), 1);
    let dil = or_all(attrs.dilations(), 1);
    let out_pad = or_all(attrs.output_padding(), 0);
    let (auto, pads, given) = (
        attrs.auto_pad().to_string(),
        attrs.pads(),
        attrs.output_shape(),
    );
    let kernel: Vec<ValueId> = match attrs.kernel_shape() {
        Some(k) => k.iter().map(|&k| b.const_index(k)).collect(),
        None => dw[2..].to_vec(),
    };
    let given = given.map(|g| g[g.len().saturating_sub(sp)..].to_vec());
    if [&strides, &dil, &out_pad].iter().any(|v| v.len() != sp)
        || kernel.len() != sp
        || given.as_ref().is_some_and(|g| g.len() != sp)
        || pads.as_ref().is_some_and(|p| p.len() != 2 * sp)
    {
        return Err(op_error(
            b.m,
            op,
            "attribute lengths differ from the spatial rank",
        ));
    }
    let (mut outs, mut begins) = (Vec::with_capacity(sp), Vec::with_capacity(sp));
    let (one, two) = (b.const_index(1), b.const_index(2));
    for i in 0..sp {
        // full = s·(in - 1) + output_padding + (k - 1)·d + 1
        let m1 = b.subi(dx[2 + i], one);
        let t = loops::scale_add(b, None, m1, strides[i]);
        let km1 = b.subi(kernel[i], one);
        let t = loops::scale_add(b, Some(t), km1, dil[i]);
        let c = b.const_index(out_pad[i] + 1);
        let full = b.addi(t, c);
        let out = match (&given, auto.as_str(), &pads) {
            (Some(g), _, _) => b.const_index(g[i]),
            (None, "SAME_UPPER" | "SAME_LOWER", _) => {
                loops::scale_add(b, None, dx[2 + i], strides[i])
            }
            (None, "NOTSET", Some(p)) => {
                let c = b.const_index(p[i] + p[sp + i]);
                b.subi(full, c)
            }
            (None, _, _) => full,
        };
        let total = b.subi(full, out);
        let begin = match (&pads, auto.as_str()) {
            (Some(p), _) => b.const_index(p[i]),
            (None, "SAME_UPPER") => b.floordivsi(total, two),
            (None, "SAME_LOWER") => {
                let h = b.floordivsi(total, two);
                b.subi(total, h)
            }
            _ => b.const_index(0),
        };
        let msg = format!("spatial axis {i} has no output extent");
        let zero = b.const_index(0);
        checks::compare(b, op, ir::builder::CmpI::Sgt, out, zero, &msg)?;
        outs.push(out);
        begins.push(begin);
    }
    Ok(Scatter {
        kernel,
        strides,
        dilations: dil,
        outs,
        begins,
    })
}

/// Col2Im's image rank: image_shape's length, which the result rank
/// gives (checked against image_shape and block_shape at run time).
fn image_rank(b: &mut Builder<'_>, op: OpId, img: ValueId, blk: ValueId) -> Result<usize> {
    let what = "the length of image_shape";
    let sp = crate::kernels::support::ranked_result(b.m, op, 0, what)?
        .len()
        .saturating_sub(2);
    let (di, db) = (dims(b, img), dims(b, blk));
    let (&[ni], &[nb]) = (di.as_slice(), db.as_slice()) else {
        return Err(op_error(b.m, op, "image_shape and block_shape must be 1-D"));
    };
    if sp == 0 {
        return Err(op_error(b.m, op, "the result must have a spatial dim"));
    }
    let spv = b.const_index(sp as i64);
    checks::equal(
        b,
        op,
        ni,
        spv,
        "image_shape's length differs from the image rank",
    )?;
    checks::equal(
        b,
        op,
        nb,
        spv,
        "block_shape's length differs from the image rank",
    )?;
    Ok(sp)
}

/// Col2Im: each column entry `(c·K + kernel offset, block)` of `[N, C·K, L]`
/// adds into the image position that block and offset reach. Image and
/// block shapes are runtime values.
pub fn col2im(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Col2Im::INPUT)?;
    let (img, blk) = (
        cx.input(b.m, op, ops::Col2Im::IMAGE_SHAPE)?,
        cx.input(b.m, op, ops::Col2Im::BLOCK_SHAPE)?,
    );
    let sp = image_rank(b, op, img, blk)?;
    if shape_of(b.m, x).len() != 3 {
        return Err(op_error(b.m, op, "input must be [N, C·K, L]"));
    }
    let attrs = ops::Col2Im::of(b.m, op);
    let or_all =
        |v: Option<Vec<i64>>, n: usize, default: i64| v.unwrap_or_else(|| vec![default; n]);
    let (dil, strides, pads) = (
        or_all(attrs.dilations(), sp, 1),
        or_all(attrs.strides(), sp, 1),
        or_all(attrs.pads(), 2 * sp, 0),
    );
    if dil.len() != sp || strides.len() != sp || pads.len() != 2 * sp {
        return Err(op_error(
            b.m,
            op,
            "attribute lengths differ from the image rank",
        ));
    }
    let dx = dims(b, x);
    let bounds = Bounds::new(b);
    let image: Vec<ValueId> = (0..sp).map(|d| index_at(b, img, Some(d as i64))).collect();
    let kernel: Vec<ValueId> = (0..sp).map(|d| index_at(b, blk, Some(d as i64))).collect();
    let mut k_all = bounds.one;
    for &k in &kernel {
        k_all = b.mul(k_all, k);
    }
    // Blocks per dim: (I + pads - (dil·(k-1) + 1)) / stride + 1.
    let blocks: Vec<ValueId> = (0..sp)
        .map(|d| {
            let km1 = b.sub(kernel[d], bounds.one);
            let eff = loops::scale_add(b, None, km1, dil[d]);
            let c = b.const_index(pads[d] + pads[sp + d] - 1);
            let t = b.add(image[d], c);
            let t = b.sub(t, eff);
            let s = b.const_index(strides[d]);
            let q = b.divsi(t, s);
            b.add(q, bounds.one)
        })
        .collect();
    let channels = b.divui(dx[1], k_all);
    let mut out_dims = vec![dx[0], channels];
    out_dims.extend_from_slice(&image);
    let out = alloc_result(b, op, 0, &out_dims)?;
    let elem = elem_of(b.m, x);
    let zero_v = b.zero(&elem);
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        b.store(zero_v, out, ivs)
    });
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let (row, l) = (ivs[1], ivs[2]);
        let c = b.divui(row, k_all);
        let (mut kr, mut lr) = (b.remui(row, k_all), l);
        let mut pos = vec![bounds.zero; sp];
        let mut inside = b.const_bool(true);
        // Last dim fastest, for both the kernel offset and the block.
        for d in (0..sp).rev() {
            let ko = b.remui(kr, kernel[d]);
            kr = b.divui(kr, kernel[d]);
            let bo = b.remui(lr, blocks[d]);
            lr = b.divui(lr, blocks[d]);
            let base = loops::scale_add(b, None, bo, strides[d]);
            let p = loops::scale_add(b, Some(base), ko, dil[d]);
            let pb = b.const_index(pads[d]);
            let p = b.sub(p, pb);
            let ge = b.cmp(Cmp::Ge, p, bounds.zero);
            let lt = b.cmp(Cmp::Lt, p, image[d]);
            let ok = b.andi(ge, lt);
            inside = b.andi(inside, ok);
            pos[d] = b.select(ok, p, bounds.zero);
        }
        let mut oi = vec![ivs[0], c];
        oi.extend(pos);
        let v = b.load(x, ivs);
        let old = b.load(out, &oi);
        let s = b.add(old, v);
        let s = b.select(inside, s, old);
        b.store(s, out, &oi);
    });
    Ok(vec![out])
}
