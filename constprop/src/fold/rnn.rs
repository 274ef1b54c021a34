//! RNN, GRU and LSTM (forward, reverse, bidirectional; both layouts).

use super::dense::{from_f64s, T};
use super::{attr_i64, attr_str, result_dtype};
use ir::attr::Attribute;
use ir::dialects::op_error;
use ir::elements::Elements;
use ir::{Module, OpId, Result};

type Act = Box<dyn Fn(f64) -> f64>;

fn activation(name: &str, alpha: Option<f64>, beta: Option<f64>) -> Option<Act> {
    let sig = |x: f64| 1.0 / (1.0 + (-x).exp());
    Some(match name.to_ascii_lowercase().as_str() {
        "sigmoid" => Box::new(sig),
        "tanh" => Box::new(f64::tanh),
        "relu" => Box::new(|x: f64| x.max(0.0)),
        "affine" => {
            let (a, b) = (alpha.unwrap_or(1.0), beta.unwrap_or(0.0));
            Box::new(move |x| a * x + b)
        }
        "leakyrelu" => {
            let a = alpha.unwrap_or(0.01);
            Box::new(move |x| if x < 0.0 { a * x } else { x })
        }
        "thresholdedrelu" => {
            let a = alpha.unwrap_or(1.0);
            Box::new(move |x| if x > a { x } else { 0.0 })
        }
        "scaledtanh" => {
            let (a, b) = (alpha.unwrap_or(1.0), beta.unwrap_or(1.0));
            Box::new(move |x| a * (b * x).tanh())
        }
        "hardsigmoid" => {
            let (a, b) = (alpha.unwrap_or(0.2), beta.unwrap_or(0.5));
            Box::new(move |x| (a * x + b).clamp(0.0, 1.0))
        }
        "elu" => {
            let a = alpha.unwrap_or(1.0);
            Box::new(move |x| if x < 0.0 { a * (x.exp() - 1.0) } else { x })
        }
        "softsign" => Box::new(|x: f64| x / (1.0 + x.abs())),
        "softplus" => Box::new(|x: f64| x.exp().ln_1p()),
        _ => return None,
    })
}

fn strings(m: &Module, op: OpId, name: &str) -> Option<Vec<String>> {
    m.attr(op, name)?
        .as_array()?
        .iter()
        .map(|a| a.as_str().map(str::to_string))
        .collect()
}

fn floats(m: &Module, op: OpId, name: &str) -> Vec<f64> {
    m.attr(op, name)
        .and_then(Attribute::as_array)
        .map(|a| a.iter().filter_map(Attribute::as_float).collect())
        .unwrap_or_default()
}

