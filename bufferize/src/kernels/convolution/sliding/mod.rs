//! Sliding-window reductions over runtime extents: MaxPool, AveragePool
//! and depthwise Conv (one input channel per group).
//!
//! Per output position each axis reads only the kernel taps that land in
//! the input (`Taps`), so no tap is loaded and then masked. Along the last
//! axis, the interior outputs (whose whole window is inside the input)
//! are computed a vector of outputs at a time; the borders stay scalar.
//! The structure comes from the static attributes; the extents only bound
//! the loops. Two-axis windows run on padded polyphase planes instead
//! (`planes`).

mod dense;
mod planes;

pub use dense::dense_conv;

use crate::convert::{contiguous, dims, Lowering};
use crate::kernels::convolution::pool::PoolKind;
use crate::kernels::convolution::window::{Placement, Spatial, WindowAttrs};
use crate::kernels::support::checks;
use crate::kernels::support::epilogue::{self, Act};
use crate::kernels::support::scalar;
use crate::kernels::{support::alloc_result, support::elem_of, support::shape_of};
use crate::loops::{loop_nest, loop_nest_by_work, Bounds, PARALLEL_MIN_WORK};
use ir::builder::{Cmp, CmpI};
use ir::dialects::op_error;
use ir::{Builder, Module, OpId, Result, Type, ValueId};
use onnx::ops;

/// The attributes of a windowed pool: the kernel, the window, and
/// `ceil_mode` and AveragePool's `count_include_pad`.
struct PoolAttrs<'m> {
    kernel: Vec<i64>,
    window: WindowAttrs<'m>,
    ceil_mode: bool,
    include_pad: bool,
}

