//! Softmax, LogSoftmax and Hardmax along one axis (the importer rewrites
//! the older opsets' 2-D coercion into this form).

use crate::convert::{dims, Lowering};
use crate::kernels::support::scalar;
use crate::kernels::{support::alloc_result, support::shape_of};
use crate::loops::{loop_nest, loop_nest_by_work, reduce_nest, Bounds, PARALLEL_MIN_WORK};
use ir::builder::Cmp;
use ir::{Builder, OpId, Result, ValueId};
use onnx::ops;

/// Which normalization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Norm {
    Softmax,
    LogSoftmax,
    Hardmax,
}

pub fn softmax(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kind: Norm,
) -> Result<Vec<ValueId>> {
    // input of Softmax, LogSoftmax and Hardmax
    let x = cx.input(b.m, op, ops::Softmax::INPUT)?;
    let rank = shape_of(b.m, x).len();
    let axis = match kind {
        Norm::Softmax => ops::Softmax::of(b.m, op).axis(),
        Norm::LogSoftmax => ops::LogSoftmax::of(b.m, op).axis(),
        Norm::Hardmax => ops::Hardmax::of(b.m, op).axis(),
    };
    let axis = crate::kernels::support::axis(b.m, op, axis, rank)?;
    let elem = crate::kernels::support::elem_of(b.m, x);
    let lanes = crate::kernels::support::vector_lanes(&elem, cx.vector_bits);
    if kind != Norm::Hardmax && axis + 1 == rank && lanes > 0 {
        return Ok(vec![last_axis(cx, b, (op, x), kind, lanes)?]);
    }
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let bounds = Bounds::new(b);
    let mut outer_ubs = dx.clone();
    outer_ubs[axis] = bounds.one;
    let inner_ubs = [dx[axis]];
    let merge = |outer: &[ValueId], inn: &[ValueId]| -> Vec<ValueId> {
        let mut idx = outer.to_vec();
        idx[axis] = inn[0];
        idx
    };
    loop_nest_by_work(
        b,
        &bounds,
        &outer_ubs,
        &dx,
        PARALLEL_MIN_WORK,
        &mut |b, ovs| {
            let lowest = scalar::lowest(b, &elem);
            let mx = reduce_nest(b, &bounds, &inner_ubs, lowest, &mut |b, ivs, acc| {
                let v = b.load(x, &merge(ovs, ivs));
                if kind == Norm::Hardmax {
                    // Strictly greater keeps the first maximum.
                    let gt = b.cmp(Cmp::Gt, v, acc);
                    b.select(gt, v, acc)
                } else {
                    b.max(acc, v)
                }
            });
            if kind == Norm::Hardmax {
                let zero = b.constant(&elem, 0.0);
                let one = b.constant(&elem, 1.0);
                let fals = b.const_bool(false);
                reduce_nest(b, &bounds, &inner_ubs, fals, &mut |b, ivs, done| {
                    let idx = merge(ovs, ivs);
                    let v = b.load(x, &idx);
                    let eq = b.cmp(Cmp::Eq, v, mx);
                    let t = b.const_bool(true);
                    let not_done = b.xori(done, t);
                    let hit = b.andi(eq, not_done);
                    let r = b.select(hit, one, zero);
                    b.store(r, out, &idx);
                    b.ori(done, hit)
                });
                return;
            }
            let acc_ty = scalar::sum_acc_type(&elem);
            let zero = b.constant(&acc_ty, 0.0);
            let sum = reduce_nest(b, &bounds, &inner_ubs, zero, &mut |b, ivs, acc| {
                let idx = merge(ovs, ivs);
                let v = b.load(x, &idx);
                let d = b.sub(v, mx);
                let e = b.exp(d);
                if kind == Norm::Softmax {
                    b.store(e, out, &idx);
                }
                let e = scalar::fcast(b, e, &acc_ty);
                b.add(acc, e)
            });
            let sum = scalar::fcast(b, sum, &elem);
            let log_sum = (kind == Norm::LogSoftmax).then(|| b.log(sum));
            loop_nest(b, &bounds, &inner_ubs, &mut |b, ivs| {
                let idx = merge(ovs, ivs);
                let r = match log_sum {
                    Some(ls) => {
                        let v = b.load(x, &idx);
                        let d = b.sub(v, mx);
                        b.sub(d, ls)
                    }
                    None => {
                        let e = b.load(out, &idx);
                        b.div(e, sum)
                    }
                };
                b.store(r, out, &idx);
            });
        },
    );
    Ok(vec![out])
}