pub fn fold(
    m: &Module,
    op: OpId,
    kind: &str,
    inputs: &[Option<Elements>],
) -> Result<Option<Vec<Elements>>> {
    let gates = match kind {
        "RNN" => 1,
        "GRU" => 3,
        "LSTM" => 4,
        _ => return Ok(None),
    };
    let e = |msg: &str| op_error(m, op, msg.to_string());
    let ts: Vec<Option<T>> = inputs.iter().map(|i| i.as_ref().map(T::of)).collect();
    let input = |i: usize| ts.get(i).and_then(Option::as_ref);
    let (Some(x), Some(w), Some(r)) = (input(0), input(1), input(2)) else {
        return Ok(None);
    };
    let layout = attr_i64(m, op, "layout", 0);
    let (seq, batch, isz) = match (x.shape.as_slice(), layout) {
        (&[s, b, i], 0) => (s, b, i),
        (&[b, s, i], _) => (s, b, i),
        _ => return Ok(None),
    };
    let dirs = w.shape[0];
    let h = r.shape.get(2).copied().ok_or_else(|| e("R rank"))?;
    let direction = attr_str(m, op, "direction").unwrap_or_else(|| "forward".into());
    let clip = m.attr(op, "clip").and_then(Attribute::as_float);
    let lbr = attr_i64(m, op, "linear_before_reset", 0) != 0;
    let input_forget = attr_i64(m, op, "input_forget", 0) != 0;
    let defaults: &[&str] = match kind {
        "RNN" => &["Tanh"],
        "GRU" => &["Sigmoid", "Tanh"],
        _ => &["Sigmoid", "Tanh", "Tanh"],
    };
    let names = strings(m, op, "activations").unwrap_or_default();
    let (alphas, betas) = (
        floats(m, op, "activation_alpha"),
        floats(m, op, "activation_beta"),
    );
    let nact = defaults.len();
    let mut acts: Vec<Act> = Vec::new();
    for d in 0..dirs {
        for (k, &default) in defaults.iter().enumerate() {
            let i = d * nact + k;
            let name = names.get(i).map_or(default, String::as_str);
            acts.push(
                activation(name, alphas.get(i).copied(), betas.get(i).copied())
                    .ok_or_else(|| e("unsupported activation"))?,
            );
        }
    }
    let (xv, wv, rv) = (x.floats(), w.floats(), r.floats());
    let bv = input(3).map(T::floats);
    let lens = input(4).map(T::ints);
    let h0 = input(5).map(T::floats);
    let c0 = input(6).map(T::floats);
    let pv = input(7).map(T::floats);
    let xat = |t: usize, b: usize, i: usize| {
        if layout == 0 {
            xv[(t * batch + b) * isz + i]
        } else {
            xv[(b * seq + t) * isz + i]
        }
    };
    // State index [dir][batch][hidden] regardless of layout.
    let st = |d: usize, b: usize, j: usize| (d * batch + b) * h + j;
    let init = |v: &Option<Vec<f64>>, d: usize, b: usize, j: usize| -> f64 {
        v.as_ref().map_or(0.0, |v| {
            if layout == 0 {
                v[st(d, b, j)]
            } else {
                v[(b * dirs + d) * h + j]
            }
        })
    };
    let mut y = vec![0.0; seq * dirs * batch * h];
    let mut yh = vec![0.0; dirs * batch * h];
    let mut yc = vec![0.0; dirs * batch * h];
    let cl = |v: f64| clip.map_or(v, |c| v.clamp(-c, c));
    for d in 0..dirs {
        let rev = direction == "reverse" || (direction == "bidirectional" && d == 1);
        let f = &acts[d * nact];
        let g = acts.get(d * nact + 1);
        let hh = acts.get(d * nact + 2);
        for b in 0..batch {
            let len = lens
                .as_ref()
                .map_or(seq, |l| (l[b].max(0) as usize).min(seq));
            let mut hs: Vec<f64> = (0..h).map(|j| init(&h0, d, b, j)).collect();
            let mut cs: Vec<f64> = (0..h).map(|j| init(&c0, d, b, j)).collect();
            for step in 0..len {
                let t = if rev { len - 1 - step } else { step };
                // Pre-activations per gate: x·W + b_w and h·R + b_r, kept apart for GRU.
                let mut xw = vec![0.0; gates * h];
                let mut hr = vec![0.0; gates * h];
                for (k, (a, c)) in xw.iter_mut().zip(hr.iter_mut()).enumerate() {
                    let row = (d * gates * h + k) * isz;
                    *a = (0..isz).map(|i| xat(t, b, i) * wv[row + i]).sum::<f64>();
                    let rrow = (d * gates * h + k) * h;
                    *c = (0..h).map(|j| hs[j] * rv[rrow + j]).sum::<f64>();
                    if let Some(bv) = &bv {
                        *a += bv[d * 2 * gates * h + k];
                        *c += bv[d * 2 * gates * h + gates * h + k];
                    }
                }
                let mut nh = vec![0.0; h];
                match kind {
                    "RNN" => {
                        for j in 0..h {
                            nh[j] = f(cl(xw[j] + hr[j]));
                        }
                    }
                    "GRU" => {
                        let g = g.ok_or_else(|| e("activation"))?;
                        let z: Vec<f64> = (0..h).map(|j| f(cl(xw[j] + hr[j]))).collect();
                        let rg: Vec<f64> = (0..h).map(|j| f(cl(xw[h + j] + hr[h + j]))).collect();
                        for j in 0..h {
                            let hpart = if lbr {
                                rg[j] * hr[2 * h + j]
                            } else {
                                let rrow = (d * gates * h + 2 * h + j) * h;
                                let rb = bv.as_ref().map_or(0.0, |bv| {
                                    bv[d * 2 * gates * h + gates * h + 2 * h + j]
                                });
                                (0..h).map(|k| rg[k] * hs[k] * rv[rrow + k]).sum::<f64>() + rb
                            };
                            let ht = g(cl(xw[2 * h + j] + hpart));
                            nh[j] = (1.0 - z[j]) * ht + z[j] * hs[j];
                        }
                    }
                    _ => {
                        let (g, hh) = (
                            g.ok_or_else(|| e("activation"))?,
                            hh.ok_or_else(|| e("activation"))?,
                        );
                        let p = |k: usize, j: usize| {
                            pv.as_ref().map_or(0.0, |p| p[d * 3 * h + k * h + j])
                        };
                        for j in 0..h {
                            let i = f(cl(xw[j] + hr[j] + p(0, j) * cs[j]));
                            let fg = if input_forget {
                                1.0 - i
                            } else {
                                f(cl(xw[2 * h + j] + hr[2 * h + j] + p(2, j) * cs[j]))
                            };
                            let c = g(cl(xw[3 * h + j] + hr[3 * h + j]));
                            let nc = fg * cs[j] + i * c;
                            let o = f(cl(xw[h + j] + hr[h + j] + p(1, j) * nc));
                            nh[j] = o * hh(nc);
                            cs[j] = nc;
                        }
                    }
                }
                hs = nh;
                for (j, &v) in hs.iter().enumerate() {
                    let pos = if layout == 0 {
                        ((t * dirs + d) * batch + b) * h + j
                    } else {
                        ((b * seq + t) * dirs + d) * h + j
                    };
                    y[pos] = v;
                }
            }
            for j in 0..h {
                let pos = if layout == 0 {
                    st(d, b, j)
                } else {
                    (b * dirs + d) * h + j
                };
                yh[pos] = hs[j];
                yc[pos] = cs[j];
            }
        }
    }
    let dtype = result_dtype(m, op, 0).unwrap_or(x.dtype);
    let (ys, hs) = if layout == 0 {
        (vec![seq, dirs, batch, h], vec![dirs, batch, h])
    } else {
        (vec![batch, seq, dirs, h], vec![batch, dirs, h])
    };
    let mut outs = vec![
        T::new(dtype, ys, from_f64s(dtype, y)),
        T::new(dtype, hs.clone(), from_f64s(dtype, yh)),
        T::new(dtype, hs, from_f64s(dtype, yc)),
    ];
    outs.truncate(m.results(op).len());
    super::dense::packed(m, op, outs)
}