impl<'m> PoolAttrs<'m> {
    fn of(m: &'m Module, op: OpId, kind: PoolKind) -> PoolAttrs<'m> {
        match kind {
            PoolKind::Max => {
                let v = ops::MaxPool::of(m, op);
                PoolAttrs {
                    kernel: v.kernel_shape(),
                    window: v.into(),
                    ceil_mode: v.ceil_mode() != 0,
                    include_pad: false,
                }
            }
            PoolKind::Average => {
                let v = ops::AveragePool::of(m, op);
                PoolAttrs {
                    kernel: v.kernel_shape(),
                    window: v.into(),
                    ceil_mode: v.ceil_mode() != 0,
                    include_pad: v.count_include_pad() != 0,
                }
            }
        }
    }
}

/// What a window computes from its taps.
#[derive(Clone, Copy)]
enum Reduction {
    Max,
    Average,
    /// `bias[m] + Σ w[m, 0, k…]·x[n, m / mult, …]`.
    Depthwise {
        w: ValueId,
        bias: Option<ValueId>,
        mult: ValueId,
    },
}

/// One sliding-window op's lowering context.
struct Sliding {
    red: Reduction,
    spatial: Spatial,
    place: Placement,
    include_pad: bool,
    x: ValueId,
    out: ValueId,
    elem: Type,
    /// Lanes of the vectorized interior; 0 when scalar only.
    lanes: i64,
    /// Applied to each result (a fused consumer).
    act: Act,
}

/// The output channel's indices and the input's: `[n, m]`, `[n, c]`.
struct Channel {
    out: [ValueId; 2],
    input: [ValueId; 2],
}

/// The kernel taps of one axis that land in the input, `lo..hi`, and how
/// many taps an average divides by on this axis.
#[derive(Clone, Copy)]
struct Taps {
    /// The output position and its window's start `o·s - pb`.
    o: ValueId,
    pos: ValueId,
    lo: ValueId,
    hi: ValueId,
    count: ValueId,
}

pub fn pool(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kind: PoolKind,
) -> Result<Vec<ValueId>> {
    // X of MaxPool and AveragePool
    let x = contiguous(b, cx.input(b.m, op, ops::MaxPool::X)?);
    let sx = shape_of(b.m, x);
    let (spatial, include_pad) = {
        let attrs = PoolAttrs::of(b.m, op, kind);
        if sx.len() != attrs.kernel.len() + 2 || sx.len() < 3 {
            return Err(op_error(
                b.m,
                op,
                "kernel_shape rank must match the spatial rank of X",
            ));
        }
        let spatial = Spatial::new(b.m, op, attrs.kernel, attrs.window)?;
        (spatial.for_pool(attrs.ceil_mode), attrs.include_pad)
    };
    let dx = dims(b, x);
    let place = spatial.runtime(b, &dx[2..]);
    // A window larger than the padded input gives no output (onnxruntime
    // returns an empty tensor); much larger, a negative count: an error.
    let zero = b.const_index(0);
    for &o in &place.outs {
        let msg = "the pooling window is larger than the padded input";
        checks::compare(b, op, CmpI::Sge, o, zero, msg)?;
    }
    let mut out_dims = vec![dx[0], dx[1]];
    out_dims.extend(&place.outs);
    let out = alloc_result(b, op, 0, &out_dims)?;
    let elem = elem_of(b.m, out);
    if kind == PoolKind::Average && !elem.is_float() {
        return Err(op_error(
            b.m,
            op,
            "AveragePool expects floating-point input",
        ));
    }
    let lanes = crate::kernels::support::vector_lanes(&elem, cx.vector_bits);
    let red = match kind {
        PoolKind::Max => Reduction::Max,
        PoolKind::Average => Reduction::Average,
    };
    let pool = Sliding {
        red,
        spatial,
        place,
        include_pad,
        x,
        out,
        elem,
        lanes,
        act: Act::None,
    };
    pool.run_at_width(cx, b, &dx[..2]);
    let wants_indices = kind == PoolKind::Max && b.m.result(op, 1).is_some_and(|r| b.m.has_uses(r));
    if !wants_indices {
        return Ok(vec![out]);
    }
    let indices = alloc_result(b, op, 1, &out_dims)?;
    let column_major = ops::MaxPool::of(b.m, op).storage_order() != 0;
    pool.argmax(b, &dx, indices, column_major);
    Ok(vec![out, indices])
}

/// A Conv with one input channel per group (depthwise, channel
/// multiplier `M / C`) of a float type with vector lanes, as a sliding
/// window; `None` when the conv is not one.
pub fn depthwise_conv(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kernel: Vec<i64>,
    group: i64,
) -> Result<Option<Vec<ValueId>>> {
    let x = contiguous(b, cx.input(b.m, op, ops::Conv::X)?);
    let w = contiguous(b, cx.input(b.m, op, ops::Conv::W)?);
    let (sx, sw) = (shape_of(b.m, x), shape_of(b.m, w));
    let elem = elem_of(b.m, x);
    let lanes = crate::kernels::support::vector_lanes(&elem, cx.vector_bits);
    // Depthwise: C == group (static), one weight channel per output.
    if group <= 1 || sx.get(1) != Some(&group) || sw.get(1) != Some(&1) || lanes == 0 {
        return Ok(None);
    }
    let bias = cx.optional_input(b.m, op, ops::Conv::B)?;
    let spatial = Spatial::new(b.m, op, kernel, ops::Conv::of(b.m, op).into())?;
    let dx = dims(b, x);
    let dw = dims(b, w);
    let place = spatial.runtime(b, &dx[2..]);
    let mut out_dims = vec![dx[0], dw[0]];
    out_dims.extend(&place.outs);
    let out = alloc_result(b, op, 0, &out_dims)?;
    let groups = b.const_index(group);
    let mult = b.divui(dw[0], groups);
    let fused = epilogue::Fused::of(b.m, op);
    let conv = Sliding {
        red: Reduction::Depthwise { w, bias, mult },
        spatial,
        place,
        include_pad: false,
        x,
        out,
        elem,
        lanes,
        act: fused.act(),
    };
    conv.run_at_width(cx, b, &out_dims[..2]);
    fused.bind(cx, b.m, out);
    Ok(Some(vec![out]))
}

impl Sliding {
    fn rank(&self) -> usize {
        self.spatial.kernel.len()
    }

