//! Sliding windows: Conv, ConvInteger, ConvTranspose, MaxPool,
//! AveragePool and LpPool.

use super::dense::{from_f64s, row_strides, unravel, T};
use super::{Fold, Op};
use ir::elements::{DType, WideNum};
use onnx::ops;

/// The window attributes shared by the convolutions and pools.
struct WindowAttrs<'a> {
    strides: Option<Vec<i64>>,
    dilations: Option<Vec<i64>>,
    pads: Option<Vec<i64>>,
    auto_pad: &'a str,
    ceil_mode: bool,
}

macro_rules! window_attrs {
    ($v:expr, $ceil:expr) => {{
        let v = $v;
        WindowAttrs {
            strides: v.strides(),
            dilations: v.dilations(),
            pads: v.pads(),
            auto_pad: v.auto_pad(),
            ceil_mode: $ceil,
        }
    }};
}

/// A window's geometry over the spatial dims.
struct Window {
    strides: Vec<usize>,
    dil: Vec<usize>,
    pad_begin: Vec<i64>,
    out: Vec<usize>,
}

/// At least 1 per dim, 1 when absent.
fn positive(v: &Option<Vec<i64>>, r: usize) -> Vec<usize> {
    v.as_ref().map_or(vec![1; r], |v| {
        v.iter().map(|&s| s.max(1) as usize).collect()
    })
}

impl Window {
    fn new(w: &WindowAttrs, spatial: &[usize], kernel: &[usize]) -> Window {
        let r = spatial.len();
        let strides = positive(&w.strides, r);
        let dil = positive(&w.dilations, r);
        let pads = w.pads.clone().unwrap_or_else(|| vec![0; 2 * r]);
        let mut pad_begin = vec![0i64; r];
        let mut out = vec![0usize; r];
        for i in 0..r {
            let ext = ((kernel[i] - 1) * dil[i] + 1) as i64;
            let (inp, s) = (spatial[i] as i64, strides[i] as i64);
            match w.auto_pad {
                "SAME_UPPER" | "SAME_LOWER" => {
                    let o = (inp + s - 1) / s;
                    let total = ((o - 1) * s + ext - inp).max(0);
                    pad_begin[i] = if w.auto_pad == "SAME_UPPER" {
                        total / 2
                    } else {
                        total - total / 2
                    };
                    out[i] = o as usize;
                }
                "VALID" => out[i] = ((inp - ext) / s + 1).max(0) as usize,
                _ => {
                    let (pb, pe) = (
                        pads.get(i).copied().unwrap_or(0),
                        pads.get(i + r).copied().unwrap_or(0),
                    );
                    let span = inp + pb + pe - ext;
                    let mut o = if w.ceil_mode {
                        (span + s - 1).div_euclid(s) + 1
                    } else {
                        span.div_euclid(s) + 1
                    };
                    if w.ceil_mode && (o - 1) * s >= inp + pb {
                        o -= 1;
                    }
                    pad_begin[i] = pb;
                    out[i] = o.max(0) as usize;
                }
            }
        }
        Window {
            strides,
            dil,
            pad_begin,
            out,
        }
    }

    /// Input spatial positions of the window at `o` (None in padding).
    fn taps(&self, o: &[usize], spatial: &[usize], kpos: &[usize]) -> Option<Vec<usize>> {
        (0..o.len())
            .map(|i| {
                let p = (o[i] * self.strides[i] + kpos[i] * self.dil[i]) as i64 - self.pad_begin[i];
                usize::try_from(p).ok().filter(|&p| p < spatial[i])
            })
            .collect()
    }
}

/// The result of a window op in the dtype of result 0.
fn result(o: Op, shape: Vec<usize>, vals: Vec<f64>) -> Fold {
    let dtype = o.dtype(0)?;
    o.packed(vec![T::new(dtype, shape, from_f64s(dtype, vals))])
}

/// A (grouped) convolution of `x` by `w` after subtracting the zero
/// points `xz` and `wzs` (per output channel or one).
struct ConvArgs<'a> {
    w: &'a T,
    b: Option<&'a T>,
    xz: f64,
    wzs: Vec<f64>,
    group: i64,
}

