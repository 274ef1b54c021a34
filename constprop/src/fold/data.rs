//! Data-movement and shape ops computed densely: Shape, Size, Concat,
//! Split, Slice, Tile, Pad, Range, NonZero, EyeLike, Trilu, OneHot,
//! DepthToSpace/SpaceToDepth, Compress, ConstantOfShape, ReverseSequence.

use super::dense::{row_strides, unravel, wide_of, T};
use super::{Fold, Op};
use ir::elements::{DType, Elements, NumClass, WideNum};
use onnx::axis::{clamp_index, normalize};
use onnx::ops;

pub(super) fn i64s(v: &[i64]) -> T {
    T::new(
        DType::I64,
        vec![v.len()],
        v.iter().map(|&x| WideNum::from_i64(x)).collect(),
    )
}

/// Output of `shape` whose element at each index is `src` at `f(index)`.
pub(super) fn gather_map(
    src: &T,
    shape: Vec<usize>,
    mut f: impl FnMut(&[usize]) -> Option<usize>,
) -> Option<T> {
    let n: usize = shape.iter().product();
    let mut idx = vec![0; shape.len()];
    let mut data = Vec::with_capacity(n);
    for i in 0..n {
        unravel(i, &shape, &mut idx);
        data.push(*src.data.get(f(&idx)?)?);
    }
    Some(T::new(src.dtype, shape, data))
}

pub(super) fn flat(idx: &[usize], strides: &[usize]) -> usize {
    idx.iter().zip(strides).map(|(i, s)| i * s).sum()
}

pub fn shape(o: Op) -> Fold {
    let Some(x) = o.input(0) else { return Ok(None) };
    let v = ops::Shape::of(o.m, o.op);
    let r = x.shape().len() as i64;
    let s = clamp_index(v.start(), r) as usize;
    let t = clamp_index(v.end().unwrap_or(r), r) as usize;
    let dims: Vec<i64> = x.shape()[s..t.max(s)].iter().map(|&d| d.max(0)).collect();
    o.packed(vec![i64s(&dims)])
}

pub fn size(o: Op) -> Fold {
    let Some(x) = o.input(0) else { return Ok(None) };
    let n = WideNum::from_i64(x.len() as i64);
    o.packed(vec![T::new(DType::I64, vec![], vec![n])])
}

pub fn constant_of_shape(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let shape: Vec<i64> = x.ints().iter().map(|&d| d.max(0)).collect();
    let dtype = o.dtype(0)?;
    let v = ops::ConstantOfShape::of(o.m, o.op)
        .value()
        .and_then(|v| v.get(0))
        .unwrap_or_default();
    let s = Elements::splat(dtype, shape, v).map_err(|er| o.err(er.to_string()))?;
    Ok(Some(vec![s]))
}

pub fn concat(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let rank = x.rank();
    let a = normalize(ops::Concat::of(o.m, o.op).axis(), rank)
        .ok_or_else(|| o.err("axis out of range"))?;
    let parts: Vec<&T> = ts.present().collect();
    let mut shape = x.shape.clone();
    shape[a] = parts
        .iter()
        .map(|p| p.shape.get(a).copied().unwrap_or(0))
        .sum();
    let outer: usize = shape[..a].iter().product();
    let mut data = Vec::new();
    for i in 0..outer {
        for p in &parts {
            if p.rank() != rank {
                return Err(o.err("Concat operands differ in rank"));
            }
            let chunk: usize = p.shape[a..].iter().product();
            data.extend_from_slice(
                p.data
                    .get(i * chunk..(i + 1) * chunk)
                    .ok_or_else(|| o.err("bad Concat shapes"))?,
            );
        }
    }
    o.packed(vec![T::new(x.dtype, shape, data)])
}

pub fn split(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let a = normalize(ops::Split::of(o.m, o.op).axis(), x.rank())
        .ok_or_else(|| o.err("axis out of range"))?;
    let nres = o.nres();
    let dim = x.shape[a];
    let sizes: Vec<usize> = match ts.get(1).map(T::ints) {
        Some(s) => s.iter().map(|&v| v.max(0) as usize).collect(),
        None => {
            let chunk = dim.div_ceil(nres.max(1));
            (0..nres)
                .map(|i| chunk.min(dim.saturating_sub(i * chunk)))
                .collect()
        }
    };
    let strides = row_strides(&x.shape);
    let mut start = 0;
    let mut outs = Vec::new();
    for s in sizes {
        let mut shape = x.shape.clone();
        shape[a] = s;
        let st = start;
        let part = gather_map(x, shape, |idx| {
            let mut src = idx.to_vec();
            src[a] += st;
            Some(flat(&src, &strides))
        });
        outs.push(part.ok_or_else(|| o.err("bad split"))?);
        start += s;
    }
    o.packed(outs)
}

