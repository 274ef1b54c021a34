//! Reductions and axis-wise kernels: Reduce*, ArgMax/ArgMin, Softmax,
//! LogSoftmax, Hardmax, CumSum/CumProd, TopK and the global pools.

use super::dense::{from_f64s, unravel, wide_of, T};
use super::gather::Combine;
use super::{Fold, Op};
use ir::elements::{DType, NumClass, WideNum};
use ir::{Module, OpId, Result};
use onnx::axis::normalize;
use onnx::ops;

/// Groups of flat indices that reduce together, in output order.
pub(super) fn groups(shape: &[usize], reduced: &[bool]) -> (Vec<usize>, Vec<Vec<usize>>) {
    let out_shape: Vec<usize> = shape
        .iter()
        .zip(reduced)
        .map(|(&d, &r)| if r { 1 } else { d })
        .collect();
    let n_out: usize = out_shape.iter().product();
    let mut gs = vec![Vec::new(); n_out];
    let n: usize = shape.iter().product();
    let mut idx = vec![0; shape.len()];
    for f in 0..n {
        unravel(f, shape, &mut idx);
        let mut o = 0;
        for (i, &d) in out_shape.iter().enumerate() {
            o = o * d + if reduced[i] { 0 } else { idx[i] };
        }
        gs[o].push(f);
    }
    (out_shape, gs)
}

/// Lines along one axis: each the flat indices of one 1-D slice.
pub(super) fn lines(shape: &[usize], axis: usize) -> Vec<Vec<usize>> {
    let mut red = vec![false; shape.len()];
    red[axis] = true;
    groups(shape, &red).1
}

/// The input of an op along an axis with the axis normalized; `None`
/// leaves the op (a scalar has no axis).
fn along(o: Op, x: &T, axis: i64) -> Result<Option<usize>> {
    if x.rank() == 0 {
        return Ok(None);
    }
    normalize(axis, x.rank())
        .map(Some)
        .ok_or_else(|| o.err("axis out of range"))
}

/// The reductions of the Reduce* ops.
#[derive(Clone, Copy)]
pub enum Reduction {
    Sum,
    Prod,
    Mean,
    Max,
    Min,
    SumSquare,
    L1,
    L2,
    LogSum,
    LogSumExp,
}

fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

fn nan_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

impl Reduction {
    /// `keepdims` and `noop_with_empty_axes` of the op.
    fn flags(self, m: &Module, op: OpId) -> (bool, bool) {
        macro_rules! of {
            ($view:ident) => {{
                let v = ops::$view::of(m, op);
                (v.keepdims() != 0, v.noop_with_empty_axes() != 0)
            }};
        }
        match self {
            Reduction::Sum => of!(ReduceSum),
            Reduction::Prod => of!(ReduceProd),
            Reduction::Mean => of!(ReduceMean),
            Reduction::Max => of!(ReduceMax),
            Reduction::Min => of!(ReduceMin),
            Reduction::SumSquare => of!(ReduceSumSquare),
            Reduction::L1 => of!(ReduceL1),
            Reduction::L2 => of!(ReduceL2),
            Reduction::LogSum => of!(ReduceLogSum),
            Reduction::LogSumExp => of!(ReduceLogSumExp),
        }
    }

    /// The reduction of group `g` of an integer tensor computed on
    /// integers (wrapping), `None` for the ones computed in f64.
    fn on_ints(self, x: &T, g: &[usize]) -> Option<WideNum> {
        use Reduction::*;
        let c = x.class();
        let ints = || g.iter().map(|&i| x.data[i].i64());
        let uints = || g.iter().map(|&i| x.data[i].u64());
        Some(match (self, c) {
            (_, NumClass::Float) => return None,
            (Sum, _) => WideNum::from_i64(ints().fold(0, i64::wrapping_add)),
            (Prod, _) => WideNum::from_i64(ints().fold(1, i64::wrapping_mul)),
            (Max, NumClass::Signed) => WideNum::from_i64(ints().max().unwrap_or(i64::MIN)),
            (Min, NumClass::Signed) => WideNum::from_i64(ints().min().unwrap_or(i64::MAX)),
            (Max, NumClass::Unsigned) => WideNum::from_u64(uints().max().unwrap_or(0)),
            (Min, NumClass::Unsigned) => WideNum::from_u64(uints().min().unwrap_or(u64::MAX)),
            (SumSquare, _) => {
                WideNum::from_i64(ints().map(|v| v.wrapping_mul(v)).fold(0, i64::wrapping_add))
            }
            (L1, _) => WideNum::from_i64(ints().map(i64::wrapping_abs).fold(0, i64::wrapping_add)),
            (Mean | L2 | LogSum | LogSumExp, _) => return None,
        })
    }