    /// Every output: loops over batch and channel, then the axes.
    /// [`Sliding::run`]; in the portable build a function per x86-64
    /// level at its own vector width (the baseline's 4 lanes ran at v4
    /// too: depthwise convs and pools at half the native speed).
    fn run_at_width(&self, cx: &Lowering, b: &mut Builder<'_>, batch_channels: &[ValueId]) {
        if cx.gemm != crate::kernels::linalg::gemm::Isa::X86Levels || self.lanes == 0 {
            return self.run(b, batch_channels);
        }
        let mut args = self.operands();
        args[1] = crate::kernels::support::any_layout(b, self.out);
        args.extend(batch_channels);
        let kind = match self.red {
            Reduction::Max => "max",
            Reduction::Average => "average",
            Reduction::Depthwise { bias: None, .. } => "depthwise",
            Reduction::Depthwise { bias: Some(_), .. } => "depthwise+bias",
        };
        let key = format!(
            "{kind} {:?} {} {:?} {}",
            self.spatial, self.include_pad, self.act, self.elem
        );
        let name = crate::kernels::support::kernel_symbol(b, "sliding", &key, &args);
        let levels = ir::dialects::func::X86_LEVELS;
        crate::kernels::support::call_per_level(b, (&name, &args), &levels, &|fb, params, l| {
            let lanes = crate::kernels::support::vector_lanes(&self.elem, l.vector_bits);
            let (sliding, rest) = self.with_operands(&params, lanes);
            sliding.run(fb, rest);
        });
    }

    /// The runtime values the kernel reads: X, the output, the
    /// reduction's operands, then the placement's per axis.
    fn operands(&self) -> Vec<ValueId> {
        let mut args = vec![self.x, self.out];
        if let Reduction::Depthwise { w, bias, mult } = self.red {
            args.push(w);
            args.extend(bias);
            args.push(mult);
        }
        args.extend(self.place.values());
        args
    }

    /// This kernel over `params` (in [`Sliding::operands`]' order) at
    /// `lanes`, and the parameters after those.
    fn with_operands<'p>(&self, params: &'p [ValueId], lanes: i64) -> (Sliding, &'p [ValueId]) {
        let mut next = params.iter().copied();
        let mut take = || next.next().unwrap_or(self.x);
        let (x, out) = (take(), take());
        let red = match self.red {
            Reduction::Depthwise { bias, .. } => Reduction::Depthwise {
                w: take(),
                bias: bias.map(|_| take()),
                mult: take(),
            },
            r => r,
        };
        let place = Placement::from_values(self.rank(), &mut take);
        let used = self.operands().len().min(params.len());
        let sliding = Sliding {
            red,
            spatial: self.spatial.clone(),
            place,
            include_pad: self.include_pad,
            x,
            out,
            elem: self.elem.clone(),
            lanes,
            act: self.act,
        };
        (sliding, &params[used..])
    }

    fn run(&self, b: &mut Builder<'_>, batch_channels: &[ValueId]) {
        if self.on_planes() {
            self.run_planes(b, batch_channels);
            return;
        }
        let bounds = Bounds::new(b);
        let work: Vec<ValueId> = batch_channels
            .iter()
            .chain(&self.place.outs)
            .copied()
            .collect();
        loop_nest_by_work(
            b,
            &bounds,
            batch_channels,
            &work,
            PARALLEL_MIN_WORK,
            &mut |b, nc| {
                let c = match self.red {
                    Reduction::Depthwise { mult, .. } => b.divui(nc[1], mult),
                    _ => nc[1],
                };
                let ch = Channel {
                    out: [nc[0], nc[1]],
                    input: [nc[0], c],
                };
                let mut taps = Vec::with_capacity(self.rank());
                self.outer_axes(b, &ch, &mut taps);
            },
        );
    }

    /// The output loops of every axis but the last, each with its taps.
    fn outer_axes(&self, b: &mut Builder<'_>, ch: &Channel, taps: &mut Vec<Taps>) {
        let i = taps.len();
        if i + 1 == self.rank() {
            self.last_axis(b, ch, taps);
            return;
        }
        let (zero, one) = (b.const_index(0), b.const_index(1));
        let n_out = self.place.outs[i];
        // The axis next to the last splits into border rows and interior
        // rows, whose taps are the whole kernel (a constant trip count).
        let ranges = if i + 2 == self.rank() {
            let (lo, hi) = self.interior(b, i);
            vec![(zero, lo, false), (lo, hi, true), (hi, n_out, false)]
        } else {
            vec![(zero, n_out, false)]
        };
        for (from, to, inside) in ranges {
            b.scf_for(from, to, one, &[], |b, o, _| {
                let t = if inside {
                    self.whole_taps(b, i, o)
                } else {
                    self.taps(b, i, o)
                };
                taps.push(t);
                self.outer_axes(b, ch, taps);
                taps.pop();
                Vec::new()
            });
        }
    }

