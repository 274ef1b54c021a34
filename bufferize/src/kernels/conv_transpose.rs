//! ConvTranspose (1-D/2-D/3-D, groups, strides, dilations, pads,
//! output_padding, output_shape, auto_pad) as a scatter: every input
//! element adds its products into the output window it reaches.

use super::scalar;
use super::{alloc_result, attr_int, attr_ints, attr_str, elem_of, load_at, shape_of, store_at};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, ValueId};

pub fn conv_transpose(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let w = cx.input(b.m, op, 1)?;
    let bias = cx
        .has_input(b.m, op, 2)
        .then(|| cx.input(b.m, op, 2))
        .transpose()?;
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
        let mut inside = b.const_bool(true);
        for i in 0..sp {
            let s = b.const_index(strides[i]);
            let dl = b.const_index(dil[i]);
            let pb = b.const_index(begin[i]);
            let a = loops::mul(b, ivs[2 + i], s);
            let k = loops::mul(b, ks[i], dl);
            let o = loops::add(b, a, k);
            let o = loops::sub(b, o, pb);
            let ge = loops::cmp(b, "sge", o, bounds.zero);
            let lt = loops::cmp(b, "slt", o, od[2 + i]);
            let ok = loops::and(b, ge, lt);
            inside = loops::and(b, inside, ok);
            oi.push(loops::select(b, ok, o, bounds.zero));
        }
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