    /// The reduction of `vals` in f64.
    fn on_floats(self, vals: &[f64]) -> f64 {
        let it = || vals.iter().copied();
        match self {
            Reduction::Sum => it().sum(),
            Reduction::Prod => it().product(),
            // Empty: 0, as the kernel (ONNX leaves it undefined).
            Reduction::Mean => it().sum::<f64>() / vals.len().max(1) as f64,
            Reduction::Max => it().fold(f64::NEG_INFINITY, nan_max),
            Reduction::Min => it().fold(f64::INFINITY, nan_min),
            Reduction::SumSquare => it().map(|v| v * v).sum(),
            Reduction::L1 => it().map(f64::abs).sum(),
            Reduction::L2 => it().map(|v| v * v).sum::<f64>().sqrt(),
            Reduction::LogSum => it().sum::<f64>().ln(),
            Reduction::LogSumExp => {
                let mx = it().fold(f64::NEG_INFINITY, f64::max);
                let mx = if mx.is_finite() { mx } else { 0.0 };
                mx + it().map(|x| (x - mx).exp()).sum::<f64>().ln()
            }
        }
    }
}

/// The reduced dims (`None`: no axes and `noop_with_empty_axes`).
fn reduce_axes(o: Op, axes: Option<&T>, rank: usize, noop: bool) -> Result<Option<Vec<bool>>> {
    let axes = axes.map(T::ints).filter(|a| !a.is_empty());
    let Some(axes) = axes else {
        return Ok((!noop).then(|| vec![true; rank]));
    };
    let mut red = vec![false; rank];
    for a in axes {
        let a = normalize(a, rank).ok_or_else(|| o.err("axis out of range"))?;
        red[a] = true;
    }
    Ok(Some(red))
}

pub fn reduce(o: Op, r: Reduction) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let (keep, noop) = r.flags(o.m, o.op);
    let axes = ts.get(1).filter(|a| a.len() > 0);
    if x.rank() == 0 && axes.is_some() {
        // A scalar has no axis to name.
        return Ok(None);
    }
    let Some(red) = reduce_axes(o, axes, x.rank(), noop)? else {
        return o.packed(vec![x.clone()]);
    };
    let (out_shape, gs) = groups(&x.shape, &red);
    let xf = x.floats();
    let data: Vec<WideNum> = gs
        .iter()
        .map(|g| {
            r.on_ints(x, g).unwrap_or_else(|| {
                let vals: Vec<f64> = g.iter().map(|&i| xf[i]).collect();
                wide_of(dtype.class(), r.on_floats(&vals))
            })
        })
        .collect();
    let shape = if keep {
        out_shape
    } else {
        x.shape
            .iter()
            .zip(&red)
            .filter(|(_, &r)| !r)
            .map(|(&d, _)| d)
            .collect()
    };
    o.packed(vec![T::new(dtype, shape, data)])
}

/// The index of the largest (`max`) or smallest value of each line.
fn arg(o: Op, axis: i64, keepdims: bool, last: bool, max: bool) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let Some(a) = along(o, x, axis)? else {
        return Ok(None);
    };
    let xf = x.floats();
    let mut red = vec![false; x.rank()];
    red[a] = true;
    let (mut shape, gs) = groups(&x.shape, &red);
    let data = gs
        .iter()
        .map(|g| {
            let mut best = 0usize;
            for (k, &i) in g.iter().enumerate() {
                let (v, b) = (xf[i], xf[g[best]]);
                let better = if max { v > b } else { v < b };
                if better || (last && v == b) {
                    best = k;
                }
            }
            WideNum::from_i64(best as i64)
        })
        .collect();
    if !keepdims {
        shape.remove(a);
    }
    o.packed(vec![T::new(DType::I64, shape, data)])
}

pub fn arg_max(o: Op) -> Fold {
    let v = ops::ArgMax::of(o.m, o.op);
    arg(
        o,
        v.axis(),
        v.keepdims() != 0,
        v.select_last_index() != 0,
        true,
    )
}

pub fn arg_min(o: Op) -> Fold {
    let v = ops::ArgMin::of(o.m, o.op);
    arg(
        o,
        v.axis(),
        v.keepdims() != 0,
        v.select_last_index() != 0,
        false,
    )
}

/// Softmax, LogSoftmax and Hardmax along one axis.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Normalized {
    Softmax,
    LogSoftmax,
    Hardmax,
}

