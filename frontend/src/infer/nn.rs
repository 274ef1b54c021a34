//! Neural-network ops: MatMul, Gemm, Conv/ConvTranspose, pooling,
//! BatchNormalization.

use super::dims::{self, Dim, Dims};
use super::{Ctx, Inferred};
use ir::{Diagnostic, Type, DYN};
use onnx::ops;

type Shape = Option<Dims>;

/// One result of `dims` and `elem`.
fn one(d: Shape, elem: Type) -> Inferred {
    Ok(Some(vec![dims::to_type(d, elem)]))
}

/// The sliding-window attributes of the Conv-like ops and the pools.
struct WindowAttrs<'m> {
    strides: Option<Vec<i64>>,
    dilations: Option<Vec<i64>>,
    pads: Option<Vec<i64>>,
    auto_pad: &'m str,
}

/// The window attributes of a view that has all four.
macro_rules! window_attrs {
    ($v:expr) => {
        WindowAttrs {
            strides: $v.strides(),
            dilations: $v.dilations(),
            pads: $v.pads(),
            auto_pad: $v.auto_pad(),
        }
    };
}

pub(super) fn matmul(cx: &Ctx<'_>) -> Inferred {
    one(matmul_of(cx, 0, 1)?, cx.elem(0)?)
}

pub(super) fn matmul_integer(cx: &Ctx<'_>) -> Inferred {
    one(matmul_of(cx, 0, 1)?, Type::i(32))
}

/// `A [.., K]` times the `N × K` quantized weight: `[.., N]` (the weight
/// operands' dims are checked by the kernel).
pub(super) fn matmul_nbits(cx: &Ctx<'_>) -> Inferred {
    let n = ops::MatMulNBits::of(cx.m, cx.op).n();
    let Some(mut a) = cx.dims(0)? else {
        return one(None, cx.elem(0)?);
    };
    if a.pop().is_none() {
        return Err(cx.err("MatMulNBits: A must have rank >= 1"));
    }
    a.push(dims::c(n));
    one(Some(a), cx.elem(0)?)
}

/// Operands: a, a_scale, a_zero_point, b, ..., y_zero_point (7).
pub(super) fn qlinear_matmul(cx: &Ctx<'_>) -> Inferred {
    one(matmul_of(cx, 0, 3)?, cx.elem(7)?)
}

pub(super) fn qlinear_conv(cx: &Ctx<'_>) -> Inferred {
    let v = ops::QLinearConv::of(cx.m, cx.op);
    let shape = conv_of(cx, 0, 3, v.kernel_shape(), v.group(), &window_attrs!(v))?;
    one(shape, cx.elem(7)?)
}

pub(super) fn gemm(cx: &Ctx<'_>) -> Inferred {
    let v = ops::Gemm::of(cx.m, cx.op);
    let shape = gemm_shape(cx, v.trans_a() != 0, v.trans_b() != 0)?;
    one(Some(shape), cx.elem(0)?)
}

pub(super) fn conv(cx: &Ctx<'_>) -> Inferred {
    let v = ops::Conv::of(cx.m, cx.op);
    let shape = conv_of(cx, 0, 1, v.kernel_shape(), v.group(), &window_attrs!(v))?;
    one(shape, cx.elem(0)?)
}

pub(super) fn conv_integer(cx: &Ctx<'_>) -> Inferred {
    let v = ops::ConvInteger::of(cx.m, cx.op);
    let shape = conv_of(cx, 0, 1, v.kernel_shape(), v.group(), &window_attrs!(v))?;
    one(shape, Type::i(32))
}

/// DeformConv has no `auto_pad`: its windows are explicitly padded.
pub(super) fn deform_conv(cx: &Ctx<'_>) -> Inferred {
    let v = ops::DeformConv::of(cx.m, cx.op);
    let w = WindowAttrs {
        strides: v.strides(),
        dilations: v.dilations(),
        pads: v.pads(),
        auto_pad: "NOTSET",
    };
    let shape = conv_of(cx, 0, 1, v.kernel_shape(), v.group(), &w)?;
    one(shape, cx.elem(0)?)
}

