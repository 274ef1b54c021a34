//! Contractions: MatMul, MatMulInteger, Gemm, Einsum, and Det.

use super::dense::{from_f64s, row_strides, unravel, T};
use super::{Fold, Op};
use ir::elements::{DType, Elements};
use onnx::ops;

/// Batched matrix product with NumPy broadcasting of the batch dims.
fn batched_matmul(a: &T, b: &T, av: &[f64], bv: &[f64]) -> Option<(Vec<usize>, Vec<f64>)> {
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

/// Einsum by enumerating every label assignment (test-sized operands).
fn einsum_values(eq: &str, ops: &[&T]) -> Option<(Vec<usize>, Vec<f64>)> {
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

/// Determinant by Gaussian elimination with partial pivoting.
fn determinant(mut a: Vec<f64>, n: usize) -> f64 {
    let mut d = 1.0;
    for c in 0..n {
        let Some(p) = (c..n).max_by(|&i, &j| a[i * n + c].abs().total_cmp(&a[j * n + c].abs()))
        else {
            return 0.0;
        };
        if a[p * n + c] == 0.0 {
            return 0.0;
        }
        if p != c {
            for k in 0..n {
                a.swap(p * n + k, c * n + k);
            }
            d = -d;
        }
        let piv = a[c * n + c];
        d *= piv;
        for r in c + 1..n {
            let f = a[r * n + c] / piv;
            for k in c..n {
                a[r * n + k] -= f * a[c * n + k];
            }
        }
    }
    d
}

/// One float result of the op's dtype.
fn result(o: Op, dtype: DType, shape: Vec<usize>, vals: Vec<f64>) -> Fold {
    o.packed(vec![T::new(dtype, shape, from_f64s(dtype, vals))])
}

/// `a × b` after subtracting the zero points of operands 2 and 3.
fn matmul_op(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let b = ts.get(1).ok_or_else(|| o.err("missing operand B"))?;
    let zp = |i: usize| ts.get(i).map_or(0.0, |t| t.f(0));
    let (az, bz) = (zp(2), zp(3));
    let av: Vec<f64> = x.floats().iter().map(|v| v - az).collect();
    let bv: Vec<f64> = b.floats().iter().map(|v| v - bz).collect();
    let (s, v) =
        batched_matmul(x, b, &av, &bv).ok_or_else(|| o.err("MatMul shapes do not match"))?;
    result(o, dtype, s, v)
}

pub fn matmul(o: Op) -> Fold {
    matmul_op(o)
}

pub fn matmul_integer(o: Op) -> Fold {
    matmul_op(o)
}

/// `t` transposed when `flag` is set and it is a matrix.
fn transposed(t: &T, flag: bool) -> T {
    if !flag || t.rank() != 2 {
        return t.clone();
    }
    let (r, c) = (t.shape[0], t.shape[1]);
    let data = (0..r * c).map(|f| t.data[(f % r) * c + f / r]).collect();
    T::new(t.dtype, vec![c, r], data)
}

pub fn gemm(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let b = ts.get(1).ok_or_else(|| o.err("missing operand B"))?;
    let v = ops::Gemm::of(o.m, o.op);
    let (a, b) = (
        transposed(x, v.trans_a() != 0),
        transposed(b, v.trans_b() != 0),
    );
    let (alpha, beta) = (v.alpha(), v.beta());
    let (s, mut vals) = batched_matmul(&a, &b, &a.floats(), &b.floats())
        .ok_or_else(|| o.err("Gemm shapes do not match"))?;
    let cb = ts.get(2).and_then(|c| {
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
    for (i, out) in vals.iter_mut().enumerate() {
        *out = alpha * *out + cb.as_ref().map_or(0.0, |c| beta * c[i]);
    }
    result(o, dtype, s, vals)
}

pub fn einsum(o: Op) -> Fold {
    let ts = o.dense();
    if ts.get(0).is_none() {
        return Ok(None);
    }
    let dtype = o.dtype(0)?;
    let eq = ops::Einsum::of(o.m, o.op).equation();
    let operands: Vec<&T> = ts.present().collect();
    let (s, v) = einsum_values(eq, &operands).ok_or_else(|| o.err("bad Einsum"))?;
    result(o, dtype, s, v)
}

pub fn det(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let r = x.rank();
    let n = *x.shape.last().ok_or_else(|| o.err("rank"))?;
    let batch = x.len() / (n * n).max(1);
    let xf = x.floats();
    let d = (0..batch)
        .map(|b| determinant(xf[b * n * n..(b + 1) * n * n].to_vec(), n))
        .collect();
    result(o, dtype, x.shape[..r.saturating_sub(2)].to_vec(), d)
}
