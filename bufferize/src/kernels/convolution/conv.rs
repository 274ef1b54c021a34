//! Conv (1-D/2-D/3-D, groups, strides, pads, dilations, auto_pad).

use crate::convert::{contiguous, dims, Lowering};
use crate::kernels::convolution::window::Spatial;
use crate::kernels::linalg::gemm;
use crate::kernels::support::epilogue;
use crate::kernels::support::scalar;
use crate::kernels::{support::alloc_result, support::elem_of, support::shape_of};
use crate::loops::{loop_nest_by_work, reduce_nest, Bounds, GEMM_MIN_WORK};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, ValueId, DYN};
use onnx::ops;

pub fn conv(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let (x, w) = (
        cx.input(b.m, op, ops::Conv::X)?,
        cx.input(b.m, op, ops::Conv::W)?,
    );
    let (sx, sw) = (shape_of(b.m, x), shape_of(b.m, w));
    if sx.len() < 3 || sw.len() != sx.len() {
        return Err(op_error(b.m, op, "Conv expects X and W of equal rank >= 3"));
    }
    let attrs = ops::Conv::of(b.m, op);
    // The kernel's extents: the weight's, else the kernel_shape attribute
    // (DYN: known at run time only).
    let kernel = match attrs.kernel_shape() {
        Some(k) if k.len() + 2 == sw.len() => k,
        _ => sw[2..].to_vec(),
    };
    let group = attrs.group();
    if group <= 0 || (sw[0] != DYN && sw[0] % group != 0) {
        return Err(op_error(
            b.m,
            op,
            "group must divide the number of output channels",
        ));
    }
    // The sliding-window and GEMM paths are built for the kernel's static
    // extents; runtime ones take the direct nest.
    if kernel.contains(&DYN) {
        return direct_conv(cx, b, op, kernel, group);
    }
    if let Some(r) =
        crate::kernels::convolution::sliding::depthwise_conv(cx, b, op, kernel.clone(), group)?
    {
        return Ok(r);
    }
    if let Some(r) = crate::kernels::convolution::sliding::dense_conv(cx, b, op, &kernel, group)? {
        return Ok(r);
    }
    if crate::kernels::linalg::matmul::gemm_elem(&elem_of(b.m, x)) {
        return gemm_conv(cx, b, op, kernel, group);
    }
    direct_conv(cx, b, op, kernel, group)
}

/// A Conv's operands (X and W contiguous, the bias), its window, their
/// dims, and the group count, with `C == Cg · group` checked.
pub(crate) struct Operands {
    pub x: ValueId,
    pub w: ValueId,
    pub bias: Option<ValueId>,
    pub win: Spatial,
    pub dx: Vec<ValueId>,
    pub dw: Vec<ValueId>,
    pub groups: ValueId,
}

impl Operands {
    fn of(
        cx: &Lowering,
        b: &mut Builder<'_>,
        op: OpId,
        kernel: &[i64],
        group: i64,
    ) -> Result<Operands> {
        let x = contiguous(b, cx.input(b.m, op, ops::Conv::X)?);
        let w = contiguous(b, cx.input(b.m, op, ops::Conv::W)?);
        let bias = cx.optional_input(b.m, op, ops::Conv::B)?;
        let win = Spatial::new(b.m, op, kernel.to_vec(), ops::Conv::of(b.m, op).into())?;
        let (dx, dw) = (dims(b, x), dims(b, w));
        let groups = b.const_index(group);
        let channels = b.muli(dw[1], groups);
        let msg = "the input's channels differ from the weight's times group";
        crate::kernels::support::checks::equal(b, op, dx[1], channels, msg)?;
        Ok(Operands {
            x,
            w,
            bias,
            win,
            dx,
            dw,
            groups,
        })
    }
}