pub(super) fn conv_transpose(cx: &Ctx<'_>) -> Inferred {
    one(conv_transpose_shape(cx)?, cx.elem(0)?)
}

pub(super) fn max_pool(cx: &Ctx<'_>) -> Inferred {
    let v = ops::MaxPool::of(cx.m, cx.op);
    pool(
        cx,
        v.kernel_shape(),
        Fit::pool(v.ceil_mode()),
        &window_attrs!(v),
    )
}

pub(super) fn average_pool(cx: &Ctx<'_>) -> Inferred {
    let v = ops::AveragePool::of(cx.m, cx.op);
    pool(
        cx,
        v.kernel_shape(),
        Fit::pool(v.ceil_mode()),
        &window_attrs!(v),
    )
}

pub(super) fn lp_pool(cx: &Ctx<'_>) -> Inferred {
    let v = ops::LpPool::of(cx.m, cx.op);
    pool(
        cx,
        v.kernel_shape(),
        Fit::pool(v.ceil_mode()),
        &window_attrs!(v),
    )
}

/// GlobalAveragePool, GlobalMaxPool, GlobalLpPool: spatial dims become 1.
pub(super) fn global_pool(cx: &Ctx<'_>) -> Inferred {
    let shape = cx.dims(0)?.map(|s| {
        s.into_iter()
            .enumerate()
            .map(|(i, d)| if i < 2 { d } else { dims::c(1) })
            .collect()
    });
    one(shape, cx.elem(0)?)
}

/// Y, and the running mean and variance when asked for (training).
pub(super) fn batch_norm(cx: &Ctx<'_>) -> Inferred {
    let mut out = vec![cx.same_as(0)?];
    for i in [3, 4] {
        if cx.operand(i).is_some() {
            out.push(cx.same_as(i)?);
        }
    }
    Ok(Some(out))
}

/// NumPy matmul of operands `ia` and `ib`: 1-D operands get a dim
/// prepended/appended then removed, batch dims broadcast.
fn matmul_of(cx: &Ctx<'_>, ia: usize, ib: usize) -> Result<Shape, Diagnostic> {
    let (Some(a), Some(b)) = (cx.dims(ia)?, cx.dims(ib)?) else {
        return Ok(None);
    };
    if a.is_empty() || b.is_empty() {
        return Err(cx.err("MatMul operands must have rank >= 1"));
    }
    let mut a2 = a.clone();
    if a.len() == 1 {
        a2.insert(0, dims::c(1));
    }
    let mut b2 = b.clone();
    if b.len() == 1 {
        b2.push(dims::c(1));
    }
    let (abatch, amat) = a2.split_at(a2.len() - 2);
    let (bbatch, bmat) = b2.split_at(b2.len() - 2);
    cx.equal(&amat[1], &bmat[0], "MatMul inner dimension")?;
    let mut out = cx.broadcast_pair(abatch, bbatch)?;
    if a.len() > 1 {
        out.push(amat[0].clone());
    }
    if b.len() > 1 {
        out.push(bmat[1].clone());
    }
    Ok(Some(out))
}

fn gemm_shape(cx: &Ctx<'_>, trans_a: bool, trans_b: bool) -> Result<Dims, Diagnostic> {
    let mat = |i: usize| -> Result<[Dim; 2], Diagnostic> {
        match cx.dims(i)? {
            None => Ok([None, None]),
            Some(s) => match &s[..] {
                [r, c] => Ok([r.clone(), c.clone()]),
                _ => Err(cx.err(format!(
                    "Gemm operand #{i} must be 2-D, has rank {}",
                    s.len()
                ))),
            },
        }
    };
    let [a0, a1] = mat(0)?;
    let [b0, b1] = mat(1)?;
    let (m, ka) = if trans_a { (a1, a0) } else { (a0, a1) };
    let (kb, n) = if trans_b { (b1, b0) } else { (b0, b1) };
    cx.equal(&ka, &kb, "Gemm inner dimension")?;
    let mut out = vec![m, n];
    if cx.operand(2).is_some() {
        if let Some(c) = cx.dims(2)? {
            // C broadcasts to [M, N] one way only; it may also fill a `?`.
            let b = cx
                .broadcast_pair(&out, &c)
                .map_err(|e| cx.err(format!("bias: {}", e.message)))?;
            if b.len() != 2 {
                return Err(cx.err(format!(
                    "bias of shape {} does not broadcast to [M, N]",
                    super::ctx::show(&c)
                )));
            }
            out = b;
        }
    }
    Ok(out)
}

