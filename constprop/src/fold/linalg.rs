//! Contractions and windows: MatMul, MatMulInteger, Gemm, Einsum, Conv,
//! ConvInteger, MaxPool, AveragePool, LpPool.

use super::dense::{from_f64s, row_strides, unravel, T};
use super::{attr_f64, attr_i64, attr_ints, attr_str, result_dtype};
use ir::dialects::op_error;
use ir::elements::{DType, Elements, WideNum};
use ir::{Module, OpId, Result};

/// Batched matrix product with NumPy broadcasting of the batch dims.
fn matmul(a: &T, b: &T, av: &[f64], bv: &[f64]) -> Option<(Vec<usize>, Vec<f64>)> {
    let mut ash = a.shape.clone();
    let mut bsh = b.shape.clone();
    let (a1, b1) = (ash.len() == 1, bsh.len() == 1);
    if a1 {
        ash.insert(0, 1);
    }
    if b1 {
        bsh.push(1);
    }
    let (m, k) = (ash[ash.len() - 2], ash[ash.len() - 1]);
    let (k2, n) = (bsh[bsh.len() - 2], bsh[bsh.len() - 1]);
    if k != k2 {
        return None;
    }
    let ab: Vec<i64> = ash[..ash.len() - 2].iter().map(|&d| d as i64).collect();
    let bb: Vec<i64> = bsh[..bsh.len() - 2].iter().map(|&d| d as i64).collect();
    let batch = super::elementwise::broadcast_shape(&ab, &bb)?;
    let batch: Vec<usize> = batch.iter().map(|&d| d as usize).collect();
    let nb: usize = batch.iter().product();
    let mut out = vec![0.0; nb * m * n];
    let mut idx = vec![0; batch.len()];
    let off = |idx: &[usize], sh: &[usize]| -> usize {
        let r = sh.len();
        let skip = idx.len() - r;
        let mut f = 0;
        for i in 0..r {
            f = f * sh[i] + if sh[i] == 1 { 0 } else { idx[skip + i] };
        }
        f
    };
    for bi in 0..nb {
        unravel(bi, &batch, &mut idx);
        let ao = off(&idx, &ash[..ash.len() - 2]) * m * k;
        let bo = off(&idx, &bsh[..bsh.len() - 2]) * k * n;
        for i in 0..m {
            for p in 0..k {
                let x = av[ao + i * k + p];
                let row = &mut out[(bi * m + i) * n..(bi * m + i + 1) * n];
                for (j, o) in row.iter_mut().enumerate() {
                    *o += x * bv[bo + p * n + j];
                }
            }
        }
    }
    let mut shape = batch;
    if !a1 {
        shape.push(m);
    }
    if !b1 {
        shape.push(n);
    }
    Some((shape, out))
}

struct Window {
    strides: Vec<usize>,
    dil: Vec<usize>,
    pad_begin: Vec<i64>,
    out: Vec<usize>,
}