/// Softmax or LogSoftmax of `x` along its last axis, by [`Rows`].
fn last_axis(
    cx: &Lowering,
    b: &mut Builder<'_>,
    (op, x): (OpId, ValueId),
    kind: Norm,
    lanes: i64,
) -> Result<ValueId> {
    let x = crate::convert::contiguous(b, x);
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    rows_into(cx, b, (x, out), (kind, false), lanes);
    Ok(out)
}

/// `kind` of each last-axis row of the contiguous `x` into `out` (of
/// its shape and element type), `lanes` at a time; in the portable build
/// a function per x86-64 level at its own width (the 256-bit code ran at
/// level 4 too: attention 1.14× the native build). `masked_rows`: a row
/// that is -inf throughout gives zeros (Attention's fully masked rows),
/// not NaN.
pub(crate) fn rows_into(
    cx: &Lowering,
    b: &mut Builder<'_>,
    (x, out): (ValueId, ValueId),
    (kind, masked_rows): (Norm, bool),
    lanes: i64,
) {
    let dx = dims(b, x);
    if cx.gemm != crate::kernels::linalg::gemm::Isa::X86Levels {
        let rows = Rows {
            x,
            out,
            kind,
            lanes,
            masked_rows,
        };
        return rows.run(b, &dx);
    }
    let elem = crate::kernels::support::elem_of(b.m, x);
    let mut args = vec![x, out];
    args.extend(&dx);
    let tag = format!("{kind:?}{}", if masked_rows { "_masked" } else { "" });
    let name = crate::kernels::support::kernel_symbol(b, "softmax_rows", &tag, &args);
    let levels = ir::dialects::func::X86_LEVELS;
    crate::kernels::support::call_per_level(b, (&name, &args), &levels, &|fb, params, l| {
        let lanes = crate::kernels::support::vector_lanes(&elem, l.vector_bits).max(1);
        let (x, out) = (params[0], params[1]);
        Rows {
            x,
            out,
            kind,
            lanes,
            masked_rows,
        }
        .run(fb, &params[2..]);
    });
}

/// Softmax or LogSoftmax along the last (contiguous) axis, `lanes` at a
/// time: the max and the sum in vector accumulators reduced once per
/// row, the row's last partial vector under a mask. The scalar nest
/// carried its sum from element to element, which LLVM does not
/// vectorize (reassociating float adds changes the result).
struct Rows {
    x: ValueId,
    out: ValueId,
    kind: Norm,
    lanes: i64,
    /// Rows of -inf give zeros: their max counts as 0 and their sum of
    /// zeros as 1.
    masked_rows: bool,
}

