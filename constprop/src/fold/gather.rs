//! Indexed reads and writes: Gather, GatherElements, GatherND, Scatter,
//! ScatterElements and ScatterND.

use super::data::{flat, gather_map};
use super::dense::{row_strides, unravel, T};
use super::{Fold, Op};
use ir::elements::{NumClass, WideNum};
use ir::Result;
use onnx::axis::normalize;
use onnx::ops;

/// How a written value combines with the one in place (Scatter
/// reductions, the running value of CumSum/CumProd).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    Replace,
    Add,
    Mul,
    Max,
    Min,
}

impl Combine {
    /// The `reduction` attribute of the Scatter ops.
    pub fn of(reduction: &str) -> Combine {
        match reduction {
            "add" => Combine::Add,
            "mul" => Combine::Mul,
            "max" => Combine::Max,
            "min" => Combine::Min,
            _ => Combine::Replace,
        }
    }

    /// `a` combined with the update `b`, in class `c`.
    pub fn apply(self, c: NumClass, a: WideNum, b: WideNum) -> WideNum {
        use Combine::*;
        match c {
            NumClass::Float => {
                let (x, y) = (a.f64(), b.f64());
                WideNum::from_f64(match self {
                    Add => x + y,
                    Mul => x * y,
                    Max => x.max(y),
                    Min => x.min(y),
                    Replace => y,
                })
            }
            NumClass::Signed => {
                let (x, y) = (a.i64(), b.i64());
                WideNum::from_i64(match self {
                    Add => x.wrapping_add(y),
                    Mul => x.wrapping_mul(y),
                    Max => x.max(y),
                    Min => x.min(y),
                    Replace => y,
                })
            }
            NumClass::Unsigned => {
                let (x, y) = (a.u64(), b.u64());
                WideNum::from_u64(match self {
                    Add => x.wrapping_add(y),
                    Mul => x.wrapping_mul(y),
                    Max => x.max(y),
                    Min => x.min(y),
                    Replace => y,
                })
            }
        }
    }
}

/// Index `i` into a dim of size `d` (negative counts from the back).
fn in_dim(i: i64, d: usize) -> Option<usize> {
    let d = d as i64;
    let i = if i < 0 { i + d } else { i };
    usize::try_from(i).ok().filter(|&i| (i as i64) < d)
}

pub fn gather(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let ind = ts.get(1).ok_or_else(|| o.err("indices"))?;
    let a = normalize(ops::Gather::of(o.m, o.op).axis(), x.rank())
        .ok_or_else(|| o.err("axis out of range"))?;
    let idx = ind.ints();
    let mut shape = x.shape[..a].to_vec();
    shape.extend_from_slice(&ind.shape);
    shape.extend_from_slice(&x.shape[a + 1..]);
    let strides = row_strides(&x.shape);
    let ir = ind.rank();
    let istr = row_strides(&ind.shape);
    let out = gather_map(x, shape, |p| {
        let i = in_dim(*idx.get(flat(&p[a..a + ir], &istr))?, x.shape[a])?;
        Some(flat(&p[..a], &strides[..a]) + i * strides[a] + flat(&p[a + ir..], &strides[a + 1..]))
    });
    o.packed(vec![out.ok_or_else(|| o.err("Gather index out of range"))?])
}

pub fn gather_elements(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let ind = ts.get(1).ok_or_else(|| o.err("indices"))?;
    let a = normalize(ops::GatherElements::of(o.m, o.op).axis(), x.rank())
        .ok_or_else(|| o.err("axis out of range"))?;
    let idx = ind.ints();
    let strides = row_strides(&x.shape);
    let istr = row_strides(&ind.shape);
    let out = gather_map(x, ind.shape.clone(), |p| {
        let mut src = p.to_vec();
        src[a] = in_dim(*idx.get(flat(p, &istr))?, x.shape[a])?;
        Some(flat(&src, &strides))
    });
    o.packed(vec![
        out.ok_or_else(|| o.err("GatherElements index out of range"))?
    ])
}

