//! A 2-D convolution with one group, few output channels and a shallow
//! product (a stem conv of 3 input channels, the narrow convs of small
//! CNNs and U-Nets: at most 32 outputs of at most 288 products) over
//! padded polyphase planes (`planes`): per image, every input channel is
//! copied once into its planes; then each block of output channels keeps
//! `block × 2` vectors of flat outputs in registers while it walks the
//! input channels and the taps, one load per tap and vector, one fused
//! multiply-add per output channel. As a GEMM this product packed its
//! im2col columns for every few output channels and spent most of its
//! time there (tv_mobilenet_v3_small's 3 → 16 stem: 16% of the model).

use super::planes::{Geometry, PlaneSource};
use crate::convert::{contiguous, dims, Lowering};
use crate::kernels::convolution::window::{Placement, Spatial};
use crate::kernels::support::epilogue::{self, Act};
use crate::kernels::{support::alloc_result, support::elem_of, support::shape_of};
use crate::loops::{loop_nest_by_work, Bounds, GEMM_MIN_WORK, PARALLEL_MIN_WORK};
use ir::{Builder, OpId, Result, Type, ValueId, DYN};
use onnx::ops;

/// Output channels up to which a conv runs here rather than as a GEMM.
const MOST_OUTPUTS: i64 = 32;

/// More output channels, up to `SHALLOW_MOST_OUTPUTS`, when the products
/// are at most `SHALLOW_DEPTH` deep: a 3×3 stem over three channels (27)
/// packs little for the GEMM to reuse (SqueezeNet's 3→64 stride-2 stem
/// 0.337 → 0.250 ms here; a 7×7 stem, 147 deep, is faster as a GEMM).
const SHALLOW_MOST_OUTPUTS: i64 = 64;
const SHALLOW_DEPTH: i64 = 32;

fn most_outputs(depth: i64) -> i64 {
    match depth <= SHALLOW_DEPTH {
        true => SHALLOW_MOST_OUTPUTS,
        false => MOST_OUTPUTS,
    }
}

/// Products per output (input channels × taps) up to which it does: a
/// deeper product amortizes the GEMM's packing (and Winograd's
/// transforms) over its depth.
const MOST_DEPTH: i64 = 288;

/// Vectors of flat outputs per output channel in the register block.
const VECTORS: i64 = 2;

pub fn dense_conv(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kernel: &[i64],
    group: i64,
) -> Result<Option<Vec<ValueId>>> {
    let x = cx.input(b.m, op, ops::Conv::X)?;
    let w = cx.input(b.m, op, ops::Conv::W)?;
    let (sx, sw) = (shape_of(b.m, x), shape_of(b.m, w));
    let elem = elem_of(b.m, x);
    let lanes = crate::kernels::support::vector_lanes(&elem, cx.vector_bits);
    let outputs = sw.first().copied().unwrap_or(DYN);
    let depth = sw.get(1).map_or(DYN, |&c| {
        if c == DYN {
            DYN
        } else {
            kernel.iter().fold(c, |acc, &k| acc.saturating_mul(k))
        }
    });
    let eligible = group == 1
        && kernel.len() == 2
        && sx.len() == 4
        && lanes > 0
        && (1..=MOST_DEPTH).contains(&depth)
        && (1..=most_outputs(depth)).contains(&outputs);
    if !eligible {
        return Ok(None);
    }
    let spatial = Spatial::new(b.m, op, kernel.to_vec(), ops::Conv::of(b.m, op).into())?;
    // A pointwise window is already a GEMM that reads the input in place.
    if spatial.is_pointwise() {
        return Ok(None);
    }
    let (x, w) = (contiguous(b, x), contiguous(b, w));
    let bias = cx.optional_input(b.m, op, ops::Conv::B)?;
    let (dx, dw) = (dims(b, x), dims(b, w));
    let msg = "the input's channels differ from the weight's times group";
    crate::kernels::support::checks::equal(b, op, dx[1], dw[1], msg)?;
    if let Some(bv) = bias {
        crate::kernels::support::checks::per_channel(b, op, &[(2, bv)], dw[0])?;
    }
    let place = spatial.runtime(b, &dx[2..]);
    let mut out_dims = vec![dx[0], dw[0]];
    out_dims.extend(&place.outs);
    let out = alloc_result(b, op, 0, &out_dims)?;
    let fused = epilogue::Fused::of(b.m, op);
    let conv = DenseOp {
        x,
        w,
        bias,
        out,
        spatial,
        place,
        elem,
        outputs,
        act: fused.act(),
    };
    conv.run_at_width(cx, b, &dx, &out_dims);
    fused.bind(cx, b.m, out);
    Ok(Some(vec![out]))
}