    /// The last axis: scalar borders around a vectorized interior.
    fn last_axis(&self, b: &mut Builder<'_>, ch: &Channel, taps: &[Taps]) {
        let i = self.rank() - 1;
        let zero = b.const_index(0);
        let n_out = self.place.outs[i];
        if self.lanes == 0 {
            self.scalar_range(b, ch, taps, zero, n_out);
            return;
        }
        let (lo, hi) = self.interior(b, i);
        let lanes = b.const_index(self.lanes);
        let len = b.subi(hi, lo);
        let whole = b.floordivsi(len, lanes);
        let whole = b.muli(whole, lanes);
        let vec_end = b.addi(lo, whole);
        let mut split = |b: &mut Builder<'_>| {
            self.scalar_range(b, ch, taps, zero, lo);
            b.scf_for(lo, vec_end, lanes, &[], |b, o, _| {
                self.vector_point(b, ch, taps, o, None);
                Vec::new()
            });
            self.scalar_range(b, ch, taps, vec_end, n_out);
            Vec::new()
        };
        // A row too short for a whole interior vector (the late layers of
        // a mobile net) goes a masked vector at a time instead: the taps
        // outside the input read the neutral value (0, or the lowest for
        // a max), and an average counts its taps per lane.
        let short = b.cmp(Cmp::Eq, whole, zero);
        let mut masked = |b: &mut Builder<'_>| {
            b.scf_for(zero, n_out, lanes, &[], |b, o, _| {
                self.vector_point(b, ch, taps, o, Some(n_out));
                Vec::new()
            });
            Vec::new()
        };
        b.scf_if(short, &[], &mut masked, Some(&mut split));
    }

    fn scalar_range(
        &self,
        b: &mut Builder<'_>,
        ch: &Channel,
        taps: &[Taps],
        from: ValueId,
        to: ValueId,
    ) {
        let one = b.const_index(1);
        let i = self.rank() - 1;
        b.scf_for(from, to, one, &[], |b, o, _| {
            let mut all = taps.to_vec();
            all.push(self.taps(b, i, o));
            let mut oidx = ch.out.to_vec();
            oidx.extend(outputs(taps));
            oidx.push(o);
            self.scalar_point(b, ch, &all, &oidx);
            Vec::new()
        });
    }

    /// Outputs `lo..hi` of axis `i` whose windows lie inside the input:
    /// `o·s - pb >= 0` and `o·s - pb + ek <= in`.
    fn interior(&self, b: &mut Builder<'_>, i: usize) -> (ValueId, ValueId) {
        let s = b.const_index(self.spatial.strides[i]);
        let n_out = self.place.outs[i];
        let first = b.ceildivsi(self.place.begins[i], s);
        let lo = b.minsi(first, n_out);
        let ek = b.const_index(self.spatial.span(i));
        let room = b.subi(self.place.ins[i], ek);
        let room = b.addi(room, self.place.begins[i]);
        let last = b.floordivsi(room, s);
        let one = b.const_index(1);
        let end = b.addi(last, one);
        let hi = b.minsi(end, n_out);
        (lo, b.maxsi(hi, lo))
    }

    /// The taps of an interior output `o` on axis `i`: the whole kernel.
    fn whole_taps(&self, b: &mut Builder<'_>, i: usize, o: ValueId) -> Taps {
        let start = crate::loops::scale_add(b, None, o, self.spatial.strides[i]);
        let pos = b.subi(start, self.place.begins[i]);
        let (zero, k) = (b.const_index(0), b.const_index(self.spatial.kernel[i]));
        Taps {
            o,
            pos,
            lo: zero,
            hi: k,
            count: k,
        }
    }

    /// The taps of output `o` on axis `i`: with `p = o·s - pb`, those `k`
    /// with `0 <= p + k·d < in`; an average with the pads counted counts
    /// those below `in + pe` instead.
    fn taps(&self, b: &mut Builder<'_>, i: usize, o: ValueId) -> Taps {
        let zero = b.const_index(0);
        let k = b.const_index(self.spatial.kernel[i]);
        let d = b.const_index(self.spatial.dilations[i]);
        let start = crate::loops::scale_add(b, None, o, self.spatial.strides[i]);
        let pos = b.subi(start, self.place.begins[i]);
        let neg = b.subi(zero, pos);
        let lo = b.ceildivsi(neg, d);
        let lo = b.maxsi(lo, zero);
        let room = b.subi(self.place.ins[i], pos);
        let hi = b.ceildivsi(room, d);
        let hi = b.minsi(hi, k);
        let count = if self.include_pad {
            let padded = b.addi(self.place.ins[i], self.place.ends[i]);
            let room = b.subi(padded, pos);
            let n = b.ceildivsi(room, d);
            b.minsi(n, k)
        } else {
            let n = b.subi(hi, lo);
            b.maxsi(n, zero)
        };
        Taps {
            o,
            pos,
            lo,
            hi,
            count,
        }
    }

    /// One output from the taps of every axis.
    fn scalar_point(&self, b: &mut Builder<'_>, ch: &Channel, taps: &[Taps], oidx: &[ValueId]) {
        let init = self.init(b, ch);
        let r = over_taps(b, taps, init, &mut |b, ks, acc| {
            let idx = self.input_index(b, ch, taps, ks);
            let v = b.load(self.x, &idx);
            self.combine(b, ch, ks, acc, v)
        });
        let r = self.finish(b, r, taps, None);
        b.store(r, self.out, oidx);
    }

    /// `lanes` outputs `o..` of the last axis, the other axes reading
    /// their taps. In the interior (`end` None) every tap of the last axis
    /// is in range; otherwise lanes at or past `end` and taps outside the
    /// input are masked off and read the reduction's neutral value.
    fn vector_point(
        &self,
        b: &mut Builder<'_>,
        ch: &Channel,
        taps: &[Taps],
        o: ValueId,
        end: Option<ValueId>,
    ) {
        let i = self.rank() - 1;
        let stride = self.spatial.strides[i];
        let init = {
            let s = self.init(b, ch);
            b.broadcast(s, self.lanes)
        };
        let mut all = taps.to_vec();
        all.push(self.whole_taps(b, i, o));
        let offsets = (stride != 1 || end.is_some()).then(|| b.i64_lanes(0, stride, self.lanes));
        let lane_mask = end.map(|end| {
            let left = b.subi(end, o);
            b.create_mask(left, self.lanes)
        });
        let neutral = {
            let n = match self.red {
                Reduction::Max => scalar::lowest(b, &self.elem),
                _ => b.zero(&self.elem),
            };
            b.broadcast(n, self.lanes)
        };
        let r = over_taps(b, &all, init, &mut |b, ks, acc| {
            let idx = self.input_index(b, ch, &all, ks);
            let v = match (offsets, lane_mask) {
                (Some(offs), Some(lanes_on)) => {
                    // Lane l reads position idx.last + l·s: in the input?
                    let at = idx[idx.len() - 1];
                    let inside = self.inside_lanes(b, at, offs);
                    let mask = b.andi(inside, lanes_on);
                    if stride == 1 {
                        b.masked_load(self.x, &idx, mask, neutral)
                    } else {
                        b.gather(self.x, &idx, offs, mask, neutral)
                    }
                }
                (Some(offs), None) => {
                    let on = b.const_bool(true);
                    let mask = b.broadcast(on, self.lanes);
                    b.gather(self.x, &idx, offs, mask, neutral)
                }
                (None, _) => b.vload(self.x, &idx, self.lanes),
            };
            self.combine(b, ch, ks, acc, v)
        });
        let r = match (self.red, end) {
            // Border lanes of an average divide by their own tap counts.
            (Reduction::Average, Some(_)) => {
                let counts = self.lane_counts(b, pos_of(&all));
                self.divide(b, r, &all[..i], Some(counts))
            }
            _ => self.finish(b, r, &all, Some(self.lanes)),
        };
        let mut oidx = ch.out.to_vec();
        oidx.extend(outputs(taps));
        oidx.push(o);
        match lane_mask {
            Some(mask) => b.masked_store(r, self.out, &oidx, mask),
            None => b.vstore(r, self.out, &oidx),
        }
    }

    /// Lanes whose last-axis input position `at + offsets[l]` lies in
    /// `[0, in)`.
    fn inside_lanes(&self, b: &mut Builder<'_>, at: ValueId, offsets: ValueId) -> ValueId {
        let i = self.rank() - 1;
        crate::kernels::support::lanes_inside(b, at, offsets, self.place.ins[i], self.lanes)
    }

    /// The input index `[n, c, p_i + k_i·d_i ...]` of kernel offsets `ks`.
    fn input_index(
        &self,
        b: &mut Builder<'_>,
        ch: &Channel,
        taps: &[Taps],
        ks: &[ValueId],
    ) -> Vec<ValueId> {
        let mut idx = ch.input.to_vec();
        for (i, (t, &k)) in taps.iter().zip(ks).enumerate() {
            idx.push(crate::loops::scale_add(
                b,
                Some(t.pos),
                k,
                self.spatial.dilations[i],
            ));
        }
        idx
    }

    /// The reduction's start: the lowest value for max, the bias or 0.
    fn init(&self, b: &mut Builder<'_>, ch: &Channel) -> ValueId {
        match self.red {
            Reduction::Max => scalar::lowest(b, &self.elem),
            Reduction::Depthwise {
                bias: Some(bias), ..
            } => b.load(bias, &ch.out[1..]),
            Reduction::Average | Reduction::Depthwise { .. } => b.zero(&self.elem),
        }
    }

    /// One tap (scalar or a vector of outputs' taps) into the accumulator:
    /// the max (NaN propagates), the sum, or the weighted sum.
    fn combine(
        &self,
        b: &mut Builder<'_>,
        ch: &Channel,
        ks: &[ValueId],
        acc: ValueId,
        v: ValueId,
    ) -> ValueId {
        match self.red {
            Reduction::Max => b.max(acc, v),
            Reduction::Average => b.add(acc, v),
            Reduction::Depthwise { w, .. } => {
                let zero = b.const_index(0);
                let mut idx = vec![ch.out[1], zero];
                idx.extend_from_slice(ks);
                let wv = b.load(w, &idx);
                if b.m.value_type(v).as_vector().is_some() {
                    let wv = b.broadcast(wv, self.lanes);
                    b.vfma(v, wv, acc)
                } else {
                    scalar::mul_acc(b, acc, v, wv)
                }
            }
        }
    }

    /// An average divides by the product of the axes' counts.
    fn finish(
        &self,
        b: &mut Builder<'_>,
        r: ValueId,
        taps: &[Taps],
        lanes: Option<i64>,
    ) -> ValueId {
        if !matches!(self.red, Reduction::Average) {
            return self.act.apply(b, r);
        }
        match lanes {
            Some(_) => self.divide(b, r, taps, None),
            None => {
                let n = self.count(b, taps);
                b.divf(r, n)
            }
        }
    }

    /// The product of the taps' counts, as an element.
    fn count(&self, b: &mut Builder<'_>, taps: &[Taps]) -> ValueId {
        let mut n = b.const_index(1);
        for t in taps {
            n = b.muli(n, t.count);
        }
        let n = b.index_cast(n, Type::i64());
        b.sitofp(n, self.elem.clone())
    }

    /// A vector of sums divided by the product of `taps`' counts, times
    /// `lane_counts` (the last axis's count per lane) when given.
    fn divide(
        &self,
        b: &mut Builder<'_>,
        r: ValueId,
        taps: &[Taps],
        lane_counts: Option<ValueId>,
    ) -> ValueId {
        let n = self.count(b, taps);
        let mut n = b.broadcast(n, self.lanes);
        if let Some(c) = lane_counts {
            n = b.mulf(n, c);
        }
        b.divf(r, n)
    }

    /// How many last-axis taps each lane's window counts, as elements:
    /// those inside the input, or inside the padded input when the pads
    /// count. Lane `l` is the output whose window starts at `pos + l·s`.
    fn lane_counts(&self, b: &mut Builder<'_>, pos: ValueId) -> ValueId {
        let i = self.rank() - 1;
        let (s, d) = (self.spatial.strides[i], self.spatial.dilations[i]);
        let offsets = b.i64_lanes(0, s, self.lanes);
        // Taps counted lie in [0, len) once shifted by `lead`.
        let (lead, len) = if self.include_pad {
            let lead = self.place.begins[i];
            let padded = b.addi(self.place.ins[i], self.place.ends[i]);
            (Some(lead), b.addi(padded, lead))
        } else {
            (None, self.place.ins[i])
        };
        let one = {
            let x = b.constant(&self.elem, 1.0);
            b.broadcast(x, self.lanes)
        };
        let zero = {
            let x = b.zero(&self.elem);
            b.broadcast(x, self.lanes)
        };
        let mut counts = zero;
        for k in 0..self.spatial.kernel[i] {
            let k = b.const_index(k);
            let at = crate::loops::scale_add(b, Some(pos), k, d);
            let at = match lead {
                Some(lead) => b.addi(at, lead),
                None => at,
            };
            let inside = crate::kernels::support::lanes_inside(b, at, offsets, len, self.lanes);
            let add = b.select(inside, one, zero);
            counts = b.addf(counts, add);
        }
        counts
    }
}