pub fn gather_nd(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let ind = ts.get(1).ok_or_else(|| o.err("indices"))?;
    let b = ops::GatherND::of(o.m, o.op).batch_dims().max(0) as usize;
    let q = ind.rank();
    let k = *ind.shape.last().ok_or_else(|| o.err("indices rank 0"))?;
    let idx = ind.ints();
    let mut shape = ind.shape[..q - 1].to_vec();
    shape.extend_from_slice(x.shape.get(b + k..).ok_or_else(|| o.err("bad GatherND"))?);
    let strides = row_strides(&x.shape);
    let istr = row_strides(&ind.shape);
    let out = gather_map(x, shape, |p| {
        let mut src = p[..b].to_vec();
        let mut ipos: Vec<usize> = p[..q - 1].to_vec();
        ipos.push(0);
        let base = flat(&ipos, &istr);
        for j in 0..k {
            src.push(in_dim(*idx.get(base + j)?, x.shape[b + j])?);
        }
        src.extend_from_slice(&p[q - 1..]);
        Some(flat(&src, &strides))
    });
    o.packed(vec![
        out.ok_or_else(|| o.err("GatherND index out of range"))?
    ])
}

/// `out[pos]` combined with `u`.
fn write(o: Op, out: &mut T, pos: usize, u: WideNum, how: Combine) -> Result<()> {
    let c = out.class();
    let slot = out
        .data
        .get_mut(pos)
        .ok_or_else(|| o.err("scatter index out of range"))?;
    *slot = how.apply(c, *slot, u);
    Ok(())
}

pub fn scatter_nd(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let ind = ts.get(1).ok_or_else(|| o.err("indices"))?;
    let upd = ts.get(2).ok_or_else(|| o.err("updates"))?;
    let how = Combine::of(ops::ScatterND::of(o.m, o.op).reduction());
    let mut out = x.clone();
    let strides = row_strides(&x.shape);
    let idx = ind.ints();
    let k = *ind.shape.last().ok_or_else(|| o.err("indices rank 0"))?;
    let slice: usize = x.shape[k..].iter().product();
    for (n, chunk) in idx.chunks(k.max(1)).enumerate().take(ind.len() / k.max(1)) {
        let mut base = 0;
        for (j, &i) in chunk.iter().enumerate().take(k) {
            let d = x.shape[j] as i64;
            let i = if i < 0 { i + d } else { i };
            base += usize::try_from(i).map_err(|_| o.err("scatter index"))? * strides[j];
        }
        for s in 0..slice {
            let u = *upd
                .data
                .get(n * slice + s)
                .ok_or_else(|| o.err("updates too short"))?;
            write(o, &mut out, base + s, u, how)?;
        }
    }
    o.packed(vec![out])
}

/// Scatter/ScatterElements along `axis`.
fn scatter_along(o: Op, axis: i64, how: Combine) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let ind = ts.get(1).ok_or_else(|| o.err("indices"))?;
    let upd = ts.get(2).ok_or_else(|| o.err("updates"))?;
    let a = normalize(axis, x.rank()).ok_or_else(|| o.err("axis out of range"))?;
    let mut out = x.clone();
    let strides = row_strides(&x.shape);
    let d = x.shape[a] as i64;
    let mut p = vec![0; ind.rank()];
    for (n, &i) in ind.ints().iter().enumerate() {
        unravel(n, &ind.shape, &mut p);
        let i = if i < 0 { i + d } else { i };
        p[a] = usize::try_from(i).map_err(|_| o.err("scatter index"))?;
        write(o, &mut out, flat(&p, &strides), upd.data[n], how)?;
    }
    o.packed(vec![out])
}

pub fn scatter_elements(o: Op) -> Fold {
    let v = ops::ScatterElements::of(o.m, o.op);
    scatter_along(o, v.axis(), Combine::of(v.reduction()))
}

pub fn scatter(o: Op) -> Fold {
    scatter_along(o, ops::Scatter::of(o.m, o.op).axis(), Combine::Replace)
}