/// Window parameters of Conv and the pools, per spatial axis.
struct Window {
    kernel: Vec<i64>,
    strides: Vec<i64>,
    dilations: Vec<i64>,
    pads: Vec<i64>,
    auto_pad: String,
}

fn window(cx: &Ctx<'_>, kernel: Vec<i64>, a: &WindowAttrs<'_>) -> Result<Window, Diagnostic> {
    let n = kernel.len();
    let list = |name: &str, given: &Option<Vec<i64>>, len: usize, default: i64| match given {
        None => Ok(vec![default; len]),
        Some(v) if v.len() == len => Ok(v.clone()),
        Some(v) => Err(cx.err(format!("'{name}' has {} entries, expected {len}", v.len()))),
    };
    let w = Window {
        strides: list("strides", &a.strides, n, 1)?,
        dilations: list("dilations", &a.dilations, n, 1)?,
        pads: list("pads", &a.pads, 2 * n, 0)?,
        auto_pad: a.auto_pad.to_string(),
        kernel,
    };
    if w.kernel.iter().any(|&k| k != DYN && k < 1)
        || w.strides.iter().any(|&s| s < 1)
        || w.dilations.iter().any(|&d| d < 1)
        || w.pads.iter().any(|&p| p < 0)
    {
        return Err(cx.err("kernel, strides and dilations must be positive, pads non-negative"));
    }
    if !matches!(
        w.auto_pad.as_str(),
        "NOTSET" | "VALID" | "SAME_UPPER" | "SAME_LOWER"
    ) {
        return Err(cx.err(format!("unknown auto_pad '{}'", w.auto_pad)));
    }
    Ok(w)
}

/// How windows are counted over an extent.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Fit {
    /// Conv: the window must fit the padded input; `floor(span / s) + 1`.
    Conv,
    /// Pools, as onnxruntime counts them: `span / s + 1` rounded toward
    /// zero, so a window a little larger than the padded input still
    /// gives one output (a 2x2 stride-2 pool over a 1x1 map) and a larger
    /// one none; only a negative count is an error.
    Pool,
    /// Pools with `ceil_mode`: windows starting in the end padding are
    /// dropped.
    PoolCeil,
}

impl Fit {
    pub fn pool(ceil_mode: i64) -> Fit {
        if ceil_mode != 0 {
            Fit::PoolCeil
        } else {
            Fit::Pool
        }
    }
}

/// Output extent of a sliding window over `d` (ONNX's Conv formula,
/// onnxruntime's for pools: `Fit`).
pub fn window_out(
    d: i64,
    k: i64,
    s: i64,
    dil: i64,
    pads: (i64, i64),
    auto_pad: &str,
    fit: Fit,
) -> Result<i64, String> {
    if d == DYN {
        return Ok(DYN);
    }
    if matches!(auto_pad, "SAME_UPPER" | "SAME_LOWER") {
        return Ok(d / s + i64::from(d % s != 0));
    }
    if k == DYN {
        return Ok(DYN);
    }
    let ek = dil
        .checked_mul(k - 1)
        .and_then(|x| x.checked_add(1))
        .ok_or("kernel too large")?;
    let (pb, pe) = if auto_pad == "VALID" { (0, 0) } else { pads };
    let eff = d
        .checked_add(pb)
        .and_then(|x| x.checked_add(pe))
        .ok_or("pads too large")?;
    let span = eff - ek;
    let no_fit = || format!("window of {ek} does not fit input extent {eff} (padded)");
    match fit {
        Fit::Conv if span < 0 => return Err(no_fit()),
        Fit::Conv => return Ok(span / s + 1),
        // Rust's `/` rounds toward zero, as onnxruntime's pools do.
        Fit::Pool if span / s + 1 < 0 => return Err(no_fit()),
        Fit::Pool => return Ok(span / s + 1),
        Fit::PoolCeil if span < 0 => return Ok((span / s + 1).max(0)),
        Fit::PoolCeil => {}
    }
    let mut out = span / s + i64::from(span % s != 0) + 1;
    // (out - 1) * s <= span + s fits: both were computed above without overflow.
    if (out - 1).saturating_mul(s) >= d.saturating_add(pb) {
        out -= 1;
    }
    Ok(out)
}