fn convolve(x: &T, c: &ConvArgs, win: &WindowAttrs) -> (Vec<usize>, Vec<f64>) {
    let (xv, wv) = (x.floats(), c.w.floats());
    let (n, ch_in) = (x.shape[0], x.shape[1]);
    let spatial = &x.shape[2..];
    let mo = c.w.shape[0];
    let g = c.group.max(1) as usize;
    let cg = ch_in / g;
    let kernel: Vec<usize> = c.w.shape[2..].to_vec();
    let win = Window::new(win, spatial, &kernel);
    let mut shape = vec![n, mo];
    shape.extend_from_slice(&win.out);
    let nout: usize = win.out.iter().product();
    let nk: usize = kernel.iter().product();
    let xs = row_strides(&x.shape);
    let mut out = vec![0.0; n * mo * nout];
    let (mut o, mut kp) = (vec![0; spatial.len()], vec![0; spatial.len()]);
    let bias = c.b.map(T::floats);
    for bn in 0..n {
        for oc in 0..mo {
            let grp = oc / (mo / g).max(1);
            let wz = c.wzs.get(oc).or(c.wzs.first()).copied().unwrap_or(0.0);
            for f in 0..nout {
                unravel(f, &win.out, &mut o);
                let mut acc = bias.as_ref().map_or(0.0, |b| b[oc]);
                for ic in 0..cg {
                    let ch = grp * cg + ic;
                    for kf in 0..nk {
                        unravel(kf, &kernel, &mut kp);
                        let wt = wv[(oc * cg + ic) * nk + kf] - wz;
                        let Some(pos) = win.taps(&o, spatial, &kp) else {
                            continue;
                        };
                        let xi = bn * xs[0]
                            + ch * xs[1]
                            + pos.iter().zip(&xs[2..]).map(|(p, s)| p * s).sum::<usize>();
                        acc += (xv[xi] - c.xz) * wt;
                    }
                }
                out[(bn * mo + oc) * nout + f] = acc;
            }
        }
    }
    (shape, out)
}

pub fn conv(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let w = ts.get(1).ok_or_else(|| o.err("missing operand W"))?;
    if x.rank() < 3 || w.rank() != x.rank() {
        return Ok(None);
    }
    let v = ops::Conv::of(o.m, o.op);
    let args = ConvArgs {
        w,
        b: ts.get(2),
        xz: 0.0,
        wzs: Vec::new(),
        group: v.group(),
    };
    let (s, vals) = convolve(x, &args, &window_attrs!(v, false));
    result(o, s, vals)
}

pub fn conv_integer(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let w = ts.get(1).ok_or_else(|| o.err("missing operand W"))?;
    if x.rank() < 3 || w.rank() != x.rank() {
        return Ok(None);
    }
    let v = ops::ConvInteger::of(o.m, o.op);
    let args = ConvArgs {
        w,
        b: None,
        xz: ts.get(2).map_or(0.0, |t| t.f(0)),
        wzs: ts.get(3).map(T::floats).unwrap_or_default(),
        group: v.group(),
    };
    let (s, vals) = convolve(x, &args, &window_attrs!(v, false));
    result(o, s, vals)
}

/// ConvTranspose's explicit pads and output spatial shape.
fn transpose_geometry(
    v: &ops::ConvTranspose<'_>,
    spatial: &[usize],
    full: impl Fn(usize) -> i64,
    strides: &[i64],
) -> (Vec<i64>, Vec<usize>) {
    let r = spatial.len();
    let auto = v.auto_pad();
    let mut out_shape = v.output_shape();
    let pads: Vec<i64> = match v.pads() {
        Some(p) => p,
        None if auto == "SAME_UPPER" || auto == "SAME_LOWER" => {
            let os = out_shape
                .clone()
                .unwrap_or_else(|| (0..r).map(|i| spatial[i] as i64 * strides[i]).collect());
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for t in (0..r).map(|i| full(i) - os[i]) {
                let (lo, hi) = (t / 2, t - t / 2);
                let (first, second) = if auto == "SAME_UPPER" {
                    (lo, hi)
                } else {
                    (hi, lo)
                };
                a.push(first);
                b.push(second);
            }
            out_shape = Some(os);
            a.into_iter().chain(b).collect()
        }
        None => vec![0; 2 * r],
    };
    let os: Vec<usize> = match out_shape {
        Some(o) => o.iter().map(|&d| d.max(0) as usize).collect(),
        None => (0..r)
            .map(|i| (full(i) - pads[i] - pads[i + r]).max(0) as usize)
            .collect(),
    };
    (pads, os)
}

