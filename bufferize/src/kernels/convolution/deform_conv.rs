//! DeformConv (2-D): a grouped convolution whose every kernel tap samples
//! the input bilinearly (zeros outside) at its regular position plus a
//! learned offset, optionally scaled by a mask. Sums in f64.

use crate::convert::{dims, Lowering};
use crate::kernels::signal::interp::{self, Tap};
use crate::kernels::support::scalar;
use crate::kernels::{
    support::alloc_result, support::checks, support::elem_of, support::finish,
    support::store_converted,
};
use crate::loops::{self, loop_nest, reduce_nest, Bounds};
use ir::builder::Cmp;
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

/// Channel and kernel sizes (runtime values), groups and the window
/// attributes.
struct Geometry {
    ic: ValueId,
    oc: ValueId,
    icg: ValueId,
    kh: ValueId,
    kw: ValueId,
    group: i64,
    offset_group: i64,
    strides: Vec<i64>,
    dilations: Vec<i64>,
    pads: Vec<i64>,
}

fn geometry(
    b: &mut Builder<'_>,
    op: OpId,
    x: ValueId,
    w: ValueId,
    offset: ValueId,
) -> Result<Geometry> {
    let (dx, dw, doff) = (dims(b, x), dims(b, w), dims(b, offset));
    let (&[_, ic, _, _], &[oc, icg, kh, kw], &[_, oc2, _, _]) =
        (dx.as_slice(), dw.as_slice(), doff.as_slice())
    else {
        return Err(op_error(b.m, op, "only 2-D DeformConv is supported"));
    };
    let attrs = ops::DeformConv::of(b.m, op);
    let (group, og) = (attrs.group(), attrs.offset_group());
    let or_all = |v: Option<Vec<i64>>, n: usize, d: i64| v.unwrap_or_else(|| vec![d; n]);
    let (strides, dilations, pads) = (
        or_all(attrs.strides(), 2, 1),
        or_all(attrs.dilations(), 2, 1),
        or_all(attrs.pads(), 4, 0),
    );
    if group < 1 || og < 1 {
        return Err(op_error(b.m, op, "group and offset_group must be positive"));
    }
    let (g, ogv) = (b.const_index(group), b.const_index(og));
    let channels = b.muli(icg, g);
    checks::equal(
        b,
        op,
        ic,
        channels,
        "the input channels differ from W's times group",
    )?;
    checks::divides(b, op, oc, g, "group does not divide the output channels")?;
    let msg = "offset_group does not divide the input channels";
    checks::divides(b, op, ic, ogv, msg)?;
    // Two offsets (y, x) per offset group and kernel tap.
    let taps = b.muli(kh, kw);
    let per_group = b.muli(taps, ogv);
    let two = b.const_index(2);
    let want = b.muli(per_group, two);
    checks::equal(
        b,
        op,
        oc2,
        want,
        "offset channels differ from 2 × offset_group × taps",
    )?;
    if strides.len() != 2 || dilations.len() != 2 || pads.len() != 4 {
        return Err(op_error(
            b.m,
            op,
            "strides, dilations and pads must fit 2-D",
        ));
    }
    Ok(Geometry {
        ic,
        oc,
        icg,
        kh,
        kw,
        group,
        offset_group: og,
        strides,
        dilations,
        pads,
    })
}

/// The operands and index constants one kernel tap reads.
struct Sampler<'a> {
    op: OpId,
    geo: &'a Geometry,
    x: ValueId,
    w: ValueId,
    offset: ValueId,
    mask: Option<ValueId>,
    /// Input height and width.
    size: [ValueId; 2],
    /// Input channels per offset group, kernel height and width.
    icog: ValueId,
    khv: ValueId,
    kwv: ValueId,
}

