//! GridSample (2-D and 3-D): nearest, (bi/tri)linear and bicubic
//! sampling, zeros/border/reflection padding, align_corners. Each output
//! element is a tensor product of per-dim taps, as Resize does.

use super::scalar;
use super::{alloc_result, attr_int, attr_str, elem_of, load_at, shape_of, store_at};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};

fn f64c(b: &mut Builder<'_>, v: f64) -> ValueId {
    b.const_float(v, Type::f64())
}

fn idx_to_f(b: &mut Builder<'_>, i: ValueId) -> ValueId {
    let v = b.op1("arith.index_cast", &[i], Type::i64(), &[]);
    b.op1("arith.sitofp", &[v], Type::f64(), &[])
}

fn f_to_idx(b: &mut Builder<'_>, f: ValueId) -> ValueId {
    let v = b.op1("arith.fptosi", &[f], Type::i64(), &[]);
    b.op1("arith.index_cast", &[v], Type::Index, &[])
}

fn cubic_weight(b: &mut Builder<'_>, t: ValueId) -> ValueId {
    let a = -0.75;
    let x = b.same("math.absf", &[t]);
    let (one, two) = (f64c(b, 1.0), f64c(b, 2.0));
    let x2 = b.same("arith.mulf", &[x, x]);
    let x3 = b.same("arith.mulf", &[x2, x]);
    let (c1, c2) = (f64c(b, a + 2.0), f64c(b, a + 3.0));
    let t1 = b.same("arith.mulf", &[c1, x3]);
    let t2 = b.same("arith.mulf", &[c2, x2]);
    let near = b.same("arith.subf", &[t1, t2]);
    let near = b.same("arith.addf", &[near, one]);
    let (ca, c5, c8, c4) = (
        f64c(b, a),
        f64c(b, 5.0 * a),
        f64c(b, 8.0 * a),
        f64c(b, 4.0 * a),
    );
    let f1 = b.same("arith.mulf", &[ca, x3]);
    let f2 = b.same("arith.mulf", &[c5, x2]);
    let f3 = b.same("arith.mulf", &[c8, x]);
    let far = b.same("arith.subf", &[f1, f2]);
    let far = b.same("arith.addf", &[far, f3]);
    let far = b.same("arith.subf", &[far, c4]);
    let le1 = scalar::cmpf(b, "ole", x, one);
    let lt2 = scalar::cmpf(b, "olt", x, two);
    let zero = f64c(b, 0.0);
    let w = scalar::select(b, lt2, far, zero);
    scalar::select(b, le1, near, w)
}

