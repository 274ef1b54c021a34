//! Conv (1-D/2-D/3-D, groups, strides, pads, dilations, auto_pad).

use super::scalar::{self, constant};
use super::window::Window;
use super::{alloc_result, attr_int, elem_of, load_at, shape_of, store_at};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, reduce_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, ValueId, DYN};

pub fn conv(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let w = cx.input(b.m, op, 1)?;
    let bias = if cx.has_input(b.m, op, 2) {
        Some(cx.input(b.m, op, 2)?)
    } else {
        None
    };
    let (sx, sw) = (shape_of(b.m, x), shape_of(b.m, w));
    if sx.len() < 3 || sw.len() != sx.len() {
        return Err(op_error(b.m, op, "Conv expects X and W of equal rank >= 3"));
    }
    let spatial = sx.len() - 2;
    let kernel = sw[2..].to_vec();
    if kernel.contains(&DYN) || sw[1] == DYN || sw[0] == DYN {
        return Err(op_error(b.m, op, "Conv needs a weight of static shape"));
    }
    let group = attr_int(b.m, op, "group", 1);
    if group <= 0 || sw[0] % group != 0 {
        return Err(op_error(
            b.m,
            op,
            "group must divide the number of output channels",
        ));
    }
    let out_ty = super::result_memref_type(b.m, op, 0)?;
    let out_shape = out_ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    let win = Window::new(b.m, op, kernel.clone(), &sx, &out_shape)?;
    let dx = dims(b, x);
    let mut out_dims = vec![dx[0], b.const_index(sw[0])];
    for (i, &d) in out_shape[2..].iter().enumerate() {
        if d == DYN {
            // out = floor((in + pads - eff) / stride) + 1 with symmetric pads.
            let eff = (kernel[i] - 1) * win.dilations[i] + 1;
            let c = b.const_index(2 * win.pad_begin[i] - eff);
            let t = loops::add(b, dx[i + 2], c);
            let s = b.const_index(win.strides[i]);
            let q = b.same("arith.divsi", &[t, s]);
            let one = b.const_index(1);
            out_dims.push(loops::add(b, q, one));
        } else {
            out_dims.push(b.const_index(d));
        }
    }
    let out = alloc_result(b, op, 0, &out_dims)?;
    let elem = elem_of(b.m, out);
    let (m_per_group, c_per_group) = (sw[0] / group, sw[1]);
    let bounds = Bounds::new(b);
    let zero = bounds.zero;
    let mut red_dims = vec![b.const_index(c_per_group)];
    for &k in &kernel {
        red_dims.push(b.const_index(k));
    }
    let mpg = b.const_index(m_per_group);
    let cpg = b.const_index(c_per_group);
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        let (n, mo) = (ivs[0], ivs[1]);
        let g = b.same("arith.divsi", &[mo, mpg]);
        let c_base = loops::mul(b, g, cpg);
        let init = match bias {
            Some(bv) => load_at(b, bv, &[mo]),
            None => constant(b, &elem, 0.0),
        };
        let sum = reduce_nest(b, &bounds, &red_dims, init, &mut |b, r, acc| {
            let c = loops::add(b, c_base, r[0]);
            let mut xidx = vec![n, c];
            let mut inside = None;
            for i in 0..spatial {
                let (pos, ok) = win.input_index(b, i, ivs[i + 2], r[i + 1], dx[i + 2], zero);
                xidx.push(pos);
                inside = Some(match inside {
                    Some(prev) => loops::and(b, prev, ok),
                    None => ok,
                });
            }
            let xv = load_at(b, x, &xidx);
            let mut widx = vec![mo, r[0]];
            widx.extend_from_slice(&r[1..]);
            let wv = load_at(b, w, &widx);
            let p = scalar::mul(b, xv, wv);
            let zero_v = constant(b, &elem, 0.0);
            let p = match inside {
                Some(ok) => loops::select(b, ok, p, zero_v),
                None => p,
            };
            scalar::add(b, acc, p)
        });
        store_at(b, sum, out, ivs);
    });
    Ok(vec![out])
}
