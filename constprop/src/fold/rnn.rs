//! RNN, GRU and LSTM (forward, reverse, bidirectional; both layouts).

use super::dense::{from_f64s, T};
use super::{Fold, Op};
use onnx::ops;

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

/// The recurrent cells.
#[derive(Clone, Copy)]
enum Cell {
    Rnn,
    Gru { linear_before_reset: bool },
    Lstm { input_forget: bool },
}

impl Cell {
    fn gates(self) -> usize {
        match self {
            Cell::Rnn => 1,
            Cell::Gru { .. } => 3,
            Cell::Lstm { .. } => 4,
        }
    }
    /// The activations of one direction when the op names none.
    fn default_activations(self) -> &'static [&'static str] {
        match self {
            Cell::Rnn => &["tanh"],
            Cell::Gru { .. } => &["sigmoid", "tanh"],
            Cell::Lstm { .. } => &["sigmoid", "tanh", "tanh"],
        }
    }
}

/// The attributes the three ops share.
struct Attrs<'a> {
    layout: i64,
    direction: &'a str,
    clip: Option<f64>,
    activations: Vec<&'a str>,
    alphas: Vec<f64>,
    betas: Vec<f64>,
}

macro_rules! attrs {
    ($v:expr, $activations:expr) => {{
        let v = $v;
        Attrs {
            layout: v.layout(),
            direction: v.direction(),
            clip: v.clip(),
            activations: $activations,
            alphas: v.activation_alpha().unwrap_or_default(),
            betas: v.activation_beta().unwrap_or_default(),
        }
    }};
}

pub fn rnn(o: Op) -> Fold {
    let v = ops::RNN::of(o.m, o.op);
    run(o, Cell::Rnn, attrs!(v, v.activations()))
}

pub fn gru(o: Op) -> Fold {
    let v = ops::GRU::of(o.m, o.op);
    let cell = Cell::Gru {
        linear_before_reset: v.linear_before_reset() != 0,
    };
    run(o, cell, attrs!(v, v.activations().unwrap_or_default()))
}

pub fn lstm(o: Op) -> Fold {
    let v = ops::LSTM::of(o.m, o.op);
    let cell = Cell::Lstm {
        input_forget: v.input_forget() != 0,
    };
    run(o, cell, attrs!(v, v.activations().unwrap_or_default()))
}

/// The weights and dims of one op.
struct Net {
    cell: Cell,
    /// `layout` 0: [seq, batch, ..], else [batch, seq, ..].
    seq_major: bool,
    seq: usize,
    batch: usize,
    isz: usize,
    h: usize,
    dirs: usize,
    xv: Vec<f64>,
    wv: Vec<f64>,
    rv: Vec<f64>,
    bv: Option<Vec<f64>>,
    pv: Option<Vec<f64>>,
    clip: Option<f64>,
}

impl Net {
    fn x_at(&self, t: usize, b: usize, i: usize) -> f64 {
        if self.seq_major {
            self.xv[(t * self.batch + b) * self.isz + i]
        } else {
            self.xv[(b * self.seq + t) * self.isz + i]
        }
    }

    /// Position of state element (d, b, j) in an initial or final state.
    fn state_at(&self, d: usize, b: usize, j: usize) -> usize {
        if self.seq_major {
            (d * self.batch + b) * self.h + j
        } else {
            (b * self.dirs + d) * self.h + j
        }
    }

    /// Position of (t, d, b, j) in the output sequence.
    fn y_at(&self, t: usize, d: usize, b: usize, j: usize) -> usize {
        if self.seq_major {
            ((t * self.dirs + d) * self.batch + b) * self.h + j
        } else {
            ((b * self.seq + t) * self.dirs + d) * self.h + j
        }
    }

    fn clip(&self, v: f64) -> f64 {
        self.clip.map_or(v, |c| v.clamp(-c, c))
    }

    /// Pre-activations per gate: x·W + b_w and h·R + b_r, kept apart for GRU.
    fn preacts(&self, (d, b, t): (usize, usize, usize), hs: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let (gh, h, isz) = (self.cell.gates() * self.h, self.h, self.isz);
        let mut xw = vec![0.0; gh];
        let mut hr = vec![0.0; gh];
        for (k, (a, c)) in xw.iter_mut().zip(hr.iter_mut()).enumerate() {
            let row = (d * gh + k) * isz;
            *a = (0..isz)
                .map(|i| self.x_at(t, b, i) * self.wv[row + i])
                .sum::<f64>();
            let rrow = (d * gh + k) * h;
            *c = (0..h).map(|j| hs[j] * self.rv[rrow + j]).sum::<f64>();
            if let Some(bv) = &self.bv {
                *a += bv[d * 2 * gh + k];
                *c += bv[d * 2 * gh + gh + k];
            }
        }
        (xw, hr)
    }