/// Conv as a loop nest per output element over the group's channels and
/// the kernel taps (f16/bf16, or a kernel whose extents come at run time).
fn direct_conv(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kernel: Vec<i64>,
    group: i64,
) -> Result<Vec<ValueId>> {
    let Operands {
        x,
        w,
        bias,
        win,
        dx,
        dw,
        groups,
    } = Operands::of(cx, b, op, &kernel, group)?;
    let ks: Vec<ValueId> = kernel
        .iter()
        .zip(&dw[2..])
        .map(|(&k, &d)| if k == DYN { d } else { b.const_index(k) })
        .collect();
    let msg = "group does not divide the number of output channels";
    crate::kernels::support::checks::divides(b, op, dw[0], groups, msg)?;
    if let Some(bv) = bias {
        crate::kernels::support::checks::per_channel(b, op, &[(2, bv)], dw[0])?;
    }
    let place = win.placement(b, &dx[2..], Some(&ks));
    let mut out_dims = vec![dx[0], dw[0]];
    out_dims.extend(&place.outs);
    let out = alloc_result(b, op, 0, &out_dims)?;
    let elem = elem_of(b.m, out);
    let acc_ty = scalar::acc_type(&elem);
    let bounds = Bounds::new(b);
    let mut red_dims = vec![dw[1]];
    red_dims.extend_from_slice(&ks);
    let (mpg, cpg) = (b.divui(dw[0], groups), dw[1]);
    let work: Vec<ValueId> = out_dims.iter().chain(&red_dims).copied().collect();
    loop_nest_by_work(
        b,
        &bounds,
        &out_dims,
        &work,
        GEMM_MIN_WORK,
        &mut |b, ivs| {
            let (n, mo) = (ivs[0], ivs[1]);
            let g = b.divsi(mo, mpg);
            let c_base = b.mul(g, cpg);
            let init = match bias {
                Some(bv) => {
                    let v = b.load(bv, &[mo]);
                    scalar::fcast(b, v, &acc_ty)
                }
                None => b.zero(&acc_ty),
            };
            let sum = reduce_nest(b, &bounds, &red_dims, init, &mut |b, r, acc| {
                let c = b.add(c_base, r[0]);
                let (pos, inside) = win.input_indices(b, &place, &ivs[2..], &r[1..]);
                let mut xidx = vec![n, c];
                xidx.extend(pos);
                let xv = b.load(x, &xidx);
                let mut widx = vec![mo, r[0]];
                widx.extend_from_slice(&r[1..]);
                let wv = b.load(w, &widx);
                let zero_v = b.zero(&elem);
                let xv = b.select(inside, xv, zero_v);
                scalar::mul_acc(b, acc, xv, wv)
            });
            let sum = scalar::fcast(b, sum, &elem);
            b.store(sum, out, ivs);
        },
    );
    Ok(vec![out])
}

/// Conv of float elements on the packed GEMM, or for a 3×3 stride-1
/// window with constant weights on Winograd F(2×2, 3×3) when the output
/// has enough tiles (decided at compile time when the sizes are static,
/// else at run time).
pub fn gemm_conv(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kernel: Vec<i64>,
    group: i64,
) -> Result<Vec<ValueId>> {
    let ops = Operands::of(cx, b, op, &kernel, group)?;
    let place = ops.win.runtime(b, &ops.dx[2..]);
    let mut out_dims = vec![ops.dx[0], ops.dw[0]];
    out_dims.extend(&place.outs);
    let out = alloc_result(b, op, 0, &out_dims)?;
    let fused = epilogue::Fused::with_residual(b.m, op);
    let act = fused.act();
    let residual = fused.residual(cx, b.m)?.map(|r| contiguous(b, r));
    if let Some(r) = residual {
        let dr = dims(b, r);
        for (&have, &want) in dr.iter().zip(&out_dims) {
            let msg = "the residual Add's other operand differs from the conv's result in shape";
            crate::kernels::support::checks::equal(b, op, have, want, msg)?;
        }
    }
    let isa = cx.gemm;
    let epi = Epilogue { act, residual };
    let packed = packed_weights(cx, b, op, &ops, group);
    let im2col = |b: &mut Builder<'_>| {
        gemm_into(
            b,
            (isa, packed),
            &ops,
            &kernel,
            (&place.outs, &place.begins),
            out,
            epi,
        );
        Vec::new()
    };
    use crate::kernels::convolution::winograd::Choice;
    match crate::kernels::convolution::winograd::plan(cx, b, op, &ops, &kernel, group)? {
        Some(plan) => match plan.worthwhile(b, &place.outs) {
            Choice::Static(true) => plan.run(b, &ops, &place, out, epi),
            Choice::Static(false) => {
                im2col(b);
            }
            Choice::Runtime(cond) => {
                let mut im2col = im2col;
                let mut winograd = |b: &mut Builder<'_>| {
                    plan.run(b, &ops, &place, out, epi);
                    Vec::new()
                };
                b.scf_if(cond, &[], &mut winograd, Some(&mut im2col));
            }
        },
        None => {
            im2col(b);
        }
    }
    fused.bind(cx, b.m, out);
    Ok(vec![out])
}

/// Constant weights packed for the GEMM's micro-kernel at compile time
/// (`gemm::PackedA`): the flat packed buffer and its padded rows
/// per group. Packing them at run time cost as much as the products on
/// small images (a 7×7 pointwise conv has 49 columns per weight).
fn packed_weights(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    ops: &Operands,
    group: i64,
) -> Option<(ValueId, i64)> {
    let elem = elem_of(b.m, ops.w);
    let sw = shape_of(b.m, ops.w);
    if sw.contains(&DYN) || group < 1 {
        return None;
    }
    let weights = crate::kernels::support::constant_elements(b.m, op, ops::Conv::W)?;
    let dtype = ir::elements::DType::from_type(&elem)?;
    let groups = usize::try_from(group).ok()?;
    let m = usize::try_from(*sw.first()?).ok()?;
    let k: usize = sw[1..]
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .product::<Option<usize>>()?;
    if weights.dtype() != dtype || weights.len() != m.checked_mul(k)? || m % groups != 0 {
        return None;
    }
    let bl = gemm::Blocking::of(cx.gemm, &elem);
    let layout = gemm::PackedA::new(dtype.storage_bytes(1)?, (groups, m / groups, k), bl)?;
    let source = (weights, layout.elements());
    let (global, _) =
        crate::kernels::support::packed_global(cx, b, source, move |w, out| layout.pack(w, out))?;
    Some((global, i64::try_from(layout.padded).ok()?))
}

