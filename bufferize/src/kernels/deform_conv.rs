//! DeformConv (2-D): a grouped convolution whose every kernel tap samples
//! the input bilinearly (zeros outside) at its regular position plus a
//! learned offset, optionally scaled by a mask. Sums in f64.

use super::interp::{self, Tap};
use super::scalar::{self, constant};
use super::{
    alloc_result, attr_int, attr_ints, elem_of, finish, load_at, shape_of, store_converted,
};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, reduce_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId, DYN};

pub fn deform_conv(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let w = cx.input(b.m, op, 1)?;
    let offset = cx.input(b.m, op, 2)?;
    let bias = cx.optional_input(b.m, op, 3)?;
    let mask = cx.optional_input(b.m, op, 4)?;
    let (sx, sw, so) = (shape_of(b.m, x), shape_of(b.m, w), shape_of(b.m, offset));
    let ([_, ic, _, _], [oc, icg, kh, kw], [_, _, _, _]) =
        (sx.as_slice(), sw.as_slice(), so.as_slice())
    else {
        return Err(op_error(b.m, op, "only 2-D DeformConv is supported"));
    };
    let (ic, oc, icg, kh, kw) = (*ic, *oc, *icg, *kh, *kw);
    let group = attr_int(b.m, op, "group", 1);
    let og = attr_int(b.m, op, "offset_group", 1);
    if [ic, oc, icg, kh, kw].contains(&DYN)
        || group < 1
        || og < 1
        || ic != icg * group
        || oc % group != 0
        || ic % og != 0
    {
        return Err(op_error(
            b.m,
            op,
            "inconsistent static channel and group sizes",
        ));
    }
    let ints =
        |name: &str, n: usize, d: i64| attr_ints(b.m, op, name).unwrap_or_else(|| vec![d; n]);
    let (strides, dil, pads) = (
        ints("strides", 2, 1),
        ints("dilations", 2, 1),
        ints("pads", 4, 0),
    );
    if strides.len() != 2 || dil.len() != 2 || pads.len() != 4 {
        return Err(op_error(
            b.m,
            op,
            "strides, dilations and pads must fit 2-D",
        ));
    }
    let dx = dims(b, x);
    let doff = dims(b, offset);
    let ocv = b.const_index(oc);
    let od = vec![dx[0], ocv, doff[2], doff[3]];
    let out = alloc_result(b, op, 0, &od)?;
    let elem = elem_of(b.m, x);
    let f64t = Type::f64();
    let bounds = Bounds::new(b);
    let (ocg, icg_v, icog) = (
        b.const_index(oc / group),
        b.const_index(icg),
        b.const_index(ic / og),
    );
    let red = [icg_v, b.const_index(kh), b.const_index(kw)];
    let kwv = b.const_index(kw);
    let khv = b.const_index(kh);
    let mut err = None;
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let (n, o, oy, ox) = (ivs[0], ivs[1], ivs[2], ivs[3]);
        let g = b.same("arith.divui", &[o, ocg]);
        let c0 = loops::mul(b, g, icg_v);
        let init = match bias {
            Some(bv) => {
                let v = load_at(b, bv, &[o]);
                scalar::convert(b, op, v, &f64t)
            }
            None => Ok(constant(b, &f64t, 0.0)),
        };
        let init = match init {
            Ok(v) => v,
            Err(e) => return err = Some(e),
        };
        let s = reduce_nest(b, &bounds, &red, init, &mut |b, r, acc| {
            let (cl, i, j) = (r[0], r[1], r[2]);
            let c = loops::add(b, c0, cl);
            let go = b.same("arith.divui", &[c, icog]);
            // Tap (i, j) of offset group go: channel (go·kh + i)·kw + j.
            let t = loops::mul(b, go, khv);
            let t = loops::add(b, t, i);
            let t = loops::mul(b, t, kwv);
            let tap = loops::add(b, t, j);
            let two = b.const_index(2);
            let ch = loops::mul(b, tap, two);
            let cw = loops::add(b, ch, bounds.one);
            let mut coords = Vec::with_capacity(2);
            for (d, (oc_, k, chan)) in [(oy, i, ch), (ox, j, cw)].into_iter().enumerate() {
                let base = loops::scale_add(b, None, oc_, strides[d]);
                let base = loops::scale_add(b, Some(base), k, dil[d]);
                let p = b.const_index(pads[d]);
                let pos = loops::sub(b, base, p);
                let pf = interp::idx_to_f(b, pos);
                let dv = load_at(b, offset, &[n, chan, oy, ox]);
                match scalar::convert(b, op, dv, &f64t) {
                    Ok(dv) => coords.push(b.same("arith.addf", &[pf, dv])),
                    Err(e) => {
                        err = Some(e);
                        return acc;
                    }
                }
            }
            let per_dim: Vec<Vec<Tap>> = coords
                .iter()
                .enumerate()
                .map(|(d, &cd)| {
                    let size = dx[2 + d];
                    let last = loops::sub(b, size, bounds.one);
                    interp::taps(b, None, cd)
                        .into_iter()
                        .map(|(i, wt)| {
                            let ge = loops::cmp(b, "sge", i, bounds.zero);
                            let le = loops::cmp(b, "sle", i, last);
                            let ok = loops::and(b, ge, le);
                            let idx = loops::select(b, ok, i, bounds.zero);
                            Tap {
                                idx,
                                w: wt,
                                keep: Some(ok),
                            }
                        })
                        .collect()
                })
                .collect();
            let v = match interp::weighted_sum(b, op, x, &[n, c], &per_dim) {
                Ok(v) => v,
                Err(e) => {
                    err = Some(e);
                    return acc;
                }
            };
            let wv = load_at(b, w, &[o, cl, i, j]);
            let mut f = match scalar::convert(b, op, wv, &f64t) {
                Ok(f) => b.same("arith.mulf", &[f, v]),
                Err(e) => {
                    err = Some(e);
                    return acc;
                }
            };
            if let Some(mk) = mask {
                let m = load_at(b, mk, &[n, tap, oy, ox]);
                match scalar::convert(b, op, m, &f64t) {
                    Ok(m) => f = b.same("arith.mulf", &[f, m]),
                    Err(e) => err = Some(e),
                }
            }
            b.same("arith.addf", &[acc, f])
        });
        store_converted(b, op, s, &elem, out, ivs, &mut err);
    });
    finish(err, vec![out])
}