/// Output extent of a window over a symbolic `d`: the static formula
/// when `d` is known, else its expression (`floor((d + pads - ek) / s) +
/// 1`; `ceil(d / s)` for SAME). Ceil mode over an unknown extent has no
/// closed form here (its last window may be dropped): unknown.
fn window_out_dim(d: &Dim, i: usize, w: &Window, fit: Fit) -> Result<Dim, String> {
    let n = w.kernel.len();
    let (k, s, dil) = (w.kernel[i], w.strides[i], w.dilations[i]);
    let pads = (w.pads[i], w.pads[n + i]);
    if let Some(v) = dims::value(d) {
        let o = window_out(v, k, s, dil, pads, &w.auto_pad, fit)?;
        return Ok((o != DYN).then(|| ir::dim::DimExpr::constant(o)));
    }
    if matches!(w.auto_pad.as_str(), "SAME_UPPER" | "SAME_LOWER") {
        return Ok(dims::ceildiv(d, s));
    }
    if k == DYN || fit == Fit::PoolCeil {
        return Ok(None);
    }
    let ek = dil.saturating_mul(k - 1).saturating_add(1);
    let (pb, pe) = if w.auto_pad == "VALID" { (0, 0) } else { pads };
    let c = pb.saturating_add(pe).saturating_sub(ek);
    let span = dims::add_const(d, c);
    // A pool's span may be negative (small inputs), where rounding toward
    // zero and floor differ.
    let q = match fit {
        Fit::Pool if c < 0 => span.as_ref().and_then(|e| e.truncdiv(s)),
        _ => dims::floordiv(&span, s),
    };
    Ok(dims::add_const(&q, 1))
}

/// Spatial output dims for `x` with window `w`.
fn spatial(cx: &Ctx<'_>, x: &[Dim], w: &Window, fit: Fit) -> Result<Dims, Diagnostic> {
    (0..w.kernel.len())
        .map(|i| {
            let d = x.get(2 + i).cloned().flatten();
            window_out_dim(&d, i, w, fit).map_err(|e| cx.err(format!("spatial axis {i}: {e}")))
        })
        .collect()
}

/// Conv output shape of input operand `ix` and weight operand `iw`.
fn conv_of(
    cx: &Ctx<'_>,
    ix: usize,
    iw: usize,
    kernel_shape: Option<Vec<i64>>,
    group: i64,
    attrs: &WindowAttrs<'_>,
) -> Result<Shape, Diagnostic> {
    let (x, wshape) = (cx.dims(ix)?, cx.dims(iw)?);
    let spatial_rank = match (&x, &wshape, &kernel_shape) {
        (_, _, Some(k)) => k.len(),
        (Some(x), _, _) if x.len() >= 2 => x.len() - 2,
        (_, Some(w), _) if w.len() >= 2 => w.len() - 2,
        _ => return Ok(None),
    };
    let wshape = wshape.unwrap_or_else(|| vec![None; spatial_rank + 2]);
    let x = x.unwrap_or_else(|| vec![None; spatial_rank + 2]);
    if x.len() != spatial_rank + 2 || wshape.len() != spatial_rank + 2 {
        return Err(cx.err(format!(
            "input rank {} and weight rank {} do not match",
            x.len(),
            wshape.len()
        )));
    }
    let kernel = kernel_shape.unwrap_or_else(|| {
        wshape[2..]
            .iter()
            .map(|d| dims::value(d).unwrap_or(DYN))
            .collect()
    });
    if group < 1 {
        return Err(cx.err(format!("group {group} must be positive")));
    }
    cx.equal(
        &x[1],
        &dims::scale(&wshape[1], group),
        "input channels (weight channels x group)",
    )?;
    let w = window(cx, kernel, attrs)?;
    let mut out = vec![x[0].clone(), wshape[0].clone()];
    out.extend(spatial(cx, &x, &w, Fit::Conv)?);
    Ok(Some(out))
}

