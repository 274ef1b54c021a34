//! Sliding-window geometry shared by Conv and the pools: strides,
//! dilations and begin pads (auto_pad resolved), and the in-bounds input
//! index of an output position plus a kernel offset.

use crate::loops;
use ir::builder::Cmp;
use ir::dialects::op_error;
use ir::{Builder, Module, OpId, Result, ValueId, DYN};
use onnx::ops;

/// The window attributes of a Conv-like op, read through its typed view.
pub struct WindowAttrs<'m> {
    pub strides: Option<Vec<i64>>,
    pub dilations: Option<Vec<i64>>,
    pub pads: Option<Vec<i64>>,
    pub auto_pad: &'m str,
}

/// `WindowAttrs` from the view of every op with the four attributes.
macro_rules! window_attrs_of {
    ($($view:ident),*) => {$(
        impl<'m> From<ops::$view<'m>> for WindowAttrs<'m> {
            fn from(v: ops::$view<'m>) -> Self {
                WindowAttrs {
                    strides: v.strides(),
                    dilations: v.dilations(),
                    pads: v.pads(),
                    auto_pad: v.auto_pad(),
                }
            }
        }
    )*};
}
window_attrs_of!(Conv, ConvInteger, QLinearConv, MaxPool, AveragePool, LpPool);

/// How a window op pads, from `auto_pad` and `pads`.
#[derive(Clone, Debug)]
pub enum Padding {
    /// Explicit begin and end pads per spatial axis.
    Explicit(Vec<i64>, Vec<i64>),
    Valid,
    /// Output `ceil(in / s)`; the extra padding goes at the end (UPPER)
    /// or the beginning (LOWER).
    Same {
        upper: bool,
    },
}

/// A sliding window whose input extents are runtime values: the static
/// parts (kernel, strides, dilations, padding rule) and, per call, the
/// output extents and begin pads computed from the input's.
#[derive(Clone, Debug)]
pub struct Spatial {
    pub kernel: Vec<i64>,
    pub strides: Vec<i64>,
    pub dilations: Vec<i64>,
    pub padding: Padding,
    /// Pools' `ceil_mode`: a last partial window that starts inside the
    /// input or the begin pad counts.
    pub ceil: bool,
    /// Pools count windows as onnxruntime does, rounding toward zero: a
    /// window a little larger than the padded input still gives one
    /// output (frontend's `infer::nn::Fit`).
    pub pool: bool,
}

/// A window placed over runtime input extents: per spatial axis the
/// input and output extents and the begin and end pads.
pub struct Placement {
    pub ins: Vec<ValueId>,
    pub outs: Vec<ValueId>,
    pub begins: Vec<ValueId>,
    pub ends: Vec<ValueId>,
}

impl Placement {
    /// Its values, axis list after axis list (a kernel's parameters).
    pub fn values(&self) -> Vec<ValueId> {
        [&self.ins, &self.outs, &self.begins, &self.ends]
            .into_iter()
            .flatten()
            .copied()
            .collect()
    }

    /// A placement of `rank` axes from `next` values, in
    /// [`Placement::values`]' order.
    pub fn from_values(rank: usize, next: &mut dyn FnMut() -> ValueId) -> Placement {
        let mut axis = || (0..rank).map(|_| next()).collect::<Vec<_>>();
        Placement {
            ins: axis(),
            outs: axis(),
            begins: axis(),
            ends: axis(),
        }
    }
}

impl Spatial {
    pub fn new(m: &Module, op: OpId, kernel: Vec<i64>, attrs: WindowAttrs<'_>) -> Result<Spatial> {
        let s = kernel.len();
        let strides = attrs.strides.unwrap_or_else(|| vec![1; s]);
        let dilations = attrs.dilations.unwrap_or_else(|| vec![1; s]);
        if strides.len() != s || dilations.len() != s {
            return Err(op_error(
                m,
                op,
                "strides, dilations and kernel rank must match the spatial rank",
            ));
        }
        // A dynamic kernel extent (DYN) comes at run time (`placement`).
        if strides
            .iter()
            .chain(&dilations)
            .chain(kernel.iter().filter(|&&k| k != DYN))
            .any(|&v| v < 1)
        {
            return Err(op_error(
                m,
                op,
                "kernel, strides and dilations must be positive",
            ));
        }
        let padding = match attrs.auto_pad {
            "NOTSET" => {
                let pads = attrs.pads.unwrap_or_else(|| vec![0; 2 * s]);
                if pads.len() != 2 * s || pads.iter().any(|&p| p < 0) {
                    return Err(op_error(
                        m,
                        op,
                        "pads must have two non-negative entries per spatial dim",
                    ));
                }
                Padding::Explicit(pads[..s].to_vec(), pads[s..].to_vec())
            }
            "VALID" => Padding::Valid,
            "SAME_UPPER" => Padding::Same { upper: true },
            "SAME_LOWER" => Padding::Same { upper: false },
            other => return Err(op_error(m, op, format!("unknown auto_pad '{other}'"))),
        };
        Ok(Spatial {
            kernel,
            strides,
            dilations,
            padding,
            ceil: false,
            pool: false,
        })
    }

    /// A pool's windows, `ceil_mode` as given.
    pub fn for_pool(mut self, ceil: bool) -> Spatial {
        self.ceil = ceil;
        self.pool = true;
        self
    }

    /// The extent of the dilated kernel of axis `i`.
    pub fn span(&self, i: usize) -> i64 {
        (self.kernel[i] - 1) * self.dilations[i] + 1
    }

    /// The placement over input extents `ins`: output extents (ONNX's
    /// formulas, `ceil` as pools define it) and the pads.
    pub fn runtime(&self, b: &mut Builder<'_>, ins: &[ValueId]) -> Placement {
        self.placement(b, ins, None)
    }

