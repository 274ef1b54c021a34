//! Data-movement and shape ops computed densely: Shape, Size, Concat,
//! Split, Slice, Gather*, Scatter*, Tile, Pad, Range, NonZero, EyeLike,
//! Trilu, OneHot, DepthToSpace/SpaceToDepth, Compress, ConstantOfShape.

use super::dense::{row_strides, unravel, wide_of, T};
use super::{attr_i64, attr_ints, attr_str, norm_axis, result_dtype};
use ir::dialects::op_error;
use ir::elements::{DType, Elements, NumClass, WideNum};
use ir::{Module, OpId, Result};

fn i64s(v: &[i64]) -> T {
    T::new(
        DType::I64,
        vec![v.len()],
        v.iter().map(|&x| WideNum::from_i64(x)).collect(),
    )
}

/// Output of `shape` whose element at each index is `src` at `f(index)`.
fn gather_map(
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

fn flat(idx: &[usize], strides: &[usize]) -> usize {
    idx.iter().zip(strides).map(|(i, s)| i * s).sum()
}

pub fn fold(
    m: &Module,
    op: OpId,
    kind: &str,
    inputs: &[Option<Elements>],
) -> Result<Option<Vec<Elements>>> {
    let e = |msg: &str| op_error(m, op, msg.to_string());
    let ts: Vec<Option<T>> = match kind {
        "Shape" | "Size" | "Concat" | "Split" | "Slice" | "Gather" | "GatherElements"
        | "GatherND" | "ScatterND" | "ScatterElements" | "Scatter" | "Tile" | "Pad" | "Range"
        | "NonZero" | "EyeLike" | "Trilu" | "OneHot" | "DepthToSpace" | "SpaceToDepth"
        | "Compress" | "ConstantOfShape" | "ReverseSequence" => {
            inputs.iter().map(|i| i.as_ref().map(T::of)).collect()
        }
        _ => return Ok(None),
    };
    let Some(Some(x)) = ts.first() else {
        return Ok(None);
    };
    let input = |i: usize| ts.get(i).and_then(Option::as_ref);
    let rank = x.rank();
    let axis_attr = |d: i64| -> Result<usize> {
        norm_axis(attr_i64(m, op, "axis", d), rank).ok_or_else(|| e("axis out of range"))
    };
    let results: Vec<T> = match kind {
        "Shape" => {
            let r = rank as i64;
            let clampi = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
            let s = clampi(attr_i64(m, op, "start", 0));
            let t = clampi(attr_i64(m, op, "end", r));
            let dims: Vec<i64> = x.shape[s..t.max(s)].iter().map(|&d| d as i64).collect();
            vec![i64s(&dims)]
        }
        "Size" => vec![T::new(
            DType::I64,
            vec![],
            vec![WideNum::from_i64(x.len() as i64)],
        )],
        "ConstantOfShape" => {
            let shape: Vec<usize> = x.ints().iter().map(|&d| d.max(0) as usize).collect();
            let dtype = result_dtype(m, op, 0)?;
            let v = m
                .attr(op, "value")
                .and_then(|a| a.as_elements())
                .and_then(|v| v.get(0))
                .unwrap_or_default();
            let shape_i: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
            let s = Elements::splat(dtype, shape_i, v).map_err(|er| e(&er.to_string()))?;
            return Ok(Some(vec![s]));
        }
        "Concat" => {
            let parts: Vec<&T> = ts.iter().flatten().collect();
            let a = axis_attr(0)?;
            let mut shape = x.shape.clone();
            shape[a] = parts
                .iter()
                .map(|p| p.shape.get(a).copied().unwrap_or(0))
                .sum();
            let outer: usize = shape[..a].iter().product();
            let mut data = Vec::new();
            for o in 0..outer {
                for p in &parts {
                    if p.rank() != rank {
                        return Err(e("Concat operands differ in rank"));
                    }
                    let chunk: usize = p.shape[a..].iter().product();
                    data.extend_from_slice(
                        p.data
                            .get(o * chunk..(o + 1) * chunk)
                            .ok_or_else(|| e("bad Concat shapes"))?,
                    );
                }
            }
            vec![T::new(x.dtype, shape, data)]
        }
        "Split" => {
            let a = axis_attr(0)?;
            let nres = m.results(op).len();
            let dim = x.shape[a];
            let sizes: Vec<usize> =
                match input(1).map(T::ints).or_else(|| attr_ints(m, op, "split")) {
                    Some(s) => s.iter().map(|&v| v.max(0) as usize).collect(),
                    None => {
                        let chunk = dim.div_ceil(nres.max(1));
                        (0..nres)
                            .map(|i| chunk.min(dim.saturating_sub(i * chunk)))
                            .collect()
                    }
                };
            let mut start = 0;
            let mut outs = Vec::new();
            for s in sizes {
                let mut shape = x.shape.clone();
                shape[a] = s;
                let st = start;
                outs.push(
                    gather_map(x, shape, |idx| {
                        let mut src = idx.to_vec();
                        src[a] += st;
                        Some(flat(&src, &row_strides(&x.shape)))
                    })
                    .ok_or_else(|| e("bad split"))?,
                );
                start += s;
            }
            outs
        }
        "Slice" => {
            let (starts, ends, axes, steps) = match input(1) {
                Some(s) => (
                    s.ints(),
                    input(2).map(T::ints).unwrap_or_default(),
                    input(3).map(T::ints),
                    input(4).map(T::ints),
                ),
                None => (
                    attr_ints(m, op, "starts").unwrap_or_default(),
                    attr_ints(m, op, "ends").unwrap_or_default(),
                    attr_ints(m, op, "axes"),
                    None,
                ),
            };
            let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
            let mut begin = vec![0i64; rank];
            let mut step = vec![1i64; rank];
            let mut shape = x.shape.clone();
            for (k, &ax) in axes.iter().enumerate() {
                let a = norm_axis(ax, rank).ok_or_else(|| e("axis out of range"))?;
                let d = x.shape[a] as i64;
                let st = steps.as_ref().and_then(|s| s.get(k).copied()).unwrap_or(1);
                if st == 0 {
                    return Err(e("slice step 0"));
                }
                let fix = |v: i64| if v < 0 { v.saturating_add(d) } else { v };
                let (mut s, mut t) = (
                    fix(*starts.get(k).unwrap_or(&0)),
                    fix(*ends.get(k).unwrap_or(&d)),
                );
                if st > 0 {
                    s = s.clamp(0, d);
                    t = t.clamp(0, d);
                } else {
                    s = s.clamp(-1, d - 1);
                    t = t.clamp(-1, d - 1);
                }
                let len = if st > 0 {
                    (t - s + st - 1).div_euclid(st)
                } else {
                    (s - t - st - 1).div_euclid(-st)
                };
                shape[a] = len.max(0) as usize;
                begin[a] = s;
                step[a] = st;
            }
            let strides = row_strides(&x.shape);
            vec![gather_map(x, shape, |idx| {
                let mut f = 0i64;
                for i in 0..rank {
                    f += (begin[i] + idx[i] as i64 * step[i]) * strides[i] as i64;
                }
                usize::try_from(f).ok()
            })
            .ok_or_else(|| e("bad slice"))?]
        }
        "Gather" => {
            let ind = input(1).ok_or_else(|| e("indices"))?;
            let a = axis_attr(0)?;
            let d = x.shape[a] as i64;
            let idx = ind.ints();
            let mut shape = x.shape[..a].to_vec();
            shape.extend_from_slice(&ind.shape);
            shape.extend_from_slice(&x.shape[a + 1..]);
            let strides = row_strides(&x.shape);
            let ir = ind.rank();
            let istr = row_strides(&ind.shape);
            vec![gather_map(x, shape, |o| {
                let k = flat(&o[a..a + ir], &istr);
                let mut i = *idx.get(k)?;
                if i < 0 {
                    i += d;
                }
                let i = usize::try_from(i).ok().filter(|&i| (i as i64) < d)?;
                Some(
                    flat(&o[..a], &strides[..a])
                        + i * strides[a]
                        + flat(&o[a + ir..], &strides[a + 1..]),
                )
            })
            .ok_or_else(|| e("Gather index out of range"))?]
        }
        "GatherElements" => {
            let ind = input(1).ok_or_else(|| e("indices"))?;
            let a = axis_attr(0)?;
            let d = x.shape[a] as i64;
            let idx = ind.ints();
            let strides = row_strides(&x.shape);
            let istr = row_strides(&ind.shape);
            vec![gather_map(x, ind.shape.clone(), |o| {
                let mut i = *idx.get(flat(o, &istr))?;
                if i < 0 {
                    i += d;
                }
                let mut src = o.to_vec();
                src[a] = usize::try_from(i).ok().filter(|&i| (i as i64) < d)?;
                Some(flat(&src, &strides))
            })
            .ok_or_else(|| e("GatherElements index out of range"))?]
        }
        "GatherND" => {
            let ind = input(1).ok_or_else(|| e("indices"))?;
            let b = attr_i64(m, op, "batch_dims", 0).max(0) as usize;
            let q = ind.rank();
            let k = *ind.shape.last().ok_or_else(|| e("indices rank 0"))?;
            let idx = ind.ints();
            let mut shape = ind.shape[..q - 1].to_vec();
            shape.extend_from_slice(x.shape.get(b + k..).ok_or_else(|| e("bad GatherND"))?);
            let strides = row_strides(&x.shape);
            let istr = row_strides(&ind.shape);
            vec![gather_map(x, shape, |o| {
                let mut src = o[..b].to_vec();
                let mut ipos: Vec<usize> = o[..q - 1].to_vec();
                ipos.push(0);
                let base = flat(&ipos, &istr);
                for j in 0..k {
                    let d = x.shape[b + j] as i64;
                    let mut i = *idx.get(base + j)?;
                    if i < 0 {
                        i += d;
                    }
                    src.push(usize::try_from(i).ok().filter(|&i| (i as i64) < d)?);
                }
                src.extend_from_slice(&o[q - 1..]);
                Some(flat(&src, &strides))
            })
            .ok_or_else(|| e("GatherND index out of range"))?]
        }
        "ScatterND" | "ScatterElements" | "Scatter" => {
            let ind = input(1).ok_or_else(|| e("indices"))?;
            let upd = input(2).ok_or_else(|| e("updates"))?;
            let red = attr_str(m, op, "reduction").unwrap_or_else(|| "none".into());
            let c = x.class();
            let mut out = x.clone();
            let strides = row_strides(&x.shape);
            let idx = ind.ints();
            let mut apply = |pos: usize, u: WideNum| -> Result<()> {
                let slot = out
                    .data
                    .get_mut(pos)
                    .ok_or_else(|| e("scatter index out of range"))?;
                *slot = reduce_pair(&red, c, *slot, u);
                Ok(())
            };
            if kind == "ScatterND" {
                let k = *ind.shape.last().ok_or_else(|| e("indices rank 0"))?;
                let slice: usize = x.shape[k..].iter().product();
                for (n, chunk) in idx.chunks(k.max(1)).enumerate().take(ind.len() / k.max(1)) {
                    let mut base = 0;
                    for (j, &i) in chunk.iter().enumerate().take(k) {
                        let d = x.shape[j] as i64;
                        let i = if i < 0 { i + d } else { i };
                        base += usize::try_from(i).map_err(|_| e("scatter index"))? * strides[j];
                    }
                    for s in 0..slice {
                        let u = *upd
                            .data
                            .get(n * slice + s)
                            .ok_or_else(|| e("updates too short"))?;
                        apply(base + s, u)?;
                    }
                }
            } else {
                let a = axis_attr(0)?;
                let d = x.shape[a] as i64;
                let mut o = vec![0; ind.rank()];
                for (n, &i) in idx.iter().enumerate() {
                    unravel(n, &ind.shape, &mut o);
                    let i = if i < 0 { i + d } else { i };
                    o[a] = usize::try_from(i).map_err(|_| e("scatter index"))?;
                    apply(flat(&o, &strides), upd.data[n])?;
                }
            }
            vec![out]
        }
        "Tile" => {
            let reps = input(1).ok_or_else(|| e("repeats"))?.ints();
            let shape: Vec<usize> = x
                .shape
                .iter()
                .zip(&reps)
                .map(|(&d, &r)| d * r.max(0) as usize)
                .collect();
            let strides = row_strides(&x.shape);
            vec![gather_map(x, shape, |o| {
                Some(
                    o.iter()
                        .zip(&x.shape)
                        .zip(&strides)
                        .map(|((&i, &d), &s)| (i % d.max(1)) * s)
                        .sum(),
                )
            })
            .ok_or_else(|| e("bad Tile"))?]
        }
        "Pad" => {
            let pads = match input(1) {
                Some(p) => p.ints(),
                None => attr_ints(m, op, "pads").unwrap_or_default(),
            };
            let cv = match input(2) {
                Some(v) => v.data.first().copied().unwrap_or_default(),
                None => wide_of(x.class(), super::attr_f64(m, op, "value", 0.0)),
            };
            let axes: Vec<usize> = match input(3) {
                Some(a) => a
                    .ints()
                    .iter()
                    .map(|&v| norm_axis(v, rank))
                    .collect::<Option<_>>()
                    .ok_or_else(|| e("axes"))?,
                None => (0..rank).collect(),
            };
            let na = axes.len();
            let mut before = vec![0i64; rank];
            let mut after = vec![0i64; rank];
            for (k, &a) in axes.iter().enumerate() {
                before[a] = *pads.get(k).ok_or_else(|| e("pads"))?;
                after[a] = *pads.get(k + na).ok_or_else(|| e("pads"))?;
            }
            let mode = attr_str(m, op, "mode").unwrap_or_else(|| "constant".into());
            let shape: Vec<usize> = (0..rank)
                .map(|i| (x.shape[i] as i64 + before[i] + after[i]).max(0) as usize)
                .collect();
            let strides = row_strides(&x.shape);
            let n: usize = shape.iter().product();
            let mut o = vec![0; rank];
            let mut data = Vec::with_capacity(n);
            for f in 0..n {
                unravel(f, &shape, &mut o);
                let mut pos = Some(0usize);
                for i in 0..rank {
                    let d = x.shape[i] as i64;
                    let mut j = o[i] as i64 - before[i];
                    if !(0..d).contains(&j) {
                        j = match mode.as_str() {
                            "edge" => j.clamp(0, d - 1),
                            "wrap" => j.rem_euclid(d.max(1)),
                            "reflect" if d > 1 => {
                                let p = 2 * (d - 1);
                                let r = j.rem_euclid(p);
                                if r >= d {
                                    p - r
                                } else {
                                    r
                                }
                            }
                            "reflect" => 0,
                            _ => -1,
                        };
                    }
                    pos = match (pos, usize::try_from(j)) {
                        (Some(p), Ok(j)) if (j as i64) < d => Some(p + j * strides[i]),
                        _ => None,
                    };
                }
                data.push(pos.and_then(|p| x.data.get(p).copied()).unwrap_or(cv));
            }
            vec![T::new(x.dtype, shape, data)]
        }
        "Range" => {
            let (s, l, d) = match (input(1), input(2)) {
                (Some(l), Some(d)) => (x, l, d),
                _ => return Ok(None),
            };
            let c = x.class();
            let (s, l, d) = (s.f(0), l.f(0), d.f(0));
            let n = ((l - s) / d).ceil().max(0.0) as usize;
            let data = (0..n)
                .map(|i| match c {
                    NumClass::Float => WideNum::from_f64(s + i as f64 * d),
                    _ => WideNum::from_i64(
                        x.data[0].i64() + i as i64 * input(2).map_or(1, |d| d.data[0].i64()),
                    ),
                })
                .collect();
            vec![T::new(x.dtype, vec![n], data)]
        }
        "NonZero" => {
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
            vec![T::new(DType::I64, vec![rank, nz.len()], data)]
        }
        "EyeLike" => {
            let dtype = result_dtype(m, op, 0)?;
            let k = attr_i64(m, op, "k", 0);
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
            vec![T::new(dtype, x.shape.clone(), data)]
        }
        "Trilu" => {
            let upper = attr_i64(m, op, "upper", 1) != 0;
            let k = input(1).map_or(0, |t| t.ints().first().copied().unwrap_or(0));
            let (r, c) = (x.shape[rank - 2], x.shape[rank - 1]);
            let mut out = x.clone();
            for (f, v) in out.data.iter_mut().enumerate() {
                let (i, j) = (((f / c.max(1)) % r.max(1)) as i64, (f % c.max(1)) as i64);
                let keep = if upper { j - i >= k } else { j - i <= k };
                if !keep {
                    *v = WideNum::default();
                }
            }
            vec![out]
        }
        "OneHot" => {
            let depth = input(1).ok_or_else(|| e("depth"))?.f(0) as i64;
            let vals = input(2).ok_or_else(|| e("values"))?;
            let a = norm_axis(attr_i64(m, op, "axis", -1), rank + 1).ok_or_else(|| e("axis"))?;
            let mut shape = x.shape.clone();
            shape.insert(a, depth.max(0) as usize);
            let ind = x.floats();
            let istr = row_strides(&x.shape);
            let n: usize = shape.iter().product();
            let mut o = vec![0; rank + 1];
            let mut data = Vec::with_capacity(n);
            for f in 0..n {
                unravel(f, &shape, &mut o);
                let pos = o[a] as i64;
                let mut src = o.clone();
                src.remove(a);
                let mut i = ind[flat(&src, &istr)] as i64;
                if i < 0 {
                    i += depth;
                }
                data.push(vals.data[usize::from(i == pos)]);
            }
            vec![T::new(vals.dtype, shape, data)]
        }
        "DepthToSpace" | "SpaceToDepth" => {
            let b = attr_i64(m, op, "blocksize", 1).max(1) as usize;
            if rank != 4 {
                return Ok(None);
            }
            let (n, c, h, w) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3]);
            let strides = row_strides(&x.shape);
            if kind == "DepthToSpace" {
                let crd = attr_str(m, op, "mode").as_deref() == Some("CRD");
                let oc = c / (b * b);
                vec![gather_map(x, vec![n, oc, h * b, w * b], |o| {
                    let (bi, bj) = (o[2] % b, o[3] % b);
                    let ch = if crd {
                        o[1] * b * b + bi * b + bj
                    } else {
                        (bi * b + bj) * oc + o[1]
                    };
                    Some(flat(&[o[0], ch, o[2] / b, o[3] / b], &strides))
                })
                .ok_or_else(|| e("bad DepthToSpace"))?]
            } else {
                let crd = attr_str(m, op, "mode").as_deref() == Some("CRD");
                vec![gather_map(x, vec![n, c * b * b, h / b, w / b], |o| {
                    let (ch, blk) = if crd {
                        (o[1] / (b * b), o[1] % (b * b))
                    } else {
                        (o[1] % c, o[1] / c)
                    };
                    let (bi, bj) = (blk / b, blk % b);
                    Some(flat(&[o[0], ch, o[2] * b + bi, o[3] * b + bj], &strides))
                })
                .ok_or_else(|| e("bad SpaceToDepth"))?]
            }
        }
        "Compress" => {
            let cond = input(1).ok_or_else(|| e("condition"))?.floats();
            let (src, a) = match m.attr(op, "axis").and_then(|a| a.as_int()) {
                Some(ax) => (x.clone(), norm_axis(ax, rank).ok_or_else(|| e("axis"))?),
                None => (T::new(x.dtype, vec![x.len()], x.data.clone()), 0),
            };
            let keep: Vec<usize> = (0..src.shape[a])
                .filter(|&i| cond.get(i).is_some_and(|&c| c != 0.0))
                .collect();
            let mut shape = src.shape.clone();
            shape[a] = keep.len();
            let strides = row_strides(&src.shape);
            vec![gather_map(&src, shape, |o| {
                let mut s = o.to_vec();
                s[a] = keep[o[a]];
                Some(flat(&s, &strides))
            })
            .ok_or_else(|| e("bad Compress"))?]
        }
        "ReverseSequence" => {
            let lens = input(1).ok_or_else(|| e("sequence_lens"))?.ints();
            let ta = attr_i64(m, op, "time_axis", 0) as usize;
            let ba = attr_i64(m, op, "batch_axis", 1) as usize;
            let strides = row_strides(&x.shape);
            vec![gather_map(x, x.shape.clone(), |o| {
                let l = *lens.get(o[ba])? as usize;
                let mut s = o.to_vec();
                if o[ta] < l {
                    s[ta] = l - 1 - o[ta];
                }
                Some(flat(&s, &strides))
            })
            .ok_or_else(|| e("bad ReverseSequence"))?]
        }
        _ => return Ok(None),
    };
    super::dense::packed(m, op, results)
}

/// Combines an existing value with an update (Scatter reductions).
pub fn reduce_pair(red: &str, c: NumClass, a: WideNum, b: WideNum) -> WideNum {
    let f = |x: f64, y: f64| match red {
        "add" => x + y,
        "mul" => x * y,
        "max" => x.max(y),
        "min" => x.min(y),
        _ => y,
    };
    match c {
        NumClass::Float => WideNum::from_f64(f(a.f64(), b.f64())),
        NumClass::Signed => WideNum::from_i64(match red {
            "add" => a.i64().wrapping_add(b.i64()),
            "mul" => a.i64().wrapping_mul(b.i64()),
            "max" => a.i64().max(b.i64()),
            "min" => a.i64().min(b.i64()),
            _ => b.i64(),
        }),
        NumClass::Unsigned => WideNum::from_u64(match red {
            "add" => a.u64().wrapping_add(b.u64()),
            "mul" => a.u64().wrapping_mul(b.u64()),
            "max" => a.u64().max(b.u64()),
            "min" => a.u64().min(b.u64()),
            _ => b.u64(),
        }),
    }
}
