//! ConvTranspose (1-D/2-D/3-D, groups, strides, dilations, pads,
//! output_padding, output_shape, auto_pad) as a scatter: every input
//! element adds its products into the output window it reaches; Col2Im,
//! the same scatter of column blocks into an image.

use super::build::index_at;
use super::window::Window;
use super::{alloc_result, elem_of, shape_of};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, Bounds};
use ir::builder::Cmp;
use ir::dialects::op_error;
use ir::{Builder, Module, OpId, Result, ValueId};
use onnx::ops;

pub fn conv_transpose(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let w = cx.input(b.m, op, 1)?;
    let bias = cx.optional_input(b.m, op, 2)?;
    let xs = shape_of(b.m, x);
    let ws = shape_of(b.m, w);
    let out_ty = super::result_memref_type(b.m, op, 0)?;
    let os = out_ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    let sp = xs.len().saturating_sub(2);
    let static_ok = |s: &[i64]| s.iter().all(|&d| d >= 0);
    if sp == 0 || ws.len() != xs.len() || !static_ok(&xs) || !static_ok(&ws) || !static_ok(&os) {
        return Err(op_error(b.m, op, "ConvTranspose needs static shapes"));
    }
    let group = ops::ConvTranspose::of(b.m, op).group();
    if group < 1 || xs[1] % group != 0 {
        return Err(op_error(b.m, op, "group must divide the input channels"));
    }
    let win = scatter_window(b.m, op, &xs, &ws, &os)?;
    let dx = dims(b, x);
    let od: Vec<ValueId> = os.iter().map(|&d| b.const_index(d)).collect();
    let out = alloc_result(b, op, 0, &od)?;
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
    let cg = b.const_index(xs[1] / group);
    let mg = b.const_index(ws[1]);
    let kd: Vec<ValueId> = win.kernel.iter().map(|&k| b.const_index(k)).collect();
    let mut ubs = dx.clone();
    ubs.push(mg);
    ubs.extend_from_slice(&kd);
    loop_nest(b, &bounds, &ubs, &mut |b, ivs| {
        let (n, ci) = (ivs[0], ivs[1]);
        let m = ivs[2 + sp];
        let ks = &ivs[3 + sp..];
        let mut oi = vec![n];
        let g = b.divui(ci, cg);
        let base = b.mul(g, mg);
        oi.push(b.add(base, m));
        let (pos, inside) = win.input_indices(b, &ivs[2..2 + sp], ks, &od[2..], bounds.zero);
        oi.extend(pos);
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

/// The scatter as a Conv window read backwards: input position i and
/// kernel offset k reach output i·s + k·d - pad_begin. Shapes are static
/// (x, w, out of equal rank >= 3).
fn scatter_window(m: &Module, op: OpId, xs: &[i64], ws: &[i64], os: &[i64]) -> Result<Window> {
    let sp = xs.len() - 2;
    let attrs = ops::ConvTranspose::of(m, op);
    let or_all = |v: Option<Vec<i64>>, default: i64| v.unwrap_or_else(|| vec![default; sp]);
    let strides = or_all(attrs.strides(), 1);
    let dil = or_all(attrs.dilations(), 1);
    let out_pad = or_all(attrs.output_padding(), 0);
    let kernel = attrs.kernel_shape().unwrap_or_else(|| ws[2..].to_vec());
    if [&strides, &dil, &out_pad, &kernel]
        .iter()
        .any(|v| v.len() != sp)
    {
        return Err(op_error(
            m,
            op,
            "attribute lengths differ from the spatial rank",
        ));
    }
    let auto = attrs.auto_pad();
    let pads = attrs.pads();
    let begin: Vec<i64> = (0..sp)
        .map(|i| {
            let full = strides[i] * (xs[2 + i] - 1) + out_pad[i] + (kernel[i] - 1) * dil[i] + 1;
            let total = full - os[2 + i];
            // As the ONNX reference: explicit pads win; else SAME_* split
            // the total (floor division); else no padding.
            match (&pads, auto) {
                (Some(p), _) => p.get(i).copied().unwrap_or(0),
                (None, "SAME_UPPER") => total.div_euclid(2),
                (None, "SAME_LOWER") => total - total.div_euclid(2),
                _ => 0,
            }
        })
        .collect();
    Ok(Window {
        kernel,
        strides,
        dilations: dil,
        pad_begin: begin,
    })
}

/// Col2Im: each column entry `(c·K + kernel offset, block)` of `[N, C·K, L]`
/// adds into the image position that block and offset reach. Image and
/// block shapes are runtime values.
pub fn col2im(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let (img, blk) = (cx.input(b.m, op, 1)?, cx.input(b.m, op, 2)?);
    let sp = match shape_of(b.m, img).as_slice() {
        [d] if *d > 0 => *d as usize,
        _ => {
            return Err(op_error(
                b.m,
                op,
                "image_shape must be 1-D of static length",
            ))
        }
    };
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