/// The window start of the last axis's taps.
fn pos_of(taps: &[Taps]) -> ValueId {
    taps[taps.len() - 1].pos
}

/// The output position of each axis's taps.
fn outputs(taps: &[Taps]) -> impl Iterator<Item = ValueId> + '_ {
    taps.iter().map(|t| t.o)
}

/// Nested loops over the taps `lo..hi` of each axis, carrying `init`.
fn over_taps(
    b: &mut Builder<'_>,
    taps: &[Taps],
    init: ValueId,
    body: &mut dyn FnMut(&mut Builder<'_>, &[ValueId], ValueId) -> ValueId,
) -> ValueId {
    let mut ks = Vec::with_capacity(taps.len());
    nest_taps(b, taps, &mut ks, init, body)
}

fn nest_taps(
    b: &mut Builder<'_>,
    taps: &[Taps],
    ks: &mut Vec<ValueId>,
    acc: ValueId,
    body: &mut dyn FnMut(&mut Builder<'_>, &[ValueId], ValueId) -> ValueId,
) -> ValueId {
    let Some((t, rest)) = taps.split_first() else {
        return body(b, ks, acc);
    };
    let one = b.const_index(1);
    let op = b.scf_for(t.lo, t.hi, one, &[acc], |b, k, args| {
        ks.push(k);
        let r = nest_taps(b, rest, ks, args[0], body);
        ks.pop();
        vec![r]
    });
    b.m.results(op)[0]
}

impl Sliding {
    /// MaxPool's `Indices`: for each output the flat input index (row-major,
    /// or spatially column-major with `storage_order = 1`) of the first tap
    /// in range equal to the maximum.
    fn argmax(&self, b: &mut Builder<'_>, dx: &[ValueId], indices: ValueId, column_major: bool) {
        let mut out_dims = dx[..2].to_vec();
        out_dims.extend(&self.place.outs);
        let bounds = Bounds::new(b);
        let spatial_size = checks::count(b, &dx[2..]);
        loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
            let best = b.load(self.out, ivs);
            let plane = b.muli(ivs[0], dx[1]);
            let plane = b.addi(plane, ivs[1]);
            let base = b.muli(plane, spatial_size);
            let taps: Vec<Taps> = (0..self.rank())
                .map(|i| self.taps(b, i, ivs[i + 2]))
                .collect();
            let ch = Channel {
                out: [ivs[0], ivs[1]],
                input: [ivs[0], ivs[1]],
            };
            let none = b.const_int(-1, Type::i64());
            let found = over_taps(b, &taps, none, &mut |b, ks, acc| {
                let idx = self.input_index(b, &ch, &taps, ks);
                let v = b.load(self.x, &idx);
                let offset = flat_offset(b, &idx[2..], &dx[2..], column_major);
                let flat = b.addi(base, offset);
                let flat = b.index_cast(flat, Type::i64());
                let equal = b.cmp(Cmp::Eq, v, best);
                let unset = b.cmp(Cmp::Eq, acc, none);
                let take = b.andi(unset, equal);
                b.select(take, flat, acc)
            });
            b.store(found, indices, ivs);
        });
    }
}

/// The flat offset of `pos` in a block of extents `dims`, the last axis
/// fastest, or the first with `column_major`.
fn flat_offset(
    b: &mut Builder<'_>,
    pos: &[ValueId],
    dims: &[ValueId],
    column_major: bool,
) -> ValueId {
    let order: Vec<usize> = if column_major {
        (0..pos.len()).collect()
    } else {
        (0..pos.len()).rev().collect()
    };
    let mut offset = b.const_index(0);
    let mut stride = b.const_index(1);
    for i in order {
        let term = b.muli(pos[i], stride);
        offset = b.addi(offset, term);
        stride = b.muli(stride, dims[i]);
    }
    offset
}