/// One sliced axis: its first index, step and length.
fn slice_axis(d: i64, start: i64, end: i64, step: i64) -> (i64, i64) {
    let fix = |v: i64| if v < 0 { v.saturating_add(d) } else { v };
    let (mut s, mut t) = (fix(start), fix(end));
    if step > 0 {
        s = s.clamp(0, d);
        t = t.clamp(0, d);
    } else {
        s = s.clamp(-1, d - 1);
        t = t.clamp(-1, d - 1);
    }
    let len = if step > 0 {
        (t - s + step - 1).div_euclid(step)
    } else {
        (s - t - step - 1).div_euclid(-step)
    };
    (s, len)
}

pub fn slice(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let rank = x.rank();
    let starts = ts.get(1).map(T::ints).unwrap_or_default();
    let ends = ts.get(2).map(T::ints).unwrap_or_default();
    let steps = ts.get(4).map(T::ints);
    let axes = ts
        .get(3)
        .map(T::ints)
        .unwrap_or_else(|| (0..starts.len() as i64).collect());
    let mut begin = vec![0i64; rank];
    let mut step = vec![1i64; rank];
    let mut shape = x.shape.clone();
    for (k, &ax) in axes.iter().enumerate() {
        let a = normalize(ax, rank).ok_or_else(|| o.err("axis out of range"))?;
        let d = x.shape[a] as i64;
        let st = steps.as_ref().and_then(|s| s.get(k).copied()).unwrap_or(1);
        if st == 0 {
            return Err(o.err("slice step 0"));
        }
        let (s, len) = slice_axis(
            d,
            *starts.get(k).unwrap_or(&0),
            *ends.get(k).unwrap_or(&d),
            st,
        );
        shape[a] = len.max(0) as usize;
        begin[a] = s;
        step[a] = st;
    }
    let strides = row_strides(&x.shape);
    let out = gather_map(x, shape, |idx| {
        let mut f = 0i64;
        for i in 0..rank {
            f += (begin[i] + idx[i] as i64 * step[i]) * strides[i] as i64;
        }
        usize::try_from(f).ok()
    });
    o.packed(vec![out.ok_or_else(|| o.err("bad slice"))?])
}

pub fn tile(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let reps = ts.get(1).ok_or_else(|| o.err("repeats"))?.ints();
    let shape: Vec<usize> = x
        .shape
        .iter()
        .zip(&reps)
        .map(|(&d, &r)| d * r.max(0) as usize)
        .collect();
    let strides = row_strides(&x.shape);
    let out = gather_map(x, shape, |i| {
        Some(
            i.iter()
                .zip(&x.shape)
                .zip(&strides)
                .map(|((&i, &d), &s)| (i % d.max(1)) * s)
                .sum(),
        )
    });
    o.packed(vec![out.ok_or_else(|| o.err("bad Tile"))?])
}

/// Pad's `mode`: how an index outside the input maps into it.
#[derive(Clone, Copy)]
enum PadMode {
    Constant,
    Edge,
    Wrap,
    Reflect,
}

impl PadMode {
    fn of(mode: &str) -> PadMode {
        match mode {
            "edge" => PadMode::Edge,
            "wrap" => PadMode::Wrap,
            "reflect" => PadMode::Reflect,
            _ => PadMode::Constant,
        }
    }
    /// The input index read for index `j` outside `0..d` (-1: the constant).
    fn source(self, j: i64, d: i64) -> i64 {
        match self {
            PadMode::Edge => j.clamp(0, d - 1),
            PadMode::Wrap => j.rem_euclid(d.max(1)),
            PadMode::Reflect if d > 1 => {
                let p = 2 * (d - 1);
                let r = j.rem_euclid(p);
                if r >= d {
                    p - r
                } else {
                    r
                }
            }
            PadMode::Reflect => 0,
            PadMode::Constant => -1,
        }
    }
}