fn conv_transpose_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let (Some(x), Some(wshape)) = (cx.dims(0)?, cx.dims(1)?) else {
        return Ok(None);
    };
    if x.len() < 3 || wshape.len() != x.len() {
        return Err(cx.err("input and weight must have the same rank >= 3"));
    }
    let v = ops::ConvTranspose::of(cx.m, cx.op);
    let n = x.len() - 2;
    let channels = dims::scale(&wshape[1], v.group());
    let kernel = v.kernel_shape().unwrap_or_else(|| {
        wshape[2..]
            .iter()
            .map(|d| dims::value(d).unwrap_or(DYN))
            .collect()
    });
    if kernel.len() != n {
        return Err(cx.err("kernel_shape rank does not match the input"));
    }
    let w = window(cx, kernel, &window_attrs!(v))?;
    let mut out = vec![x[0].clone(), channels];
    if let Some(shape) = v.output_shape() {
        out.extend(
            shape
                .iter()
                .skip(shape.len().saturating_sub(n))
                .map(|&d| dims::c(d)),
        );
        return Ok(Some(out));
    }
    let opad = v.output_padding().unwrap_or_else(|| vec![0; n]);
    for i in 0..n {
        let (d, k) = (&x[2 + i], w.kernel[i]);
        let s = w.strides[i];
        if k == DYN {
            out.push(None);
            continue;
        }
        // SAME: d·s; else s·(d - 1) + output_padding + ek - pads.
        let o = if w.auto_pad.starts_with("SAME") {
            dims::scale(d, s)
        } else {
            let (pb, pe) = if w.auto_pad == "VALID" {
                (0, 0)
            } else {
                (w.pads[i], w.pads[n + i])
            };
            let ek = w.dilations[i].saturating_mul(k - 1).saturating_add(1);
            let extra = opad
                .get(i)
                .copied()
                .unwrap_or(0)
                .saturating_add(ek)
                .saturating_sub(pb)
                .saturating_sub(pe)
                .saturating_sub(s);
            dims::add_const(&dims::scale(d, s), extra)
        };
        if let Some(v) = dims::value(&o).filter(|&v| v < 1) {
            return Err(cx.err(format!("spatial axis {i} has output extent {v}")));
        }
        out.push(o);
    }
    Ok(Some(out))
}

/// Y and Indices (MaxPool) of a pool with `kernel`.
fn pool(cx: &Ctx<'_>, kernel: Vec<i64>, fit: Fit, attrs: &WindowAttrs<'_>) -> Inferred {
    let x = match cx.dims(0)? {
        Some(x) => x,
        None => vec![None; kernel.len() + 2],
    };
    if x.len() != kernel.len() + 2 {
        return Err(cx.err(format!(
            "input rank {} does not match kernel_shape {kernel:?}",
            x.len()
        )));
    }
    let w = window(cx, kernel, attrs)?;
    let mut out = vec![x[0].clone(), x[1].clone()];
    out.extend(spatial(cx, &x, &w, fit)?);
    let shape = Some(out);
    Ok(Some(vec![
        dims::to_type(shape.clone(), cx.elem(0)?),
        dims::to_type(shape, Type::i64()),
    ]))
}
