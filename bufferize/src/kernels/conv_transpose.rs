//! ConvTranspose (1-D/2-D/3-D, groups, strides, dilations, pads,
//! output_padding, output_shape, auto_pad) as a scatter: every input
//! element adds its products into the output window it reaches; Col2Im,
//! the same scatter of column blocks into an image.

use super::build::index_at;
use super::scalar;
use super::window::Window;
use super::{alloc_result, attr_int, attr_ints, attr_str, elem_of, load_at, shape_of, store_at};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, ValueId};

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
    let group = attr_int(b.m, op, "group", 1);
    if group < 1 || xs[1] % group != 0 {
        return Err(op_error(b.m, op, "group must divide the input channels"));
    }
    let ints =
        |name: &str, default: i64| attr_ints(b.m, op, name).unwrap_or_else(|| vec![default; sp]);
    let strides = ints("strides", 1);
    let dil = ints("dilations", 1);
    let out_pad = ints("output_padding", 0);
    let kernel = attr_ints(b.m, op, "kernel_shape").unwrap_or_else(|| ws[2..].to_vec());
    if [&strides, &dil, &out_pad, &kernel]
        .iter()
        .any(|v| v.len() != sp)
    {
        return Err(op_error(
            b.m,
            op,
            "attribute lengths differ from the spatial rank",
        ));
    }
    let auto = attr_str(b.m, op, "auto_pad")
        .unwrap_or("NOTSET")
        .to_string();
    let pads = attr_ints(b.m, op, "pads");
    let begin: Vec<i64> = (0..sp)
        .map(|i| {
            let full = strides[i] * (xs[2 + i] - 1) + out_pad[i] + (kernel[i] - 1) * dil[i] + 1;
            let total = full - os[2 + i];
            // As the ONNX reference: explicit pads win; else SAME_* split
            // the total (floor division); else no padding.
            match (&pads, auto.as_str()) {
                (Some(p), _) => p.get(i).copied().unwrap_or(0),
                (None, "SAME_UPPER") => total.div_euclid(2),
                (None, "SAME_LOWER") => total - total.div_euclid(2),
                _ => 0,
            }
        })
        .collect();
    // The scatter is a Conv window read backwards: input position i and
    // kernel offset k reach output i·s + k·d - pad_begin.
    let win = Window {
        kernel: kernel.clone(),
        strides,
        dilations: dil,
        pad_begin: begin,
        pad_end: vec![0; sp],
    };
    let dx = dims(b, x);
    let od: Vec<ValueId> = os.iter().map(|&d| b.const_index(d)).collect();
    let out = alloc_result(b, op, 0, &od)?;
    let elem = elem_of(b.m, x);
    let bounds = Bounds::new(b);
    let zero_v = scalar::constant(b, &elem, 0.0);
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let v = match bias {
            Some(bb) => load_at(b, bb, &[ivs[1]]),
            None => zero_v,
        };
        store_at(b, v, out, ivs);
    });
    let cg = b.const_index(xs[1] / group);
    let mg = b.const_index(ws[1]);
    let kd: Vec<ValueId> = kernel.iter().map(|&k| b.const_index(k)).collect();
    let mut ubs = dx.clone();
    ubs.push(mg);
    ubs.extend_from_slice(&kd);
    loop_nest(b, &bounds, &ubs, &mut |b, ivs| {
        let (n, ci) = (ivs[0], ivs[1]);
        let m = ivs[2 + sp];
        let ks = &ivs[3 + sp..];
        let mut oi = vec![n];
        let g = b.same("arith.divui", &[ci, cg]);
        let base = loops::mul(b, g, mg);
        oi.push(loops::add(b, base, m));
        let (pos, inside) = win.input_indices(b, &ivs[2..2 + sp], ks, &od[2..], bounds.zero);
        oi.extend(pos);
        let xv = load_at(b, x, &ivs[..2 + sp]);
        let mut wi = vec![ci, m];
        wi.extend_from_slice(ks);
        let wv = load_at(b, w, &wi);
        let p = scalar::mul(b, xv, wv);
        let zero = scalar::constant(b, &elem, 0.0);
        let p = scalar::select(b, inside, p, zero);
        let acc = load_at(b, out, &oi);
        let s = scalar::add(b, acc, p);
        store_at(b, s, out, &oi);
    });
    Ok(vec![out])
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
    let ints = |name: &str, n: usize, default: i64| {
        attr_ints(b.m, op, name).unwrap_or_else(|| vec![default; n])
    };
    let (dil, strides, pads) = (
        ints("dilations", sp, 1),
        ints("strides", sp, 1),
        ints("pads", 2 * sp, 0),
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
        k_all = loops::mul(b, k_all, k);
    }
    // Blocks per dim: (I + pads - (dil·(k-1) + 1)) / stride + 1.
    let blocks: Vec<ValueId> = (0..sp)
        .map(|d| {
            let km1 = loops::sub(b, kernel[d], bounds.one);
            let eff = loops::scale_add(b, None, km1, dil[d]);
            let c = b.const_index(pads[d] + pads[sp + d] - 1);
            let t = loops::add(b, image[d], c);
            let t = loops::sub(b, t, eff);
            let s = b.const_index(strides[d]);
            let q = b.same("arith.divsi", &[t, s]);
            loops::add(b, q, bounds.one)
        })
        .collect();
    let channels = b.same("arith.divui", &[dx[1], k_all]);
    let mut out_dims = vec![dx[0], channels];
    out_dims.extend_from_slice(&image);
    let out = alloc_result(b, op, 0, &out_dims)?;
    let elem = elem_of(b.m, x);
    let zero_v = scalar::constant(b, &elem, 0.0);
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        store_at(b, zero_v, out, ivs)
    });
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let (row, l) = (ivs[1], ivs[2]);
        let c = b.same("arith.divui", &[row, k_all]);
        let (mut kr, mut lr) = (b.same("arith.remui", &[row, k_all]), l);
        let mut pos = vec![bounds.zero; sp];
        let mut inside = b.const_bool(true);
        // Last dim fastest, for both the kernel offset and the block.
        for d in (0..sp).rev() {
            let ko = b.same("arith.remui", &[kr, kernel[d]]);
            kr = b.same("arith.divui", &[kr, kernel[d]]);
            let bo = b.same("arith.remui", &[lr, blocks[d]]);
            lr = b.same("arith.divui", &[lr, blocks[d]]);
            let base = loops::scale_add(b, None, bo, strides[d]);
            let p = loops::scale_add(b, Some(base), ko, dil[d]);
            let pb = b.const_index(pads[d]);
            let p = loops::sub(b, p, pb);
            let ge = loops::cmp(b, "sge", p, bounds.zero);
            let lt = loops::cmp(b, "slt", p, image[d]);
            let ok = loops::and(b, ge, lt);
            inside = loops::and(b, inside, ok);
            pos[d] = loops::select(b, ok, p, bounds.zero);
        }
        let mut oi = vec![ivs[0], c];
        oi.extend(pos);
        let v = load_at(b, x, ivs);
        let old = load_at(b, out, &oi);
        let s = scalar::add(b, old, v);
        let s = scalar::select(b, inside, s, old);
        store_at(b, s, out, &oi);
    });
    Ok(vec![out])
}