pub fn grid_sample(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let grid = cx.input(b.m, op, 1)?;
    let rank = shape_of(b.m, x).len();
    let sp = rank.saturating_sub(2);
    if !(1..=3).contains(&sp) || shape_of(b.m, grid).len() != rank {
        return Err(op_error(b.m, op, "GridSample expects 3-D to 5-D inputs"));
    }
    let mode = match attr_str(b.m, op, "mode").unwrap_or("linear") {
        "bilinear" | "linear" => "linear",
        "bicubic" | "cubic" => "cubic",
        _ => "nearest",
    };
    let padding = attr_str(b.m, op, "padding_mode")
        .unwrap_or("zeros")
        .to_string();
    let align = attr_int(b.m, op, "align_corners", 0) != 0;
    let dx = dims(b, x);
    let dg = dims(b, grid);
    let mut od = vec![dx[0], dx[1]];
    od.extend_from_slice(&dg[1..1 + sp]);
    let out = alloc_result(b, op, 0, &od)?;
    let elem = elem_of(b.m, x);
    let bounds = Bounds::new(b);
    let mut err = None;
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let one = f64c(b, 1.0);
        let zero = f64c(b, 0.0);
        let mut per_dim = Vec::with_capacity(sp);
        for d in 0..sp {
            // The grid's last dim lists (x, y, z): x is the last spatial dim.
            let comp = b.const_index((sp - 1 - d) as i64);
            let mut gi = vec![ivs[0]];
            gi.extend_from_slice(&ivs[2..]);
            gi.push(comp);
            let g = load_at(b, grid, &gi);
            let g = match scalar::convert(b, op, g, &Type::f64()) {
                Ok(g) => g,
                Err(e) => {
                    err = Some(e);
                    return;
                }
            };
            let size = dx[2 + d];
            let n = idx_to_f(b, size);
            let g1 = b.same("arith.addf", &[g, one]);
            let coord = if align {
                let nm1 = b.same("arith.subf", &[n, one]);
                let h = f64c(b, 0.5);
                let t = b.same("arith.mulf", &[g1, h]);
                b.same("arith.mulf", &[t, nm1])
            } else {
                let t = b.same("arith.mulf", &[g1, n]);
                let t = b.same("arith.subf", &[t, one]);
                let h = f64c(b, 0.5);
                b.same("arith.mulf", &[t, h])
            };
            let last_i = loops::sub(b, size, bounds.one);
            let last = idx_to_f(b, last_i);
            let coord = match padding.as_str() {
                "border" => {
                    let c = b.same("arith.maximumf", &[coord, zero]);
                    b.same("arith.minimumf", &[c, last])
                }
                "reflection" => {
                    let (lo, hi) = if align { (0.0, -1.0) } else { (-0.5, -0.5) };
                    // hi is relative to the size: computed at runtime below.
                    let hc = f64c(b, hi);
                    let hi_v = b.same("arith.addf", &[n, hc]);
                    let r = reflect_dyn(b, coord, lo, hi_v);
                    let c = b.same("arith.maximumf", &[r, zero]);
                    b.same("arith.minimumf", &[c, last])
                }
                _ => coord,
            };
            // Taps: (index clamped, weight, in bounds).
            let fl = b.same("math.floor", &[coord]);
            let i0 = f_to_idx(b, fl);
            let offsets: Vec<i64> = match mode {
                "nearest" => vec![0],
                "linear" => vec![0, 1],
                _ => vec![-1, 0, 1, 2],
            };
            let mut taps = Vec::new();
            for &k in &offsets {
                let (i, w) = match mode {
                    "nearest" => {
                        let r = b.same("math.roundeven", &[coord]);
                        (f_to_idx(b, r), one)
                    }
                    "linear" => {
                        let frac = b.same("arith.subf", &[coord, fl]);
                        let kv = b.const_index(k);
                        let i = loops::add(b, i0, kv);
                        let w = if k == 0 {
                            b.same("arith.subf", &[one, frac])
                        } else {
                            frac
                        };
                        (i, w)
                    }
                    _ => {
                        let kv = b.const_index(k);
                        let i = loops::add(b, i0, kv);
                        let kf = f64c(b, k as f64);
                        let p = b.same("arith.addf", &[fl, kf]);
                        let t = b.same("arith.subf", &[coord, p]);
                        (i, cubic_weight(b, t))
                    }
                };
                let ge = loops::cmp(b, "sge", i, bounds.zero);
                let le = loops::cmp(b, "sle", i, last_i);
                let ok = loops::and(b, ge, le);
                let c = b.same("arith.maxsi", &[i, bounds.zero]);
                let c = b.same("arith.minsi", &[c, last_i]);
                // Out-of-range taps: 0 with zeros padding, else the edge
                // (border) or the reflected sample (cubic reflection).
                let idx = if padding == "reflection" && mode == "cubic" {
                    let fi = idx_to_f(b, i);
                    let (lo, hi) = if align { (0.0, -1.0) } else { (-0.5, -0.5) };
                    let hc = f64c(b, hi);
                    let hi_v = b.same("arith.addf", &[n, hc]);
                    let r = reflect_dyn(b, fi, lo, hi_v);
                    let r = b.same("math.roundeven", &[r]);
                    let r = f_to_idx(b, r);
                    let r = b.same("arith.maxsi", &[r, bounds.zero]);
                    b.same("arith.minsi", &[r, last_i])
                } else {
                    c
                };
                let keep = if padding == "zeros" {
                    ok
                } else {
                    b.const_bool(true)
                };
                taps.push((idx, w, keep));
            }
            per_dim.push(taps);
        }
        let mut acc = f64c(b, 0.0);
        let total: usize = per_dim.iter().map(Vec::len).product();
        for k in 0..total {
            let mut rest = k;
            let mut w = one;
            let mut keep = b.const_bool(true);
            let mut idx = vec![ivs[0], ivs[1]];
            let mut spatial = vec![bounds.zero; sp];
            for d in (0..sp).rev() {
                let n = per_dim[d].len();
                let (i, wd, kd) = per_dim[d][rest % n];
                rest /= n;
                spatial[d] = i;
                w = b.same("arith.mulf", &[w, wd]);
                keep = loops::and(b, keep, kd);
            }
            idx.extend(spatial);
            let v = load_at(b, x, &idx);
            match scalar::convert(b, op, v, &Type::f64()) {
                Ok(vf) => {
                    let t = b.same("arith.mulf", &[w, vf]);
                    let s = b.same("arith.addf", &[acc, t]);
                    acc = scalar::select(b, keep, s, acc);
                }
                Err(e) => err = Some(e),
            }
        }
        match scalar::convert(b, op, acc, &elem) {
            Ok(r) => store_at(b, r, out, ivs),
            Err(e) => err = Some(e),
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(vec![out]),
    }
}

/// Reflects `x` into [lo, hi] as the ONNX reference does (any number of
/// flips); a degenerate range maps to 0.
fn reflect_dyn(b: &mut Builder<'_>, x: ValueId, lo: f64, hi: ValueId) -> ValueId {
    let l = f64c(b, lo);
    let s = b.same("arith.subf", &[hi, l]);
    let zero = f64c(b, 0.0);
    let degenerate = scalar::cmpf(b, "ole", s, zero);
    let one = f64c(b, 1.0);
    let s_safe = scalar::select(b, degenerate, one, s);
    let d = b.same("arith.subf", &[x, l]);
    let d = b.same("math.absf", &[d]);
    let q = b.same("arith.divf", &[d, s_safe]);
    let flips = b.same("math.floor", &[q]);
    let fq = b.same("arith.mulf", &[flips, s_safe]);
    let extra = b.same("arith.subf", &[d, fq]);
    let two = f64c(b, 2.0);
    let half = b.same("arith.divf", &[flips, two]);
    let hf = b.same("math.floor", &[half]);
    let hf2 = b.same("arith.mulf", &[hf, two]);
    let odd = scalar::cmpf(b, "one", hf2, flips);
    let a = b.same("arith.addf", &[l, extra]);
    let c = b.same("arith.subf", &[hi, extra]);
    let r = scalar::select(b, odd, c, a);
    scalar::select(b, degenerate, zero, r)
}
