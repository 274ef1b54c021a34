//! Less common deterministic ops: Dropout (inference), BitCast, window
//! functions, CenterCropPad, SwiGLU, CausalConvWithState, TensorScatter
//! and Unique.

use super::dense::{from_f64s, row_strides, unravel, T};
use super::{Fold, Op};
use ir::elements::{DType, Elements, WideNum};
use onnx::ops;

fn f32r(v: f64) -> f64 {
    f64::from(v as f32)
}

/// Inference-mode Dropout (or training with ratio 0): the input, and a
/// mask of ones.
pub fn dropout(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let training = ts.get(2).is_some_and(|t| t.f(0) != 0.0);
    let ratio = ts.get(1).map_or(0.5, |t| t.f(0));
    if training && ratio != 0.0 {
        return Ok(None);
    }
    let mut outs = vec![x.clone()];
    if o.nres() > 1 {
        let ones = vec![WideNum::from_u64(1); x.len()];
        outs.push(T::new(DType::Bool, x.shape.clone(), ones));
    }
    o.packed(outs)
}

/// BitCast between dtypes of one width: the same bytes.
pub fn bit_cast(o: Op) -> Fold {
    let Some(x) = o.input(0) else { return Ok(None) };
    let to = o.dtype(0)?;
    if to.bits() != x.dtype().bits() {
        return Ok(None);
    }
    let r = Elements::from_bytes(to, x.shape().to_vec(), x.to_contiguous_bytes())
        .map_err(|er| o.err(er.to_string()))?;
    Ok(Some(vec![r]))
}

/// The window functions.
#[derive(Clone, Copy)]
pub enum Window {
    Hann,
    Hamming,
    Blackman,
}

pub fn window(o: Op, w: Window) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let periodic = match w {
        Window::Hann => ops::HannWindow::of(o.m, o.op).periodic(),
        Window::Hamming => ops::HammingWindow::of(o.m, o.op).periodic(),
        Window::Blackman => ops::BlackmanWindow::of(o.m, o.op).periodic(),
    } != 0;
    let n = x.f(0).max(0.0) as usize;
    let d = if periodic {
        n as f64
    } else {
        (n as f64 - 1.0).max(1.0)
    };
    let tau = 2.0 * std::f64::consts::PI;
    let vals = (0..n)
        .map(|i| {
            let t = i as f64 / d;
            match w {
                Window::Hann => 0.5 - 0.5 * (tau * t).cos(),
                Window::Hamming => 25.0 / 46.0 - 21.0 / 46.0 * (tau * t).cos(),
                Window::Blackman => 0.42 - 0.5 * (tau * t).cos() + 0.08 * (2.0 * tau * t).cos(),
            }
        })
        .collect();
    o.packed(vec![T::new(dtype, vec![n], from_f64s(dtype, vals))])
}

pub fn center_crop_pad(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let shape = ts.get(1).ok_or_else(|| o.err("shape"))?.ints();
    let rank = x.rank();
    let axes = ops::CenterCropPad::of(o.m, o.op).axes();
    let axes = onnx::axis::or_all(axes.as_deref(), rank).ok_or_else(|| o.err("axes"))?;
    let mut out_shape = x.shape.clone();
    // Output index i on an axis reads input index i + shift.
    let mut shift = vec![0i64; rank];
    for (&a, &sh) in axes.iter().zip(&shape) {
        let dim = *x.shape.get(a).ok_or_else(|| o.err("axis"))? as i64;
        out_shape[a] = sh.max(0) as usize;
        shift[a] = if sh <= dim {
            (dim - sh) / 2
        } else {
            -((sh - dim) / 2)
        };
    }
    let n: usize = out_shape.iter().product();
    let xs = row_strides(&x.shape);
    let mut idx = vec![0; rank];
    let data = (0..n)
        .map(|f| {
            unravel(f, &out_shape, &mut idx);
            let mut off = 0usize;
            for i in 0..rank {
                let j = idx[i] as i64 + shift[i];
                if j < 0 || j >= x.shape[i] as i64 {
                    return WideNum::default();
                }
                off += j as usize * xs[i];
            }
            x.data[off]
        })
        .collect();
    o.packed(vec![T::new(x.dtype, out_shape, data)])
}