/// A dense conv on planes: what it reads at run time and its static
/// shape, before a vector width is chosen.
struct DenseOp {
    x: ValueId,
    w: ValueId,
    bias: Option<ValueId>,
    out: ValueId,
    spatial: Spatial,
    place: Placement,
    elem: Type,
    outputs: i64,
    act: Act,
}

impl DenseOp {
    /// In the portable build a function per x86-64 level at its own
    /// vector width (the baseline's ran at v4 too: a 3→16 stem at 0.6 of
    /// the native speed).
    fn run_at_width(
        &self,
        cx: &Lowering,
        b: &mut Builder<'_>,
        dx: &[ValueId],
        out_dims: &[ValueId],
    ) {
        if cx.gemm != crate::kernels::linalg::gemm::Isa::X86Levels {
            return self.run_at(b, cx.vector_bits, dx, out_dims);
        }
        let out = crate::kernels::support::any_layout(b, self.out);
        let mut args = vec![self.x, self.w, out];
        args.extend(self.bias);
        args.extend(self.place.values());
        args.extend(dx);
        args.extend(out_dims);
        let key = format!(
            "{:?} {} {} {:?} {}",
            self.spatial,
            self.outputs,
            self.bias.is_some(),
            self.act,
            self.elem
        );
        let name = crate::kernels::support::kernel_symbol(b, "dense_conv", &key, &args);
        let levels = ir::dialects::func::X86_LEVELS;
        let rank = dx.len();
        crate::kernels::support::call_per_level(b, (&name, &args), &levels, &|fb, params, l| {
            let mut next = params.iter().copied();
            let mut take = || next.next().unwrap_or(self.x);
            let (x, w, out) = (take(), take(), take());
            let bias = self.bias.map(|_| take());
            let place = Placement::from_values(self.spatial.kernel.len(), &mut take);
            let dims: Vec<ValueId> = (0..2 * rank).map(|_| take()).collect();
            let conv = DenseOp {
                x,
                w,
                bias,
                out,
                spatial: self.spatial.clone(),
                place,
                elem: self.elem.clone(),
                outputs: self.outputs,
                act: self.act,
            };
            conv.run_at(fb, l.vector_bits, &dims[..rank], &dims[rank..]);
        });
    }

    fn run_at(&self, b: &mut Builder<'_>, bits: u32, dx: &[ValueId], out_dims: &[ValueId]) {
        let lanes = crate::kernels::support::vector_lanes(&self.elem, bits).max(1);
        let zero = b.zero(&self.elem);
        let src = PlaneSource {
            x: self.x,
            spatial: &self.spatial,
            place: &self.place,
            lanes,
            neutral: b.broadcast(zero, lanes),
        };
        // Accumulators of a block: `block · VECTORS` of the register file
        // (32 vector registers from 512 bits, else 16), with room for the
        // loads and a broadcast weight.
        let block = if bits >= 512 { 8 } else { 4 };
        let conv = Dense {
            src,
            w: self.w,
            bias: self.bias,
            out: self.out,
            elem: self.elem.clone(),
            outputs: self.outputs,
            block: block.min(self.outputs),
            act: self.act,
        };
        conv.run(b, dx, out_dims);
    }
}

struct Dense<'a> {
    src: PlaneSource<'a>,
    w: ValueId,
    bias: Option<ValueId>,
    out: ValueId,
    elem: Type,
    /// Output channels (static).
    outputs: i64,
    /// Output channels per register block.
    block: i64,
    act: Act,
}