fn softmax_like(o: Op, axis: i64, kind: Normalized) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let Some(a) = along(o, x, axis)? else {
        return Ok(None);
    };
    let xf = x.floats();
    let mut out = vec![0.0; x.len()];
    for l in lines(&x.shape, a) {
        let mx = l.iter().map(|&i| xf[i]).fold(f64::NEG_INFINITY, f64::max);
        if kind == Normalized::Hardmax {
            if let Some(&first) = l.iter().find(|&&i| xf[i] == mx) {
                out[first] = 1.0;
            }
            continue;
        }
        let s: f64 = l.iter().map(|&i| (xf[i] - mx).exp()).sum();
        for &i in &l {
            out[i] = if kind == Normalized::Softmax {
                (xf[i] - mx).exp() / s
            } else {
                xf[i] - mx - s.ln()
            };
        }
    }
    o.packed(vec![x.with_floats(dtype, out)])
}

pub fn softmax(o: Op) -> Fold {
    softmax_like(o, ops::Softmax::of(o.m, o.op).axis(), Normalized::Softmax)
}

pub fn log_softmax(o: Op) -> Fold {
    let axis = ops::LogSoftmax::of(o.m, o.op).axis();
    softmax_like(o, axis, Normalized::LogSoftmax)
}

pub fn hardmax(o: Op) -> Fold {
    softmax_like(o, ops::Hardmax::of(o.m, o.op).axis(), Normalized::Hardmax)
}

/// Running sums (`Add`) or products (`Mul`) along the axis operand.
fn cumulative(o: Op, how: Combine, exclusive: bool, reverse: bool) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let ax = ts.get(1).ok_or_else(|| o.err("axis"))?.ints();
    let Some(a) = along(o, x, *ax.first().ok_or_else(|| o.err("axis"))?)? else {
        return Ok(None);
    };
    let c = x.class();
    let mut out = x.clone();
    for mut l in lines(&x.shape, a) {
        if reverse {
            l.reverse();
        }
        let mut acc = wide_of(c, if how == Combine::Mul { 1.0 } else { 0.0 });
        for &i in &l {
            let next = how.apply(c, acc, x.data[i]);
            out.data[i] = if exclusive { acc } else { next };
            acc = next;
        }
    }
    o.packed(vec![out])
}

pub fn cum_sum(o: Op) -> Fold {
    let v = ops::CumSum::of(o.m, o.op);
    cumulative(o, Combine::Add, v.exclusive() != 0, v.reverse() != 0)
}

pub fn cum_prod(o: Op) -> Fold {
    let v = ops::CumProd::of(o.m, o.op);
    cumulative(o, Combine::Mul, v.exclusive() != 0, v.reverse() != 0)
}

pub fn top_k(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let v = ops::TopK::of(o.m, o.op);
    let k = ts
        .get(1)
        .map_or(0, |k| k.ints().first().copied().unwrap_or(0))
        .max(0) as usize;
    let Some(a) = along(o, x, v.axis())? else {
        return Ok(None);
    };
    let largest = v.largest() != 0;
    let xf = x.floats();
    let mut shape = x.shape.clone();
    if k > shape[a] {
        return Err(o.err("k exceeds the axis size"));
    }
    shape[a] = k;
    let out_lines = lines(&shape, a);
    let mut vals = vec![WideNum::default(); out_lines.len() * k];
    let mut idxs = vec![WideNum::default(); out_lines.len() * k];
    for (l, ol) in lines(&x.shape, a).iter().zip(&out_lines) {
        let mut order: Vec<usize> = (0..l.len()).collect();
        order.sort_by(|&p, &q| {
            let (u, v) = (xf[l[p]], xf[l[q]]);
            let ord = if largest {
                v.partial_cmp(&u)
            } else {
                u.partial_cmp(&v)
            };
            ord.unwrap_or(std::cmp::Ordering::Equal).then(p.cmp(&q))
        });
        for (j, &at) in ol.iter().enumerate() {
            vals[at] = x.data[l[order[j]]];
            idxs[at] = WideNum::from_i64(order[j] as i64);
        }
    }
    o.packed(vec![
        T::new(x.dtype, shape.clone(), vals),
        T::new(DType::I64, shape, idxs),
    ])
}

/// GlobalMaxPool (`max`) or GlobalAveragePool over the spatial dims.
fn global_pool(o: Op, max: bool) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let xf = x.floats();
    let red: Vec<bool> = (0..x.rank()).map(|i| i >= 2).collect();
    let (out_shape, gs) = groups(&x.shape, &red);
    let data = gs
        .iter()
        .map(|g| {
            let v = g.iter().map(|&i| xf[i]);
            if max {
                v.fold(f64::NEG_INFINITY, f64::max)
            } else {
                v.sum::<f64>() / g.len().max(1) as f64
            }
        })
        .collect();
    o.packed(vec![T::new(dtype, out_shape, from_f64s(dtype, data))])
}

pub fn global_max_pool(o: Op) -> Fold {
    global_pool(o, true)
}

pub fn global_average_pool(o: Op) -> Fold {
    global_pool(o, false)
}