pub fn conv_transpose(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let w = ts.get(1).ok_or_else(|| o.err("missing operand W"))?;
    if x.rank() < 3 || w.rank() != x.rank() {
        return Ok(None);
    }
    let v = ops::ConvTranspose::of(o.m, o.op);
    let (xv, wv) = (x.floats(), w.floats());
    let (n, c) = (x.shape[0], x.shape[1]);
    let spatial = &x.shape[2..];
    let r = spatial.len();
    let g = v.group().max(1) as usize;
    let mg = w.shape[1];
    let mo = mg * g;
    let kernel = &w.shape[2..];
    let strides = v.strides().unwrap_or_else(|| vec![1; r]);
    let dil = v.dilations().unwrap_or_else(|| vec![1; r]);
    let opad = v.output_padding().unwrap_or_else(|| vec![0; r]);
    let full = |i: usize| {
        strides[i] * (spatial[i] as i64 - 1) + opad[i] + (kernel[i] as i64 - 1) * dil[i] + 1
    };
    let (pads, os) = transpose_geometry(&v, spatial, full, &strides);
    let nout: usize = os.iter().product();
    let nin: usize = spatial.iter().product();
    let nk: usize = kernel.iter().product();
    let cg = c / g;
    let mut out = vec![0.0; n * mo * nout];
    let bias = ts.get(2).map(T::floats);
    let (mut ip, mut kp) = (vec![0; r], vec![0; r]);
    for bn in 0..n {
        for ch in 0..c {
            let grp = ch / cg.max(1);
            for f in 0..nin {
                unravel(f, spatial, &mut ip);
                let xval = xv[(bn * c + ch) * nin + f];
                for kf in 0..nk {
                    unravel(kf, kernel, &mut kp);
                    // The output position this tap writes, if inside.
                    let mut at = Some(0usize);
                    for i in 0..r {
                        let p = ip[i] as i64 * strides[i] + kp[i] as i64 * dil[i] - pads[i];
                        at = at.filter(|_| p >= 0 && p < os[i] as i64);
                        at = at.map(|a| a * os[i] + p.max(0) as usize);
                    }
                    let Some(at) = at else { continue };
                    for j in 0..mg {
                        let oc = grp * mg + j;
                        out[(bn * mo + oc) * nout + at] += xval * wv[(ch * mg + j) * nk + kf];
                    }
                }
            }
        }
        if let Some(bv) = &bias {
            for oc in 0..mo {
                for v in &mut out[(bn * mo + oc) * nout..(bn * mo + oc + 1) * nout] {
                    *v += bv[oc];
                }
            }
        }
    }
    let mut shape = vec![n, mo];
    shape.extend_from_slice(&os);
    result(o, shape, out)
}

/// The pools' reductions.
#[derive(Clone, Copy)]
enum Pool {
    Max,
    Average { include_pad: bool },
    Lp { p: f64 },
}

