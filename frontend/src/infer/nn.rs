//! Neural-network ops: MatMul, Gemm, Conv/ConvTranspose, pooling,
//! BatchNormalization.

use super::{one, tensor, Ctx, Inferred};
use ir::{Diagnostic, Type, DYN};
use onnx::ops;

type Shape = Option<Vec<i64>>;

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
    pool(cx, v.kernel_shape(), v.ceil_mode() != 0, &window_attrs!(v))
}

pub(super) fn average_pool(cx: &Ctx<'_>) -> Inferred {
    let v = ops::AveragePool::of(cx.m, cx.op);
    pool(cx, v.kernel_shape(), v.ceil_mode() != 0, &window_attrs!(v))
}

pub(super) fn lp_pool(cx: &Ctx<'_>) -> Inferred {
    let v = ops::LpPool::of(cx.m, cx.op);
    pool(cx, v.kernel_shape(), v.ceil_mode() != 0, &window_attrs!(v))
}

/// GlobalAveragePool, GlobalMaxPool, GlobalLpPool: spatial dims become 1.
pub(super) fn global_pool(cx: &Ctx<'_>) -> Inferred {
    let shape = cx.shape(0)?.map(|s| {
        s.iter()
            .enumerate()
            .map(|(i, &d)| if i < 2 { d } else { 1 })
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

/// Merges two extents that must agree; `DYN` yields to a static one.
fn agree(cx: &Ctx<'_>, a: i64, b: i64, what: &str) -> Result<i64, Diagnostic> {
    match (a, b) {
        (DYN, d) | (d, DYN) => Ok(d),
        (x, y) if x == y => Ok(x),
        (x, y) => Err(cx.err(format!("{what} mismatch: {x} vs {y}"))),
    }
}

/// NumPy matmul of operands `ia` and `ib`: 1-D operands get a dim
/// prepended/appended then removed, batch dims broadcast.
fn matmul_of(cx: &Ctx<'_>, ia: usize, ib: usize) -> Result<Shape, Diagnostic> {
    let (Some(a), Some(b)) = (cx.shape(ia)?, cx.shape(ib)?) else {
        return Ok(None);
    };
    if a.is_empty() || b.is_empty() {
        return Err(cx.err("MatMul operands must have rank >= 1"));
    }
    let a2 = if a.len() == 1 {
        vec![1, a[0]]
    } else {
        a.clone()
    };
    let b2 = if b.len() == 1 {
        vec![b[0], 1]
    } else {
        b.clone()
    };
    let (abatch, amat) = a2.split_at(a2.len() - 2);
    let (bbatch, bmat) = b2.split_at(b2.len() - 2);
    agree(cx, amat[1], bmat[0], "MatMul inner dimension")?;
    let mut out = super::broadcast_shapes(abatch, bbatch).map_err(|e| cx.err(e))?;
    if a.len() > 1 {
        out.push(amat[0]);
    }
    if b.len() > 1 {
        out.push(bmat[1]);
    }
    Ok(Some(out))
}

fn gemm_shape(cx: &Ctx<'_>, trans_a: bool, trans_b: bool) -> Result<Vec<i64>, Diagnostic> {
    let mat = |i: usize| -> Result<[i64; 2], Diagnostic> {
        match cx.shape(i)? {
            None => Ok([DYN, DYN]),
            Some(s) => match s[..] {
                [r, c] => Ok([r, c]),
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
    agree(cx, ka, kb, "Gemm inner dimension")?;
    let mut out = vec![m, n];
    if cx.operand(2).is_some() {
        if let Some(c) = cx.shape(2)? {
            // C broadcasts to [M, N] one way only; it may also fill a `?`.
            let b = super::broadcast_shapes(&out, &c).map_err(|e| cx.err(format!("bias: {e}")))?;
            if b.len() != 2 {
                return Err(cx.err(format!("bias of shape {c:?} does not broadcast to [M, N]")));
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

/// Output extent of a sliding window over `d` (ONNX Conv/Pool formulas;
/// with `ceil_mode`, windows starting in the end padding are dropped).
pub fn window_out(
    d: i64,
    k: i64,
    s: i64,
    dil: i64,
    pads: (i64, i64),
    auto_pad: &str,
    ceil: bool,
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
    if eff < ek {
        return Err(format!(
            "window of {ek} does not fit input extent {eff} (padded)"
        ));
    }
    let span = eff - ek;
    if !ceil {
        return Ok(span / s + 1);
    }
    let mut out = span / s + i64::from(span % s != 0) + 1;
    // (out - 1) * s <= span + s fits: both were computed above without overflow.
    if (out - 1).saturating_mul(s) >= d.saturating_add(pb) {
        out -= 1;
    }
    Ok(out)
}

/// Spatial output dims for `x` with window `w`.
fn spatial(cx: &Ctx<'_>, x: &[i64], w: &Window, ceil: bool) -> Result<Vec<i64>, Diagnostic> {
    let n = w.kernel.len();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let d = x.get(2 + i).copied().unwrap_or(DYN);
        let pads = (w.pads[i], w.pads[n + i]);
        let o = window_out(
            d,
            w.kernel[i],
            w.strides[i],
            w.dilations[i],
            pads,
            &w.auto_pad,
            ceil,
        )
        .map_err(|e| cx.err(format!("spatial axis {i}: {e}")))?;
        out.push(o);
    }
    Ok(out)
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
    let (x, wshape) = (cx.shape(ix)?, cx.shape(iw)?);
    let spatial_rank = match (&x, &wshape, &kernel_shape) {
        (_, _, Some(k)) => k.len(),
        (Some(x), _, _) if x.len() >= 2 => x.len() - 2,
        (_, Some(w), _) if w.len() >= 2 => w.len() - 2,
        _ => return Ok(None),
    };
    let wshape = wshape.unwrap_or_else(|| vec![DYN; spatial_rank + 2]);
    let x = x.unwrap_or_else(|| vec![DYN; spatial_rank + 2]);
    if x.len() != spatial_rank + 2 || wshape.len() != spatial_rank + 2 {
        return Err(cx.err(format!(
            "input rank {} and weight rank {} do not match",
            x.len(),
            wshape.len()
        )));
    }
    let kernel = kernel_shape.unwrap_or_else(|| wshape[2..].to_vec());
    if group < 1 {
        return Err(cx.err(format!("group {group} must be positive")));
    }
    if x[1] != DYN && wshape[1] != DYN && Some(x[1]) != wshape[1].checked_mul(group) {
        return Err(cx.err(format!(
            "input has {} channels, weight expects {} x group {group}",
            x[1], wshape[1]
        )));
    }
    let w = window(cx, kernel, attrs)?;
    let mut out = vec![x[0], wshape[0]];
    out.extend(spatial(cx, &x, &w, false)?);
    Ok(Some(out))
}

fn conv_transpose_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let (Some(x), Some(wshape)) = (cx.shape(0)?, cx.shape(1)?) else {
        return Ok(None);
    };
    if x.len() < 3 || wshape.len() != x.len() {
        return Err(cx.err("input and weight must have the same rank >= 3"));
    }
    let v = ops::ConvTranspose::of(cx.m, cx.op);
    let n = x.len() - 2;
    let group = v.group();
    let channels = if wshape[1] == DYN {
        DYN
    } else {
        wshape[1].saturating_mul(group)
    };
    let kernel = v.kernel_shape().unwrap_or_else(|| wshape[2..].to_vec());
    if kernel.len() != n {
        return Err(cx.err("kernel_shape rank does not match the input"));
    }
    let w = window(cx, kernel, &window_attrs!(v))?;
    let mut out = vec![x[0], channels];
    if let Some(shape) = v.output_shape() {
        out.extend(shape.iter().skip(shape.len().saturating_sub(n)));
        return Ok(Some(out));
    }
    let opad = v.output_padding().unwrap_or_else(|| vec![0; n]);
    for i in 0..n {
        let (d, k) = (x[2 + i], w.kernel[i]);
        if d == DYN || k == DYN {
            out.push(DYN);
            continue;
        }
        let s = w.strides[i];
        let o = if w.auto_pad.starts_with("SAME") {
            d.saturating_mul(s)
        } else {
            let (pb, pe) = if w.auto_pad == "VALID" {
                (0, 0)
            } else {
                (w.pads[i], w.pads[n + i])
            };
            let ek = w.dilations[i].saturating_mul(k - 1).saturating_add(1);
            s.saturating_mul(d - 1)
                .saturating_add(opad.get(i).copied().unwrap_or(0))
                .saturating_add(ek)
                .saturating_sub(pb)
                .saturating_sub(pe)
        };
        if o < 1 {
            return Err(cx.err(format!("spatial axis {i} has output extent {o}")));
        }
        out.push(o);
    }
    Ok(Some(out))
}

/// Y and Indices (MaxPool) of a pool with `kernel`.
fn pool(cx: &Ctx<'_>, kernel: Vec<i64>, ceil: bool, attrs: &WindowAttrs<'_>) -> Inferred {
    let x = match cx.shape(0)? {
        Some(x) => x,
        None => vec![DYN; kernel.len() + 2],
    };
    if x.len() != kernel.len() + 2 {
        return Err(cx.err(format!(
            "input rank {} does not match kernel_shape {kernel:?}",
            x.len()
        )));
    }
    let w = window(cx, kernel, attrs)?;
    let mut out = vec![x[0], x[1]];
    out.extend(spatial(cx, &x, &w, ceil)?);
    let shape = Some(out);
    Ok(Some(vec![
        tensor(shape.clone(), cx.elem(0)?),
        tensor(shape, Type::i64()),
    ]))
}