impl Sampler<'_> {
    /// `w[o, cl, i, j] · mask · bilinear x[n, c0 + cl]` at tap (i, j) of
    /// output (n, o, oy, ox) moved by its offset, in f64.
    fn term(
        &self,
        b: &mut Builder<'_>,
        bounds: &Bounds,
        [n, o, oy, ox]: [ValueId; 4],
        c0: ValueId,
        [cl, i, j]: [ValueId; 3],
    ) -> Result<ValueId> {
        let f64t = Type::f64();
        let c = b.add(c0, cl);
        let go = b.divui(c, self.icog);
        // Tap (i, j) of offset group go: channel (go·kh + i)·kw + j.
        let t = b.mul(go, self.khv);
        let t = b.add(t, i);
        let t = b.mul(t, self.kwv);
        let tap = b.add(t, j);
        let two = b.const_index(2);
        let ch = b.mul(tap, two);
        let cw = b.add(ch, bounds.one);
        let mut coords = Vec::with_capacity(2);
        for (d, (oc_, k, chan)) in [(oy, i, ch), (ox, j, cw)].into_iter().enumerate() {
            let base = loops::scale_add(b, None, oc_, self.geo.strides[d]);
            let base = loops::scale_add(b, Some(base), k, self.geo.dilations[d]);
            let p = b.const_index(self.geo.pads[d]);
            let pos = b.sub(base, p);
            let pf = interp::idx_to_f(b, pos);
            let dv = b.load(self.offset, &[n, chan, oy, ox]);
            let dv = scalar::convert(b, self.op, dv, &f64t)?;
            coords.push(b.addf(pf, dv));
        }
        let per_dim: Vec<Vec<Tap>> = coords
            .iter()
            .zip(self.size)
            .map(|(&cd, size)| in_bounds_taps(b, bounds, cd, size))
            .collect();
        let v = interp::weighted_sum(b, self.op, self.x, &[n, c], &per_dim)?;
        let wv = b.load(self.w, &[o, cl, i, j]);
        let wf = scalar::convert(b, self.op, wv, &f64t)?;
        let mut f = b.mulf(wf, v);
        if let Some(mk) = self.mask {
            let m = b.load(mk, &[n, tap, oy, ox]);
            let m = scalar::convert(b, self.op, m, &f64t)?;
            f = b.mulf(f, m);
        }
        Ok(f)
    }
}

/// The bilinear taps of coordinate `cd` in a dim of `size`; taps outside
/// count as 0.
fn in_bounds_taps(b: &mut Builder<'_>, bounds: &Bounds, cd: ValueId, size: ValueId) -> Vec<Tap> {
    let last = b.sub(size, bounds.one);
    interp::taps(b, None, cd)
        .into_iter()
        .map(|(i, wt)| {
            let ge = b.cmp(Cmp::Ge, i, bounds.zero);
            let le = b.cmp(Cmp::Le, i, last);
            let ok = b.andi(ge, le);
            let idx = b.select(ok, i, bounds.zero);
            Tap {
                idx,
                w: wt,
                keep: Some(ok),
            }
        })
        .collect()
}

pub fn deform_conv(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::DeformConv::X)?;
    let w = cx.input(b.m, op, ops::DeformConv::W)?;
    let offset = cx.input(b.m, op, ops::DeformConv::OFFSET)?;
    let bias = cx.optional_input(b.m, op, ops::DeformConv::B)?;
    let mask = cx.optional_input(b.m, op, ops::DeformConv::MASK)?;
    let geo = geometry(b, op, x, w, offset)?;
    let dx = dims(b, x);
    let doff = dims(b, offset);
    let od = vec![dx[0], geo.oc, doff[2], doff[3]];
    let out = alloc_result(b, op, 0, &od)?;
    let elem = elem_of(b.m, x);
    let f64t = Type::f64();
    let bounds = Bounds::new(b);
    let (g, og) = (b.const_index(geo.group), b.const_index(geo.offset_group));
    let (ocg, icg_v, icog) = (b.divui(geo.oc, g), geo.icg, b.divui(geo.ic, og));
    let red = [icg_v, geo.kh, geo.kw];
    let (khv, kwv) = (geo.kh, geo.kw);
    let sampler = Sampler {
        op,
        geo: &geo,
        x,
        w,
        offset,
        mask,
        size: [dx[2], dx[3]],
        icog,
        khv,
        kwv,
    };
    let mut err = None;
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let (n, o, oy, ox) = (ivs[0], ivs[1], ivs[2], ivs[3]);
        let g = b.divui(o, ocg);
        let c0 = b.mul(g, icg_v);
        let init = match bias {
            Some(bv) => {
                let v = b.load(bv, &[o]);
                scalar::convert(b, op, v, &f64t)
            }
            None => Ok(b.zero(&f64t)),
        };
        let init = match init {
            Ok(v) => v,
            Err(e) => return err = Some(e),
        };
        let s = reduce_nest(b, &bounds, &red, init, &mut |b, r, acc| match sampler.term(
            b,
            &bounds,
            [n, o, oy, ox],
            c0,
            [r[0], r[1], r[2]],
        ) {
            Ok(f) => b.addf(acc, f),
            Err(e) => {
                err = Some(e);
                acc
            }
        });
        store_converted(b, op, s, &elem, out, ivs, &mut err);
    });
    finish(err, vec![out])
}