pub fn swiglu(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let b = ts
        .get(1)
        .ok_or_else(|| o.err("missing operand B"))?
        .floats();
    let alpha = ops::SwiGLU::of(o.m, o.op).alpha();
    let y = x
        .floats()
        .iter()
        .zip(&b)
        .map(|(&a, &b)| a / (1.0 + (-alpha * a).exp()) * b)
        .collect();
    o.packed(vec![x.with_floats(dtype, y)])
}

/// Each (batch, channel) row of `x` [B, C, L] after its `k - 1` past
/// values (zeros without a state).
fn with_past(
    xf: &[f64],
    past: Option<&[f64]>,
    (b, c, l): (usize, usize, usize),
    k: usize,
) -> Vec<f64> {
    let total = l + k - 1;
    let mut padded = vec![0.0; b * c * total];
    for row in 0..b * c {
        for t in 0..total {
            padded[row * total + t] = if t < k - 1 {
                past.map_or(0.0, |p| p[row * (k - 1) + t])
            } else {
                xf[row * l + t - (k - 1)]
            };
        }
    }
    padded
}

/// A depthwise causal convolution over the sequence with a carried state:
/// the output and the last `k - 1` inputs as the next state.
pub fn causal_conv(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let w = ts.get(1).ok_or_else(|| o.err("weight"))?.floats();
    let bias = ts.get(2).map(T::floats);
    let &[b, c, l] = x.shape.as_slice() else {
        return Ok(None);
    };
    let k = ts.get(1).and_then(|t| t.shape.get(2).copied()).unwrap_or(1);
    let past = ts.get(3).map(T::floats);
    let silu = ops::CausalConvWithState::of(o.m, o.op).activation() != "none";
    let total = l + k - 1;
    let padded = with_past(&x.floats(), past.as_deref(), (b, c, l), k);
    let mut y = vec![0.0; b * c * l];
    let mut state = Vec::with_capacity(b * c * (k - 1));
    for bi in 0..b {
        for ch in 0..c {
            let row = &padded[(bi * c + ch) * total..(bi * c + ch + 1) * total];
            for t in 0..l {
                let mut acc = bias.as_ref().map_or(0.0, |bv| bv[ch]);
                for j in 0..k {
                    acc += row[t + j] * w[ch * k + j];
                }
                let acc = f32r(acc);
                y[(bi * c + ch) * l + t] = if silu {
                    acc / (1.0 + (-acc).exp())
                } else {
                    acc
                };
            }
            state.extend_from_slice(&row[total - (k - 1)..]);
        }
    }
    let mut outs = vec![T::new(dtype, x.shape.clone(), from_f64s(dtype, y))];
    if o.nres() > 1 {
        outs.push(T::new(
            x.dtype,
            vec![b, c, k - 1],
            from_f64s(x.dtype, state),
        ));
    }
    o.packed(outs)
}

pub fn tensor_scatter(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let upd = ts.get(1).ok_or_else(|| o.err("update"))?;
    let rank = x.rank();
    let v = ops::TensorScatter::of(o.m, o.op);
    let axis = onnx::axis::normalize(v.axis(), rank).ok_or_else(|| o.err("axis"))?;
    let circular = v.mode() == "circular";
    let wi = ts
        .get(2)
        .map(T::ints)
        .unwrap_or_else(|| vec![0; x.shape[0]]);
    let mut out = x.clone();
    let xs = row_strides(&x.shape);
    let mut idx = vec![0; rank];
    for f in 0..upd.len() {
        unravel(f, &upd.shape, &mut idx);
        let mut p = wi[idx[0]] + idx[axis] as i64;
        if circular {
            p = p.rem_euclid(x.shape[axis] as i64);
        }
        idx[axis] = usize::try_from(p).map_err(|_| o.err("write index"))?;
        let off: usize = idx.iter().zip(&xs).map(|(i, s)| i * s).sum();
        *out.data
            .get_mut(off)
            .ok_or_else(|| o.err("write index out of range"))? = upd.data[f];
    }
    o.packed(vec![out])
}