    /// [`Spatial::runtime`] with the kernel extents `ks` given at run time
    /// (`None`: the static ones; a weight of dynamic spatial dims).
    pub fn placement(
        &self,
        b: &mut Builder<'_>,
        ins: &[ValueId],
        ks: Option<&[ValueId]>,
    ) -> Placement {
        let mut p = Placement {
            ins: ins.to_vec(),
            outs: Vec::with_capacity(ins.len()),
            begins: Vec::with_capacity(ins.len()),
            ends: Vec::with_capacity(ins.len()),
        };
        for (i, &d) in ins.iter().enumerate() {
            // The dilated kernel's extent (k - 1)·d + 1.
            let ek = match ks {
                Some(ks) => {
                    let one = b.const_index(1);
                    let km1 = b.subi(ks[i], one);
                    let t = loops::scale_add(b, None, km1, self.dilations[i]);
                    b.addi(t, one)
                }
                None => b.const_index(self.span(i)),
            };
            let (o, pb, pe) = match &self.padding {
                Padding::Explicit(pb, pe) => {
                    let (pb, pe) = (b.const_index(pb[i]), b.const_index(pe[i]));
                    (self.windows(b, (i, ek), d, pb, pe), pb, pe)
                }
                Padding::Valid => {
                    let zero = b.const_index(0);
                    (self.windows(b, (i, ek), d, zero, zero), zero, zero)
                }
                Padding::Same { upper } => self.same(b, (i, ek), d, *upper),
            };
            p.outs.push(o);
            p.begins.push(pb);
            p.ends.push(pe);
        }
        p
    }

    /// Number of windows over `d` padded by `pb`, `pe`.
    fn windows(
        &self,
        b: &mut Builder<'_>,
        (i, ek): (usize, ValueId),
        d: ValueId,
        pb: ValueId,
        pe: ValueId,
    ) -> ValueId {
        let s = b.const_index(self.strides[i]);
        let one = b.const_index(1);
        let padded = b.addi(d, pb);
        let padded = b.addi(padded, pe);
        let span = b.subi(padded, ek);
        if !self.ceil {
            let q = match self.pool {
                true => b.divsi(span, s),
                false => b.floordivsi(span, s),
            };
            return b.addi(q, one);
        }
        let q = b.ceildivsi(span, s);
        let o = b.addi(q, one);
        // A last window starting in the end pad is dropped.
        let om1 = b.subi(o, one);
        let start = b.muli(om1, s);
        let limit = b.addi(d, pb);
        let drop = b.cmp(Cmp::Ge, start, limit);
        let zero = b.const_index(0);
        let dec = b.select(drop, one, zero);
        b.subi(o, dec)
    }

    /// SAME padding over `d`: `ceil(d / s)` windows, the pad total split
    /// with the odd one at the end (UPPER) or the beginning (LOWER).
    fn same(
        &self,
        b: &mut Builder<'_>,
        (i, ekv): (usize, ValueId),
        d: ValueId,
        upper: bool,
    ) -> (ValueId, ValueId, ValueId) {
        let (s, one) = (b.const_index(self.strides[i]), b.const_index(1));
        let o = b.ceildivsi(d, s);
        // total = max(0, (o - 1)·s + ek - in)
        let om1 = b.subi(o, one);
        let span = b.muli(om1, s);
        let need = b.addi(span, ekv);
        let total = b.subi(need, d);
        let zero = b.const_index(0);
        let total = b.maxsi(total, zero);
        let two = b.const_index(2);
        let half = b.divsi(total, two);
        let pb = if upper { half } else { b.subi(total, half) };
        let pe = b.subi(total, pb);
        (o, pb, pe)
    }

    /// Input position (unclamped, may be in the pads) of output position
    /// `o` plus kernel offset `k` on axis `i`.
    pub fn position(
        &self,
        b: &mut Builder<'_>,
        p: &Placement,
        i: usize,
        o: ValueId,
        k: ValueId,
    ) -> ValueId {
        let base = loops::scale_add(b, None, o, self.strides[i]);
        let pos = loops::scale_add(b, Some(base), k, self.dilations[i]);
        b.subi(pos, p.begins[i])
    }

    /// Over every axis, for output positions `outs` and kernel offsets
    /// `ks`: the input indices clamped into range and whether all were in
    /// range.
    pub fn input_indices(
        &self,
        b: &mut Builder<'_>,
        p: &Placement,
        outs: &[ValueId],
        ks: &[ValueId],
    ) -> (Vec<ValueId>, ValueId) {
        let zero = b.const_index(0);
        let mut idx = Vec::with_capacity(self.kernel.len());
        let mut inside = b.const_bool(true);
        for i in 0..self.kernel.len() {
            let pos = self.position(b, p, i, outs[i], ks[i]);
            let ge = b.cmp(Cmp::Ge, pos, zero);
            let lt = b.cmp(Cmp::Lt, pos, p.ins[i]);
            let ok = b.andi(ge, lt);
            inside = b.andi(inside, ok);
            idx.push(b.select(ok, pos, zero));
        }
        (idx, inside)
    }

    /// True for a 1×1 window that reads each input position once in
    /// place (stride 1, no padding): a convolution is then a plain GEMM.
    pub fn is_pointwise(&self) -> bool {
        let unpadded = match &self.padding {
            Padding::Explicit(b, e) => b.iter().chain(e).all(|&p| p == 0),
            Padding::Valid | Padding::Same { .. } => true,
        };
        unpadded && self.kernel.iter().all(|&k| k == 1) && self.strides.iter().all(|&s| s == 1)
    }
}