/// What a convolution applies to its sums as it stores them: a residual
/// value of the output's shape, then an activation.
#[derive(Clone, Copy)]
pub(crate) struct Epilogue {
    pub act: epilogue::Act,
    pub residual: Option<ValueId>,
}

/// The GEMM path into `out`, per image and group:
/// `out[n, g·Mg + m, p] = bias[g·Mg + m] + Σ_k W[g·Mg + m, k] · col[k, p]`
/// with `col` the im2col view of the image's group channels (gathered
/// while packing; the input itself for a pointwise window). Every extent
/// is a runtime value, so dynamic batch and spatial dims run this code.
fn gemm_into(
    b: &mut Builder<'_>,
    (isa, packed): (gemm::Isa, Option<(ValueId, i64)>),
    ops: &Operands,
    kernel: &[i64],
    (outs, pads): (&[ValueId], &[ValueId]),
    out: ValueId,
    epi: Epilogue,
) {
    let (x, w, bias, spatial, dx, dw, groups) = (
        ops.x, ops.w, ops.bias, &ops.win, &ops.dx, &ops.dw, ops.groups,
    );
    let mut out_dims = vec![dx[0], dw[0]];
    out_dims.extend(outs);
    let elem = elem_of(b.m, out);
    let prod = crate::kernels::support::index::product;
    let (xlen, wlen, olen) = (prod(b, dx), prod(b, dw), prod(b, &out_dims));
    let (xf, wf, of) = (
        gemm::flat(b, x, xlen),
        gemm::flat(b, w, wlen),
        gemm::flat(b, out, olen),
    );
    let bias = match bias {
        Some(bv) => {
            let n = b.dim(bv, 0);
            Some(gemm::flat(b, bv, n))
        }
        None => None,
    };
    let pointwise = spatial.is_pointwise();
    let source = if pointwise {
        gemm::BSource::Matrix { unit_n: true }
    } else {
        gemm::BSource::Conv(gemm::ConvGeometry {
            kernel: kernel.to_vec(),
            strides: spatial.strides.clone(),
            dilations: spatial.dilations.clone(),
        })
    };
    let mut v = gemm::Variant::plain(&elem, isa, source);
    if bias.is_some() {
        v.bias = gemm::Bias::Row;
    }
    v.act = epi.act;
    v.residual = epi.residual.is_some();
    v.a_packed = packed.is_some();
    let residual = epi.residual.map(|r| gemm::flat(b, r, olen));
    // Per image and group: M = M/g rows, K = C/g · taps, N = output size.
    let mg = b.divui(dw[0], groups);
    let kdim = prod(b, &dw[1..]);
    let pout = prod(b, outs);
    let pin = prod(b, &dx[2..]);
    let one = b.const_index(1);
    let b_args: Vec<ValueId> = if pointwise {
        vec![pin, one]
    } else {
        dx[2..].iter().chain(outs).chain(pads).copied().collect()
    };
    let chan_in = b.muli(dw[1], pin);
    let img_in = b.muli(dx[1], pin);
    let img_out = b.muli(dw[0], pout);
    // A group's rows in A: the weight's, or the packed copy's padded ones.
    let (a, a_rows) = match packed {
        Some((buf, padded)) => {
            let len = b.dim(buf, 0);
            (gemm::flat(b, buf, len), b.const_index(padded))
        }
        None => (wf, mg),
    };
    let rows_g = b.muli(a_rows, kdim);
    let out_g = b.muli(mg, pout);
    let bounds = Bounds::new(b);
    let work = [dx[0], groups, mg, pout, kdim];
    loop_nest_by_work(
        b,
        &bounds,
        &[dx[0], groups],
        &work,
        GEMM_MIN_WORK,
        &mut |b, ivs| {
            let (n, g) = (ivs[0], ivs[1]);
            let a_off = b.muli(g, rows_g);
            let xi = b.muli(n, img_in);
            let xg = b.muli(g, chan_in);
            let b_off = b.addi(xi, xg);
            let oi = b.muli(n, img_out);
            let og = b.muli(g, out_g);
            let c_off = b.addi(oi, og);
            let bias_off = b.muli(g, mg);
            let bias = bias.map(|buf| gemm::BiasArg {
                buf,
                off: bias_off,
                rs: one,
            });
            let call = gemm::Call {
                a,
                a_off,
                a_rs: if packed.is_some() { a_rows } else { kdim },
                a_cs: one,
                b: xf,
                b_off,
                b_args: b_args.clone(),
                c: of,
                c_off,
                ldc: pout,
                bias,
                residual,
                m: mg,
                n: pout,
                k: kdim,
            };
            gemm::call(b, &v, &call);
        },
    );
}