    /// The next hidden state (and, for LSTM, cell state in `cs`).
    fn step(
        &self,
        acts: &[Act],
        d: usize,
        (xw, hr): (&[f64], &[f64]),
        hs: &[f64],
        cs: &mut [f64],
    ) -> Vec<f64> {
        let h = self.h;
        let gh = self.cell.gates() * h;
        let f = &acts[0];
        let cl = |v: f64| self.clip(v);
        match self.cell {
            Cell::Rnn => (0..h).map(|j| f(cl(xw[j] + hr[j]))).collect(),
            Cell::Gru {
                linear_before_reset,
            } => {
                let g = &acts[1];
                let z: Vec<f64> = (0..h).map(|j| f(cl(xw[j] + hr[j]))).collect();
                let rg: Vec<f64> = (0..h).map(|j| f(cl(xw[h + j] + hr[h + j]))).collect();
                (0..h)
                    .map(|j| {
                        let hpart = if linear_before_reset {
                            rg[j] * hr[2 * h + j]
                        } else {
                            let rrow = (d * gh + 2 * h + j) * h;
                            let rb = self
                                .bv
                                .as_ref()
                                .map_or(0.0, |bv| bv[d * 2 * gh + gh + 2 * h + j]);
                            (0..h)
                                .map(|k| rg[k] * hs[k] * self.rv[rrow + k])
                                .sum::<f64>()
                                + rb
                        };
                        let ht = g(cl(xw[2 * h + j] + hpart));
                        (1.0 - z[j]) * ht + z[j] * hs[j]
                    })
                    .collect()
            }
            Cell::Lstm { input_forget } => {
                let (g, hh) = (&acts[1], &acts[2]);
                let p =
                    |k: usize, j: usize| self.pv.as_ref().map_or(0.0, |p| p[d * 3 * h + k * h + j]);
                let mut nh = vec![0.0; h];
                for j in 0..h {
                    let i = f(cl(xw[j] + hr[j] + p(0, j) * cs[j]));
                    let fg = if input_forget {
                        1.0 - i
                    } else {
                        f(cl(xw[2 * h + j] + hr[2 * h + j] + p(2, j) * cs[j]))
                    };
                    let c = g(cl(xw[3 * h + j] + hr[3 * h + j]));
                    let nc = fg * cs[j] + i * c;
                    let og = f(cl(xw[h + j] + hr[h + j] + p(1, j) * nc));
                    nh[j] = og * hh(nc);
                    cs[j] = nc;
                }
                nh
            }
        }
    }
}

/// Each direction's activations from the op's names or the defaults.
fn activations(o: Op, cell: Cell, a: &Attrs, dirs: usize) -> Result<Vec<Vec<Act>>, ir::Diagnostic> {
    let defaults = cell.default_activations();
    let nact = defaults.len();
    (0..dirs)
        .map(|d| {
            defaults
                .iter()
                .enumerate()
                .map(|(k, &default)| {
                    let i = d * nact + k;
                    let name = a.activations.get(i).copied().unwrap_or(default);
                    activation(name, a.alphas.get(i).copied(), a.betas.get(i).copied())
                        .ok_or_else(|| o.err("unsupported activation"))
                })
                .collect()
        })
        .collect()
}

/// The outputs Y, Y_h, Y_c (as many as the op has).
struct States {
    y: Vec<f64>,
    yh: Vec<f64>,
    yc: Vec<f64>,
}

fn run(o: Op, cell: Cell, a: Attrs) -> Fold {
    let ts = o.dense();
    let (Some(x), Some(w), Some(r)) = (ts.get(0), ts.get(1), ts.get(2)) else {
        return Ok(None);
    };
    let (seq, batch, isz) = match (x.shape.as_slice(), a.layout) {
        (&[s, b, i], 0) => (s, b, i),
        (&[b, s, i], _) => (s, b, i),
        _ => return Ok(None),
    };
    let dirs = w.shape[0];
    let h = r.shape.get(2).copied().ok_or_else(|| o.err("R rank"))?;
    let acts = activations(o, cell, &a, dirs)?;
    let net = Net {
        cell,
        seq_major: a.layout == 0,
        seq,
        batch,
        isz,
        h,
        dirs,
        xv: x.floats(),
        wv: w.floats(),
        rv: r.floats(),
        bv: ts.get(3).map(T::floats),
        pv: ts.get(7).map(T::floats),
        clip: a.clip,
    };
    let lens = ts.get(4).map(T::ints);
    let (h0, c0) = (ts.get(5).map(T::floats), ts.get(6).map(T::floats));
    let init = |v: &Option<Vec<f64>>, d, b, j| v.as_ref().map_or(0.0, |v| v[net.state_at(d, b, j)]);
    let mut out = States {
        y: vec![0.0; seq * dirs * batch * h],
        yh: vec![0.0; dirs * batch * h],
        yc: vec![0.0; dirs * batch * h],
    };
    for (d, acts) in acts.iter().enumerate() {
        let rev = a.direction == "reverse" || (a.direction == "bidirectional" && d == 1);
        for b in 0..batch {
            let len = lens
                .as_ref()
                .map_or(seq, |l| (l[b].max(0) as usize).min(seq));
            let mut hs: Vec<f64> = (0..h).map(|j| init(&h0, d, b, j)).collect();
            let mut cs: Vec<f64> = (0..h).map(|j| init(&c0, d, b, j)).collect();
            for step in 0..len {
                let t = if rev { len - 1 - step } else { step };
                let (xw, hr) = net.preacts((d, b, t), &hs);
                hs = net.step(acts, d, (&xw, &hr), &hs, &mut cs);
                for (j, &v) in hs.iter().enumerate() {
                    out.y[net.y_at(t, d, b, j)] = v;
                }
            }
            for j in 0..h {
                let pos = net.state_at(d, b, j);
                out.yh[pos] = hs[j];
                out.yc[pos] = cs[j];
            }
        }
    }
    let dtype = o.dtype(0).unwrap_or(x.dtype);
    let (ys, hs) = if net.seq_major {
        (vec![seq, dirs, batch, h], vec![dirs, batch, h])
    } else {
        (vec![batch, seq, dirs, h], vec![batch, dirs, h])
    };
    let mut outs = vec![
        T::new(dtype, ys, from_f64s(dtype, out.y)),
        T::new(dtype, hs.clone(), from_f64s(dtype, out.yh)),
        T::new(dtype, hs, from_f64s(dtype, out.yc)),
    ];
    outs.truncate(o.nres());
    o.packed(outs)
}