pub fn pad(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let rank = x.rank();
    let pads = ts.get(1).map(T::ints).unwrap_or_default();
    let cv = match ts.get(2) {
        Some(v) => v.data.first().copied().unwrap_or_default(),
        None => wide_of(x.class(), 0.0),
    };
    let axes: Vec<usize> = match ts.get(3) {
        Some(a) => onnx::axis::normalize_all(&a.ints(), rank).ok_or_else(|| o.err("axes"))?,
        None => (0..rank).collect(),
    };
    let na = axes.len();
    let mut before = vec![0i64; rank];
    let mut after = vec![0i64; rank];
    for (k, &a) in axes.iter().enumerate() {
        before[a] = *pads.get(k).ok_or_else(|| o.err("pads"))?;
        after[a] = *pads.get(k + na).ok_or_else(|| o.err("pads"))?;
    }
    let mode = PadMode::of(ops::Pad::of(o.m, o.op).mode());
    let shape: Vec<usize> = (0..rank)
        .map(|i| (x.shape[i] as i64 + before[i] + after[i]).max(0) as usize)
        .collect();
    let strides = row_strides(&x.shape);
    let n: usize = shape.iter().product();
    let mut idx = vec![0; rank];
    let mut data = Vec::with_capacity(n);
    for f in 0..n {
        unravel(f, &shape, &mut idx);
        let mut pos = Some(0usize);
        for i in 0..rank {
            let d = x.shape[i] as i64;
            let mut j = idx[i] as i64 - before[i];
            if !(0..d).contains(&j) {
                j = mode.source(j, d);
            }
            pos = match (pos, usize::try_from(j)) {
                (Some(p), Ok(j)) if (j as i64) < d => Some(p + j * strides[i]),
                _ => None,
            };
        }
        data.push(pos.and_then(|p| x.data.get(p).copied()).unwrap_or(cv));
    }
    o.packed(vec![T::new(x.dtype, shape, data)])
}

pub fn range(o: Op) -> Fold {
    let ts = o.dense();
    let (Some(x), Some(l), Some(d)) = (ts.get(0), ts.get(1), ts.get(2)) else {
        return Ok(None);
    };
    let c = x.class();
    let (s, l, df) = (x.f(0), l.f(0), d.f(0));
    let n = ((l - s) / df).ceil().max(0.0) as usize;
    let data = (0..n)
        .map(|i| match c {
            NumClass::Float => WideNum::from_f64(s + i as f64 * df),
            NumClass::Signed | NumClass::Unsigned => {
                WideNum::from_i64(x.data[0].i64() + i as i64 * d.data[0].i64())
            }
        })
        .collect();
    o.packed(vec![T::new(x.dtype, vec![n], data)])
}

pub fn non_zero(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let rank = x.rank();
    let nz: Vec<usize> = (0..x.len())
        .filter(|&i| x.f(i) != 0.0 || x.f(i).is_nan())
        .collect();
    let mut idx = vec![0; rank];
    let mut data = vec![WideNum::default(); rank * nz.len()];
    for (k, &f) in nz.iter().enumerate() {
        unravel(f, &x.shape, &mut idx);
        for d in 0..rank {
            data[d * nz.len() + k] = WideNum::from_i64(idx[d] as i64);
        }
    }
    o.packed(vec![T::new(DType::I64, vec![rank, nz.len()], data)])
}

pub fn eye_like(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let k = ops::EyeLike::of(o.m, o.op).k();
    let (r, c) = (x.shape[0], x.shape.get(1).copied().unwrap_or(0));
    let one = wide_of(dtype.class(), 1.0);
    let data = (0..r * c)
        .map(|f| {
            if (f % c.max(1)) as i64 - (f / c.max(1)) as i64 == k {
                one
            } else {
                WideNum::default()
            }
        })
        .collect();
    o.packed(vec![T::new(dtype, x.shape.clone(), data)])
}

pub fn trilu(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let rank = x.rank();
    let upper = ops::Trilu::of(o.m, o.op).upper() != 0;
    let k = ts
        .get(1)
        .map_or(0, |t| t.ints().first().copied().unwrap_or(0));
    let (r, c) = (x.shape[rank - 2], x.shape[rank - 1]);
    let mut out = x.clone();
    for (f, v) in out.data.iter_mut().enumerate() {
        let (i, j) = (((f / c.max(1)) % r.max(1)) as i64, (f % c.max(1)) as i64);
        let keep = if upper { j - i >= k } else { j - i <= k };
        if !keep {
            *v = WideNum::default();
        }
    }
    o.packed(vec![out])
}