/// The distinct slices of `src` along axis `a` ([outer, d, inner]): each
/// slice's values with the index of its first occurrence, and the slice
/// each index holds.
fn distinct_slices(src: &T, a: usize) -> (Vec<(Vec<f64>, usize)>, Vec<usize>) {
    let d = src.shape[a];
    let outer: usize = src.shape[..a].iter().product();
    let inner: usize = src.shape[a + 1..].iter().product();
    let sf = src.floats();
    let slice = |i: usize| -> Vec<f64> {
        (0..outer)
            .flat_map(|o| (0..inner).map(move |k| (o, k)))
            .map(|(o, k)| sf[(o * d + i) * inner + k])
            .collect()
    };
    let mut keys: Vec<(Vec<f64>, usize)> = Vec::new();
    let mut inverse_of = vec![0usize; d];
    for (i, inv) in inverse_of.iter_mut().enumerate() {
        let s = slice(i);
        match keys.iter().position(|k| k.0 == s) {
            Some(p) => *inv = p,
            None => {
                *inv = keys.len();
                keys.push((s, i));
            }
        }
    }
    (keys, inverse_of)
}

fn i64s(v: Vec<usize>) -> Vec<WideNum> {
    v.into_iter().map(|x| WideNum::from_i64(x as i64)).collect()
}

pub fn unique(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let v = ops::Unique::of(o.m, o.op);
    let sorted = v.sorted() != 0;
    let (src, a) = match v.axis() {
        Some(ax) => match onnx::axis::normalize(ax, x.rank()) {
            Some(a) => (x.clone(), a),
            None => return Ok(None),
        },
        None => (T::new(x.dtype, vec![x.len()], x.data.clone()), 0),
    };
    let (d, outer) = (src.shape[a], src.shape[..a].iter().product::<usize>());
    let inner: usize = src.shape[a + 1..].iter().product();
    let (keys, inverse_of) = distinct_slices(&src, a);
    let mut order: Vec<usize> = (0..keys.len()).collect();
    if sorted {
        order.sort_by(|&p, &q| {
            keys[p]
                .0
                .partial_cmp(&keys[q].0)
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    }
    let mut rank_of = vec![0; keys.len()];
    for (r, &k) in order.iter().enumerate() {
        rank_of[k] = r;
    }
    let u = order.len();
    let mut shape = src.shape.clone();
    shape[a] = u;
    let mut ydata = vec![WideNum::default(); outer * u * inner];
    for (r, &k) in order.iter().enumerate() {
        let first = keys[k].1;
        for i in 0..outer {
            for j in 0..inner {
                ydata[(i * u + r) * inner + j] = src.data[(i * d + first) * inner + j];
            }
        }
    }
    let counts: Vec<usize> = order
        .iter()
        .map(|&k| inverse_of.iter().filter(|&&i| i == k).count())
        .collect();
    let firsts: Vec<usize> = order.iter().map(|&k| keys[k].1).collect();
    let inv: Vec<usize> = inverse_of.iter().map(|&k| rank_of[k]).collect();
    let mut outs = vec![T::new(x.dtype, shape, ydata)];
    for v in [firsts, inv, counts]
        .into_iter()
        .take(o.nres().saturating_sub(1))
    {
        outs.push(T::new(DType::I64, vec![v.len()], i64s(v)));
    }
    o.packed(outs)
}