impl Dense<'_> {
    /// Per image: every channel's planes, then the blocks of outputs.
    fn run(&self, b: &mut Builder<'_>, dx: &[ValueId], out_dims: &[ValueId]) {
        let g = self.src.geometry(b);
        let bounds = Bounds::new(b);
        let ty = Type::memref(vec![DYN], self.elem.clone());
        let channels = dx[1];
        let all_planes = b.muli(channels, g.planes);
        let planes_len = b.addi(all_planes, g.slack);
        let mut work = out_dims.to_vec();
        work.push(channels);
        let full = self.outputs / self.block;
        let blocks = b.const_index(full);
        b.scf_for(bounds.zero, dx[0], bounds.one, &[], |b, n, _| {
            let planes = b.alloc_aligned(&ty, &[planes_len], 64);
            loop_nest_by_work(
                b,
                &bounds,
                &[channels],
                &dx[1..],
                PARALLEL_MIN_WORK,
                &mut |b, c| {
                    let first = b.muli(c[0], g.planes);
                    self.src.fill(b, &g, [n, c[0]], (planes, first));
                },
            );
            let input = (planes, channels);
            loop_nest_by_work(b, &bounds, &[blocks], &work, GEMM_MIN_WORK, &mut |b, k| {
                let first = crate::loops::scale_add(b, None, k[0], self.block);
                self.outputs_block(b, &g, input, (n, first), self.block);
            });
            let rest = self.outputs % self.block;
            if rest > 0 {
                let first = b.const_index(full * self.block);
                self.outputs_block(b, &g, input, (n, first), rest);
            }
            Vec::new()
        });
    }

    /// Output channels `first..first + count` of image `n`: flat outputs
    /// into a scratch buffer, then their rows into the result.
    fn outputs_block(
        &self,
        b: &mut Builder<'_>,
        g: &Geometry,
        (planes, channels): (ValueId, ValueId),
        (n, first): (ValueId, ValueId),
        count: i64,
    ) {
        let ty = Type::memref(vec![DYN], self.elem.clone());
        let flat = b.muli(self.src.place.outs[0], g.wq);
        let pitch = b.addi(flat, g.slack);
        let count_v = b.const_index(count);
        let len = b.muli(count_v, pitch);
        let scratch = b.alloc_aligned(&ty, &[len], 64);
        let offs = self.src.tap_offsets(b, g);
        let l = self.src.lanes;
        let step = b.const_index(l * VECTORS);
        let zero = b.const_index(0);
        let starts: Vec<ValueId> = (0..count)
            .map(|j| {
                let j = b.const_index(j);
                b.muli(j, pitch)
            })
            .collect();
        b.scf_for(zero, flat, step, &[], |b, q, _| {
            let accs = self.accumulate(b, (planes, channels), g, &offs, (first, count), q);
            for (j, row) in accs.chunks(VECTORS as usize).enumerate() {
                for (v, &acc) in row.iter().enumerate() {
                    let r = self.act.apply(b, acc);
                    let at = b.addi(starts[j], q);
                    let lane0 = b.const_index(v as i64 * l);
                    let at = b.addi(at, lane0);
                    b.vstore(r, scratch, &[at]);
                }
            }
            Vec::new()
        });
        for (j, &start) in starts.iter().enumerate() {
            let jj = b.const_index(j as i64);
            let m = b.addi(first, jj);
            self.src
                .copy_rows(b, g.wq, (self.out, [n, m]), (scratch, start), None);
        }
    }

    /// The block's `count × VECTORS` sums at flat outputs `q..`, over
    /// every input channel and tap, from the bias.
    fn accumulate(
        &self,
        b: &mut Builder<'_>,
        (planes, channels): (ValueId, ValueId),
        g: &Geometry,
        offs: &[ValueId],
        (first, count): (ValueId, i64),
        q: ValueId,
    ) -> Vec<ValueId> {
        let l = self.src.lanes;
        let ms: Vec<ValueId> = (0..count)
            .map(|j| {
                let j = b.const_index(j);
                b.addi(first, j)
            })
            .collect();
        let inits: Vec<ValueId> = ms
            .iter()
            .flat_map(|&m| {
                let s = match self.bias {
                    Some(bias) => b.load(bias, &[m]),
                    None => b.zero(&self.elem),
                };
                let v = b.broadcast(s, l);
                std::iter::repeat_n(v, VECTORS as usize)
            })
            .collect();
        let (zero, one) = (b.const_index(0), b.const_index(1));
        let kw = self.src.spatial.kernel[1];
        let lp = b.scf_for(zero, channels, one, &inits, |b, c, accs| {
            let base = b.muli(c, g.planes);
            let base = b.addi(base, q);
            let mut accs = accs.to_vec();
            for (t, &off) in (0..).zip(offs) {
                let at = b.addi(base, off);
                let xs: Vec<ValueId> = (0..VECTORS)
                    .map(|v| {
                        let lane0 = b.const_index(v * l);
                        let at = b.addi(at, lane0);
                        b.vload(planes, &[at], l)
                    })
                    .collect();
                let (ku, kv) = (b.const_index(t / kw), b.const_index(t % kw));
                for (j, &m) in ms.iter().enumerate() {
                    let s = b.load(self.w, &[m, c, ku, kv]);
                    let wv = b.broadcast(s, l);
                    for (v, &x) in xs.iter().enumerate() {
                        let i = j * VECTORS as usize + v;
                        accs[i] = b.vfma(x, wv, accs[i]);
                    }
                }
            }
            accs
        });
        b.m.results(lp).to_vec()
    }
}