/// Pooled values and, for MaxPool, the flat index of each maximum.
fn pool(x: &T, kind: Pool, w: &WindowAttrs, kernel: &[usize]) -> (Vec<usize>, Vec<f64>, Vec<i64>) {
    let xv = x.floats();
    let (n, c) = (x.shape[0], x.shape[1]);
    let spatial = &x.shape[2..];
    let win = Window::new(w, spatial, kernel);
    let nout: usize = win.out.iter().product();
    let nk: usize = kernel.iter().product();
    let xs = row_strides(&x.shape);
    let r = spatial.len();
    let mut out = Vec::with_capacity(n * c * nout);
    let mut idx = Vec::with_capacity(n * c * nout);
    let (mut o, mut kp) = (vec![0; r], vec![0; r]);
    // Padded extent for count_include_pad: the window clipped to the padded input.
    let pads = w.pads.clone().unwrap_or_else(|| vec![0; 2 * r]);
    for bc in 0..n * c {
        for f in 0..nout {
            unravel(f, &win.out, &mut o);
            let (mut acc, mut cnt, mut best, mut arg) = (0.0, 0usize, f64::NEG_INFINITY, 0i64);
            let mut padded_cnt = 0usize;
            for kf in 0..nk {
                unravel(kf, kernel, &mut kp);
                let inside_padded = (0..r).all(|i| {
                    let q = (o[i] * win.strides[i] + kp[i] * win.dil[i]) as i64 - win.pad_begin[i];
                    q < spatial[i] as i64 + pads.get(i + r).copied().unwrap_or(0)
                });
                if inside_padded {
                    padded_cnt += 1;
                }
                let Some(pos) = win.taps(&o, spatial, &kp) else {
                    continue;
                };
                let off = pos.iter().zip(&xs[2..]).map(|(p, s)| p * s).sum::<usize>();
                let v = xv[bc * xs[1] + off];
                cnt += 1;
                match kind {
                    Pool::Max if v > best => {
                        best = v;
                        arg = (bc * xs[1] + off) as i64;
                    }
                    Pool::Max => {}
                    Pool::Lp { p } => acc += v.abs().powf(p),
                    Pool::Average { .. } => acc += v,
                }
            }
            out.push(match kind {
                Pool::Max => best,
                Pool::Lp { p } => acc.powf(1.0 / p),
                Pool::Average { include_pad } => {
                    acc / (if include_pad { padded_cnt } else { cnt }).max(1) as f64
                }
            });
            idx.push(arg);
        }
    }
    let mut shape = vec![n, c];
    shape.extend_from_slice(&win.out);
    (shape, out, idx)
}

/// A pool's values, and MaxPool's indices as a second result.
fn pool_op(o: Op, kind: Pool, w: &WindowAttrs, kernel: &[i64], storage_order: i64) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    if x.rank() < 3 {
        return Ok(None);
    }
    let kernel: Vec<usize> = kernel.iter().map(|&k| k.max(1) as usize).collect();
    if kernel.len() != x.rank() - 2 {
        return Err(o.err("bad pool"));
    }
    let (shape, vals, idx) = pool(x, kind, w, &kernel);
    let mut outs = vec![T::new(dtype, shape.clone(), from_f64s(dtype, vals))];
    if matches!(kind, Pool::Max) && o.nres() == 2 {
        if storage_order != 0 {
            return Ok(None);
        }
        let idx = idx.into_iter().map(WideNum::from_i64).collect();
        outs.push(T::new(DType::I64, shape, idx));
    }
    o.packed(outs)
}

pub fn max_pool(o: Op) -> Fold {
    let v = ops::MaxPool::of(o.m, o.op);
    let w = window_attrs!(v, v.ceil_mode() != 0);
    pool_op(o, Pool::Max, &w, &v.kernel_shape(), v.storage_order())
}

pub fn average_pool(o: Op) -> Fold {
    let v = ops::AveragePool::of(o.m, o.op);
    let w = window_attrs!(v, v.ceil_mode() != 0);
    let kind = Pool::Average {
        include_pad: v.count_include_pad() != 0,
    };
    pool_op(o, kind, &w, &v.kernel_shape(), 0)
}

pub fn lp_pool(o: Op) -> Fold {
    let v = ops::LpPool::of(o.m, o.op);
    let w = window_attrs!(v, v.ceil_mode() != 0);
    let kind = Pool::Lp { p: v.p() as f64 };
    pool_op(o, kind, &w, &v.kernel_shape(), 0)
}