fn window(m: &Module, op: OpId, spatial: &[usize], kernel: &[usize]) -> Window {
    let r = spatial.len();
    let strides: Vec<usize> = attr_ints(m, op, "strides").map_or(vec![1; r], |v| {
        v.iter().map(|&s| s.max(1) as usize).collect()
    });
    let dil: Vec<usize> = attr_ints(m, op, "dilations").map_or(vec![1; r], |v| {
        v.iter().map(|&s| s.max(1) as usize).collect()
    });
    let pads = attr_ints(m, op, "pads").unwrap_or_else(|| vec![0; 2 * r]);
    let auto = attr_str(m, op, "auto_pad").unwrap_or_else(|| "NOTSET".into());
    let ceil = attr_i64(m, op, "ceil_mode", 0) != 0;
    let mut pad_begin = vec![0i64; r];
    let mut out = vec![0usize; r];
    for i in 0..r {
        let ext = ((kernel[i] - 1) * dil[i] + 1) as i64;
        let (inp, s) = (spatial[i] as i64, strides[i] as i64);
        match auto.as_str() {
            "SAME_UPPER" | "SAME_LOWER" => {
                let o = (inp + s - 1) / s;
                let total = ((o - 1) * s + ext - inp).max(0);
                pad_begin[i] = if auto == "SAME_UPPER" {
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
                let mut o = if ceil {
                    (span + s - 1).div_euclid(s) + 1
                } else {
                    span.div_euclid(s) + 1
                };
                if ceil && (o - 1) * s >= inp + pb {
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

impl Window {
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

fn conv(
    m: &Module,
    op: OpId,
    x: &T,
    w: &T,
    b: Option<&T>,
    xz: f64,
    wzs: &[f64],
) -> Option<(Vec<usize>, Vec<f64>)> {
    let (xv, wv) = (x.floats(), w.floats());
    let (n, c) = (x.shape[0], x.shape[1]);
    let spatial = &x.shape[2..];
    let mo = w.shape[0];
    let g = attr_i64(m, op, "group", 1).max(1) as usize;
    let cg = c / g;
    let kernel: Vec<usize> = w.shape[2..].to_vec();
    let win = window(m, op, spatial, &kernel);
    let mut shape = vec![n, mo];
    shape.extend_from_slice(&win.out);
    let nout: usize = win.out.iter().product();
    let nk: usize = kernel.iter().product();
    let xs = row_strides(&x.shape);
    let mut out = vec![0.0; n * mo * nout];
    let (mut o, mut kp) = (vec![0; spatial.len()], vec![0; spatial.len()]);
    let bias = b.map(T::floats);
    for bn in 0..n {
        for oc in 0..mo {
            let grp = oc / (mo / g).max(1);
            let wz = wzs.get(oc).or(wzs.first()).copied().unwrap_or(0.0);
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
                        acc += (xv[xi] - xz) * wt;
                    }
                }
                out[(bn * mo + oc) * nout + f] = acc;
            }
        }
    }
    Some((shape, out))
}

fn conv_transpose(
    m: &Module,
    op: OpId,
    x: &T,
    w: &T,
    b: Option<&T>,
) -> Option<(Vec<usize>, Vec<f64>)> {
    let (xv, wv) = (x.floats(), w.floats());
    let (n, c) = (x.shape[0], x.shape[1]);
    let spatial = &x.shape[2..];
    let r = spatial.len();
    let g = attr_i64(m, op, "group", 1).max(1) as usize;
    let mg = w.shape[1];
    let mo = mg * g;
    let kernel = &w.shape[2..];
    let ones = vec![1i64; r];
    let strides = attr_ints(m, op, "strides").unwrap_or_else(|| ones.clone());
    let dil = attr_ints(m, op, "dilations").unwrap_or_else(|| ones.clone());
    let opad = attr_ints(m, op, "output_padding").unwrap_or_else(|| vec![0; r]);
    let auto = attr_str(m, op, "auto_pad").unwrap_or_default();
    let mut out_shape = attr_ints(m, op, "output_shape");
    let full = |i: usize| {
        strides[i] * (spatial[i] as i64 - 1) + opad[i] + (kernel[i] as i64 - 1) * dil[i] + 1
    };
    let pads: Vec<i64> = match attr_ints(m, op, "pads") {
        Some(p) => p,
        None if auto == "SAME_UPPER" || auto == "SAME_LOWER" => {
            let os = out_shape
                .clone()
                .unwrap_or_else(|| (0..r).map(|i| spatial[i] as i64 * strides[i]).collect());
            let total: Vec<i64> = (0..r).map(|i| full(i) - os[i]).collect();
            let (mut a, mut bb) = (Vec::new(), Vec::new());
            for t in total {
                if auto == "SAME_UPPER" {
                    a.push(t / 2);
                    bb.push(t - t / 2);
                } else {
                    a.push(t - t / 2);
                    bb.push(t / 2);
                }
            }
            out_shape = Some(os);
            a.into_iter().chain(bb).collect()
        }
        None => vec![0; 2 * r],
    };
    let os: Vec<usize> = match out_shape {
        Some(o) => o.iter().map(|&d| d.max(0) as usize).collect(),
        None => (0..r)
            .map(|i| (full(i) - pads[i] - pads[i + r]).max(0) as usize)
            .collect(),
    };
    let nout: usize = os.iter().product();
    let nin: usize = spatial.iter().product();
    let nk: usize = kernel.iter().product();
    let cg = c / g;
    let mut out = vec![0.0; n * mo * nout];
    let bias = b.map(T::floats);
    let (mut ip, mut kp) = (vec![0; r], vec![0; r]);
    for bn in 0..n {
        for ch in 0..c {
            let grp = ch / cg.max(1);
            for f in 0..nin {
                unravel(f, spatial, &mut ip);
                let xval = xv[(bn * c + ch) * nin + f];
                for kf in 0..nk {
                    unravel(kf, kernel, &mut kp);
                    let mut o = 0usize;
                    let mut inside = true;
                    for i in 0..r {
                        let p = ip[i] as i64 * strides[i] + kp[i] as i64 * dil[i] - pads[i];
                        if p < 0 || p >= os[i] as i64 {
                            inside = false;
                            break;
                        }
                        o = o * os[i] + p as usize;
                    }
                    if !inside {
                        continue;
                    }
                    for j in 0..mg {
                        let oc = grp * mg + j;
                        out[(bn * mo + oc) * nout + o] += xval * wv[(ch * mg + j) * nk + kf];
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
    Some((shape, out))
}

fn pool(m: &Module, op: OpId, kind: &str, x: &T) -> Option<(Vec<usize>, Vec<f64>, Vec<i64>)> {
    let xv = x.floats();
    let (n, c) = (x.shape[0], x.shape[1]);
    let spatial = &x.shape[2..];
    let kernel: Vec<usize> = attr_ints(m, op, "kernel_shape")?
        .iter()
        .map(|&k| k.max(1) as usize)
        .collect();
    let win = window(m, op, spatial, &kernel);
    let include_pad = attr_i64(m, op, "count_include_pad", 0) != 0;
    let p = attr_i64(m, op, "p", 2) as f64;
    let nout: usize = win.out.iter().product();
    let nk: usize = kernel.iter().product();
    let xs = row_strides(&x.shape);
    let r = spatial.len();
    let mut out = Vec::with_capacity(n * c * nout);
    let mut idx = Vec::with_capacity(n * c * nout);
    let (mut o, mut kp) = (vec![0; r], vec![0; r]);
    // Padded extent for count_include_pad: the window clipped to the padded input.
    let pads = attr_ints(m, op, "pads").unwrap_or_else(|| vec![0; 2 * r]);
    for bc in 0..n * c {
        for f in 0..nout {
            unravel(f, &win.out, &mut o);
            let (mut acc, mut cnt, mut best, mut arg) = (0.0, 0usize, f64::NEG_INFINITY, 0i64);
            let mut padded_cnt = 0usize;
            for kf in 0..nk {
                unravel(kf, &kernel, &mut kp);
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
                    "MaxPool" => {
                        if v > best {
                            best = v;
                            arg = (bc * xs[1] + off) as i64;
                        }
                    }
                    "LpPool" => acc += v.abs().powf(p),
                    _ => acc += v,
                }
            }
            out.push(match kind {
                "MaxPool" => best,
                "LpPool" => acc.powf(1.0 / p),
                _ => acc / (if include_pad { padded_cnt } else { cnt }).max(1) as f64,
            });
            idx.push(arg);
        }
    }
    let mut shape = vec![n, c];
    shape.extend_from_slice(&win.out);
    Some((shape, out, idx))
}

/// Einsum by enumerating every label assignment (test-sized operands).
fn einsum(eq: &str, ops: &[&T]) -> Option<(Vec<usize>, Vec<f64>)> {
    let eq: String = eq.chars().filter(|c| !c.is_whitespace()).collect();
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l.to_string(), Some(r.to_string())),
        None => (eq.clone(), None),
    };
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != ops.len() {
        return None;
    }
    // Ellipsis dims become the labels 'A'.. (uppercase is rare in tests; use digits).
    let mut ell_rank = 0;
    let mut expanded: Vec<Vec<char>> = Vec::new();
    for (t, x) in terms.iter().zip(ops) {
        let named = t.replace("...", "").chars().count();
        let er = if t.contains("...") {
            x.rank().checked_sub(named)?
        } else {
            0
        };
        ell_rank = ell_rank.max(er);
        let ell: String = (0..er)
            .map(|i| char::from(b'0' + (ell_rank - er + i) as u8))
            .collect();
        expanded.push(t.replace("...", &ell).chars().collect());
    }
    // Ellipsis labels are right-aligned: recompute with the final rank.
    for (k, (t, x)) in terms.iter().zip(ops).enumerate() {
        let named = t.replace("...", "").chars().count();
        let er = x.rank().checked_sub(named)?;
        let ell: String = (0..er)
            .map(|i| char::from(b'0' + (ell_rank - er + i) as u8))
            .collect();
        expanded[k] = t.replace("...", &ell).chars().collect();
    }
    let ell_labels: String = (0..ell_rank).map(|i| char::from(b'0' + i as u8)).collect();
    let out: Vec<char> = match rhs {
        Some(r) => r.replace("...", &ell_labels).chars().collect(),
        None => {
            let mut once: Vec<char> = expanded
                .iter()
                .flatten()
                .copied()
                .filter(|c| c.is_alphabetic())
                .filter(|c| expanded.iter().flatten().filter(|d| *d == c).count() == 1)
                .collect();
            once.sort_unstable();
            ell_labels.chars().chain(once).collect()
        }
    };
    let mut labels: Vec<char> = out.clone();
    for c in expanded.iter().flatten() {
        if !labels.contains(c) {
            labels.push(*c);
        }
    }
    let mut size = vec![1usize; labels.len()];
    for (t, x) in expanded.iter().zip(ops) {
        if t.len() != x.rank() {
            return None;
        }
        for (c, &d) in t.iter().zip(&x.shape) {
            let i = labels.iter().position(|l| l == c)?;
            if d != 1 {
                size[i] = d;
            }
        }
    }
    let out_shape: Vec<usize> = size[..out.len()].to_vec();
    let nout: usize = out_shape.iter().product();
    let inner: usize = size[out.len()..].iter().product();
    let vals: Vec<Vec<f64>> = ops.iter().map(|x| x.floats()).collect();
    let pos: Vec<Vec<usize>> = expanded
        .iter()
        .map(|t| {
            t.iter()
                .filter_map(|c| labels.iter().position(|l| l == c))
                .collect()
        })
        .collect();
    let strides: Vec<Vec<usize>> = ops.iter().map(|x| row_strides(&x.shape)).collect();
    let mut res = vec![0.0; nout];
    let mut idx = vec![0; labels.len()];
    for (f, r) in res.iter_mut().enumerate() {
        for g in 0..inner {
            unravel(f * inner + g, &size, &mut idx);
            let mut prod = 1.0;
            for (k, x) in ops.iter().enumerate() {
                let off: usize = pos[k]
                    .iter()
                    .zip(&strides[k])
                    .zip(&x.shape)
                    .map(|((&l, &s), &d)| if d == 1 { 0 } else { idx[l] * s })
                    .sum();
                prod *= vals[k][off];
            }
            *r += prod;
        }
    }
    Some((out_shape, res))
}

pub fn fold(
    m: &Module,
    op: OpId,
    kind: &str,
    inputs: &[Option<Elements>],
) -> Result<Option<Vec<Elements>>> {
    if !matches!(
        kind,
        "MatMul"
            | "MatMulInteger"
            | "Gemm"
            | "Einsum"
            | "Conv"
            | "ConvInteger"
            | "ConvTranspose"
            | "MaxPool"
            | "AveragePool"
            | "LpPool"
    ) {
        return Ok(None);
    }
    let ts: Vec<Option<T>> = inputs.iter().map(|i| i.as_ref().map(T::of)).collect();
    let Some(Some(x)) = ts.first() else {
        return Ok(None);
    };
    let e = |msg: &str| op_error(m, op, msg.to_string());
    let input = |i: usize| ts.get(i).and_then(Option::as_ref);
    let dtype = result_dtype(m, op, 0)?;
    let zp = |i: usize| input(i).map_or(0.0, |t| t.f(0));
    let (shape, vals, extra) = match kind {
        "MatMul" | "MatMulInteger" => {
            let b = input(1).ok_or_else(|| e("B"))?;
            let (az, bz) = (zp(2), zp(3));
            let av: Vec<f64> = x.floats().iter().map(|v| v - az).collect();
            let bv: Vec<f64> = b.floats().iter().map(|v| v - bz).collect();
            let (s, v) = matmul(x, b, &av, &bv).ok_or_else(|| e("MatMul shapes do not match"))?;
            (s, v, None)
        }
        "Gemm" => {
            let b = input(1).ok_or_else(|| e("B"))?;
            let tr = |t: &T, flag: &str| -> T {
                if attr_i64(m, op, flag, 0) == 0 || t.rank() != 2 {
                    return t.clone();
                }
                let (r, c) = (t.shape[0], t.shape[1]);
                let data = (0..r * c).map(|f| t.data[(f % r) * c + f / r]).collect();
                T::new(t.dtype, vec![c, r], data)
            };
            let (a, b) = (tr(x, "transA"), tr(b, "transB"));
            let alpha = attr_f64(m, op, "alpha", 1.0);
            let beta = attr_f64(m, op, "beta", 1.0);
            let (s, mut v) = matmul(&a, &b, &a.floats(), &b.floats())
                .ok_or_else(|| e("Gemm shapes do not match"))?;
            let cb = input(2).and_then(|c| {
                let sh: Vec<i64> = s.iter().map(|&d| d as i64).collect();
                Elements::from_wide(
                    c.dtype,
                    c.shape.iter().map(|&d| d as i64).collect(),
                    &c.data,
                )
                .ok()?
                .broadcast_to(&sh)
                .map(|b| T::of(&b).floats())
            });
            for (i, o) in v.iter_mut().enumerate() {
                *o = alpha * *o + cb.as_ref().map_or(0.0, |c| beta * c[i]);
            }
            (s, v, None)
        }
        "Einsum" => {
            let eq = super::attr_str(m, op, "equation").ok_or_else(|| e("equation"))?;
            let ops: Vec<&T> = ts.iter().flatten().collect();
            let (s, v) = einsum(&eq, &ops).ok_or_else(|| e("bad Einsum"))?;
            (s, v, None)
        }
        "ConvTranspose" => {
            let w = input(1).ok_or_else(|| e("W"))?;
            if x.rank() < 3 || w.rank() != x.rank() {
                return Ok(None);
            }
            let (s, v) =
                conv_transpose(m, op, x, w, input(2)).ok_or_else(|| e("bad ConvTranspose"))?;
            (s, v, None)
        }
        "Conv" | "ConvInteger" => {
            let w = input(1).ok_or_else(|| e("W"))?;
            if x.rank() < 3 || w.rank() != x.rank() {
                return Ok(None);
            }
            let (b, xz) = if kind == "Conv" {
                (input(2), 0.0)
            } else {
                (None, zp(2))
            };
            let wz = if kind == "Conv" {
                Vec::new()
            } else {
                input(3).map(T::floats).unwrap_or_default()
            };
            let (s, v) = conv(m, op, x, w, b, xz, &wz).ok_or_else(|| e("bad Conv"))?;
            (s, v, None)
        }
        _ => {
            if x.rank() < 3 {
                return Ok(None);
            }
            let (s, v, idx) = pool(m, op, kind, x).ok_or_else(|| e("bad pool"))?;
            (s, v, Some(idx))
        }
    };
    let mut outs = vec![T::new(dtype, shape.clone(), from_f64s(dtype, vals))];
    if let (Some(idx), 2) = (extra, m.results(op).len()) {
        if attr_i64(m, op, "storage_order", 0) != 0 {
            return Ok(None);
        }
        outs.push(T::new(
            DType::I64,
            shape,
            idx.into_iter().map(WideNum::from_i64).collect(),
        ));
    }
    super::dense::packed(m, op, outs)
}