impl Rows {
    fn run(&self, b: &mut Builder<'_>, dx: &[ValueId]) {
        let bounds = Bounds::new(b);
        let (outer, n) = dx.split_at(dx.len() - 1);
        let n = n[0];
        loop_nest_by_work(b, &bounds, outer, dx, PARALLEL_MIN_WORK, &mut |b, ovs| {
            let l = b.const_index(self.lanes);
            let whole = b.floordivsi(n, l);
            let whole = b.muli(whole, l);
            let left = b.subi(n, whole);
            let tail = b.create_mask(left, self.lanes);
            let at = |j: ValueId| {
                let mut idx = ovs.to_vec();
                idx.push(j);
                idx
            };
            let elem = crate::kernels::support::elem_of(b.m, self.x);
            let lowest = scalar::lowest(b, &elem);
            let lowest = b.broadcast(lowest, self.lanes);
            // The max.
            let lp = b.scf_for(bounds.zero, whole, l, &[lowest], |b, j, acc| {
                let v = b.vload(self.x, &at(j), self.lanes);
                vec![b.max(acc[0], v)]
            });
            let last = b.masked_load(self.x, &at(whole), tail, lowest);
            let acc = b.max(b.m.results(lp)[0], last);
            let mut mx = b.reduction(ir::builder::Reduce::MaximumF, acc);
            if self.masked_rows {
                let lowest = scalar::lowest(b, &elem);
                let none = b.cmpf(ir::builder::CmpF::Oeq, mx, lowest);
                let zero = b.zero(&elem);
                mx = b.select(none, zero, mx);
            }
            let mx = b.broadcast(mx, self.lanes);
            // exp(x - max), stored for Softmax, and its sum.
            let zero = b.zero(&elem);
            let zero = b.broadcast(zero, self.lanes);
            let lp = b.scf_for(bounds.zero, whole, l, &[zero], |b, j, acc| {
                let v = b.vload(self.x, &at(j), self.lanes);
                let e = self.shifted_exp(b, v, mx, (&at(j), None));
                vec![b.add(acc[0], e)]
            });
            let v = b.masked_load(self.x, &at(whole), tail, mx);
            let e = self.shifted_exp(b, v, mx, (&at(whole), Some(tail)));
            let e = b.select(tail, e, zero);
            let sum = b.add(b.m.results(lp)[0], e);
            let mut sum = b.reduction(ir::builder::Reduce::Add, sum);
            if self.masked_rows {
                let zero = b.zero(&elem);
                let none = b.cmpf(ir::builder::CmpF::Oeq, sum, zero);
                let one = b.one(&elem);
                sum = b.select(none, one, sum);
            }
            self.normalize(b, (mx, sum), (whole, tail), &at);
        });
    }

    /// `exp(v - max)`, stored at `idx` (under `mask`) when the result is
    /// Softmax's.
    fn shifted_exp(
        &self,
        b: &mut Builder<'_>,
        v: ValueId,
        mx: ValueId,
        (idx, mask): (&[ValueId], Option<ValueId>),
    ) -> ValueId {
        let d = b.sub(v, mx);
        let e = b.exp(d);
        match (self.kind, mask) {
            (Norm::Softmax, Some(m)) => b.masked_store(e, self.out, idx, m),
            (Norm::Softmax, None) => b.vstore(e, self.out, idx),
            _ => {}
        }
        e
    }

    /// Softmax: `e / sum`; LogSoftmax: `x - max - log(sum)`.
    fn normalize(
        &self,
        b: &mut Builder<'_>,
        (mx, sum): (ValueId, ValueId),
        (whole, tail): (ValueId, ValueId),
        at: &dyn Fn(ValueId) -> Vec<ValueId>,
    ) {
        let zero = b.const_index(0);
        let l = b.const_index(self.lanes);
        let log_sum = (self.kind == Norm::LogSoftmax).then(|| {
            let ls = b.log(sum);
            b.broadcast(ls, self.lanes)
        });
        let sum = b.broadcast(sum, self.lanes);
        let one = |b: &mut Builder<'_>, j: ValueId, mask: Option<ValueId>| {
            let src = if log_sum.is_some() { self.x } else { self.out };
            let v = match mask {
                Some(m) => b.masked_load(src, &at(j), m, sum),
                None => b.vload(src, &at(j), self.lanes),
            };
            let r = match log_sum {
                Some(ls) => {
                    let d = b.sub(v, mx);
                    b.sub(d, ls)
                }
                None => b.div(v, sum),
            };
            match mask {
                Some(m) => b.masked_store(r, self.out, &at(j), m),
                None => b.vstore(r, self.out, &at(j)),
            }
        };
        b.scf_for(zero, whole, l, &[], |b, j, _| {
            one(b, j, None);
            Vec::new()
        });
        one(b, whole, Some(tail));
    }
}