pub fn one_hot(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let rank = x.rank();
    let depth = ts.get(1).ok_or_else(|| o.err("depth"))?.f(0) as i64;
    let vals = ts.get(2).ok_or_else(|| o.err("values"))?;
    let a = normalize(ops::OneHot::of(o.m, o.op).axis(), rank + 1).ok_or_else(|| o.err("axis"))?;
    let mut shape = x.shape.clone();
    shape.insert(a, depth.max(0) as usize);
    let ind = x.floats();
    let istr = row_strides(&x.shape);
    let n: usize = shape.iter().product();
    let mut idx = vec![0; rank + 1];
    let mut data = Vec::with_capacity(n);
    for f in 0..n {
        unravel(f, &shape, &mut idx);
        let pos = idx[a] as i64;
        let mut src = idx.clone();
        src.remove(a);
        let mut i = ind[flat(&src, &istr)] as i64;
        if i < 0 {
            i += depth;
        }
        data.push(vals.data[usize::from(i == pos)]);
    }
    o.packed(vec![T::new(vals.dtype, shape, data)])
}

/// DepthToSpace/SpaceToDepth's `mode` is column-row-depth.
fn crd(mode: &str) -> bool {
    mode == "CRD"
}

pub fn depth_to_space(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let v = ops::DepthToSpace::of(o.m, o.op);
    let b = v.blocksize().max(1) as usize;
    let &[n, c, h, w] = x.shape.as_slice() else {
        return Ok(None);
    };
    let strides = row_strides(&x.shape);
    let crd = crd(v.mode());
    let oc = c / (b * b);
    let out = gather_map(x, vec![n, oc, h * b, w * b], |i| {
        let (bi, bj) = (i[2] % b, i[3] % b);
        let ch = if crd {
            i[1] * b * b + bi * b + bj
        } else {
            (bi * b + bj) * oc + i[1]
        };
        Some(flat(&[i[0], ch, i[2] / b, i[3] / b], &strides))
    });
    o.packed(vec![out.ok_or_else(|| o.err("bad DepthToSpace"))?])
}

pub fn space_to_depth(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let v = ops::SpaceToDepth::of(o.m, o.op);
    let b = v.blocksize().max(1) as usize;
    let &[n, c, h, w] = x.shape.as_slice() else {
        return Ok(None);
    };
    let strides = row_strides(&x.shape);
    let crd = crd(v.mode());
    let out = gather_map(x, vec![n, c * b * b, h / b, w / b], |i| {
        let (ch, blk) = if crd {
            (i[1] / (b * b), i[1] % (b * b))
        } else {
            (i[1] % c, i[1] / c)
        };
        let (bi, bj) = (blk / b, blk % b);
        Some(flat(&[i[0], ch, i[2] * b + bi, i[3] * b + bj], &strides))
    });
    o.packed(vec![out.ok_or_else(|| o.err("bad SpaceToDepth"))?])
}

pub fn compress(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let cond = ts.get(1).ok_or_else(|| o.err("condition"))?.floats();
    let (src, a) = match ops::Compress::of(o.m, o.op).axis() {
        Some(ax) => (
            x.clone(),
            normalize(ax, x.rank()).ok_or_else(|| o.err("axis"))?,
        ),
        None => (T::new(x.dtype, vec![x.len()], x.data.clone()), 0),
    };
    let keep: Vec<usize> = (0..src.shape[a])
        .filter(|&i| cond.get(i).is_some_and(|&c| c != 0.0))
        .collect();
    let mut shape = src.shape.clone();
    shape[a] = keep.len();
    let strides = row_strides(&src.shape);
    let out = gather_map(&src, shape, |i| {
        let mut s = i.to_vec();
        s[a] = keep[i[a]];
        Some(flat(&s, &strides))
    });
    o.packed(vec![out.ok_or_else(|| o.err("bad Compress"))?])
}

pub fn reverse_sequence(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let lens = ts.get(1).ok_or_else(|| o.err("sequence_lens"))?.ints();
    let v = ops::ReverseSequence::of(o.m, o.op);
    let (ta, ba) = (v.time_axis() as usize, v.batch_axis() as usize);
    let strides = row_strides(&x.shape);
    let out = gather_map(x, x.shape.clone(), |i| {
        let l = *lens.get(i[ba])? as usize;
        let mut s = i.to_vec();
        if i[ta] < l {
            s[ta] = l - 1 - i[ta];
        }
        Some(flat(&s, &strides))
    });
    o.packed(vec![out.ok_or_else(|| o.err("bad ReverseSequence"))?])
}
