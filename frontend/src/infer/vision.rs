//! Image and spatial ops: GridSample, AffineGrid, RoiAlign, Col2Im,
//! CenterCropPad, DeformConv, MaxUnpool, ImageDecoder.

use super::{one, product, Ctx, Inferred};
use ir::{Diagnostic, Type, DYN};
use onnx::ops;

type Shape = Option<Vec<i64>>;

pub(super) fn grid_sample(cx: &Ctx<'_>) -> Inferred {
    one(grid_sample_shape(cx)?, cx.elem(0)?)
}

pub(super) fn affine_grid(cx: &Ctx<'_>) -> Inferred {
    one(affine_grid_shape(cx)?, cx.elem(0)?)
}

/// `[rois, C, output_height, output_width]`.
pub(super) fn roi_align(cx: &Ctx<'_>) -> Inferred {
    let v = ops::RoiAlign::of(cx.m, cx.op);
    let c = cx.shape(0)?.and_then(|x| x.get(1).copied()).unwrap_or(DYN);
    let rois = cx.shape(1)?.and_then(|r| r.first().copied()).unwrap_or(DYN);
    let shape = vec![rois, c, v.output_height(), v.output_width()];
    one(Some(shape), cx.elem(0)?)
}

pub(super) fn col2im(cx: &Ctx<'_>) -> Inferred {
    one(col2im_shape(cx)?, cx.elem(0)?)
}

pub(super) fn center_crop_pad(cx: &Ctx<'_>) -> Inferred {
    let axes = ops::CenterCropPad::of(cx.m, cx.op).axes();
    one(center_crop_pad_shape(cx, axes)?, cx.elem(0)?)
}

pub(super) fn max_unpool(cx: &Ctx<'_>) -> Inferred {
    one(max_unpool_shape(cx)?, cx.elem(0)?)
}

/// `[H, W, C]` u8 pixels; the extents are in the data.
pub(super) fn image_decoder(cx: &Ctx<'_>) -> Inferred {
    let channels = match ops::ImageDecoder::of(cx.m, cx.op).pixel_format() {
        "Grayscale" => 1,
        _ => 3,
    };
    Ok(Some(vec![Type::tensor(
        vec![DYN, DYN, channels],
        Type::ui(8),
    )]))
}

/// `[N, C]` of X followed by the grid's spatial output dims.
fn grid_sample_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let (Some(x), Some(grid)) = (cx.shape(0)?, cx.shape(1)?) else {
        return Ok(None);
    };
    let (Some(nc), Some((_, spatial))) = (x.get(..2), grid.split_last()) else {
        return Err(cx.err("X needs rank >= 2 and grid rank >= 1"));
    };
    let mut out = nc.to_vec();
    out.extend(spatial.iter().skip(1));
    Ok(Some(out))
}

/// From `size` = [N, C, H, W] (or with D): `[N, H, W, 2]` (`[N, D, H, W, 3]`).
fn affine_grid_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let size = match cx.const_ints(1) {
        Some(s) => s,
        None => match cx.static_len(1) {
            Some(n) => vec![DYN; n],
            None => return Ok(None),
        },
    };
    match size.as_slice() {
        [n, _, rest @ ..] if matches!(rest.len(), 2 | 3) => {
            let mut out = vec![*n];
            out.extend(rest);
            out.push(i64::try_from(rest.len()).unwrap_or(DYN));
            Ok(Some(out))
        }
        _ => Err(cx.err("size must list N, C and 2 or 3 spatial extents")),
    }
}

/// `[N, C, image_shape...]`, C = input dim 1 / prod(block_shape).
fn col2im_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let Some(x) = cx.shape(0)? else {
        return Ok(None);
    };
    let image = match cx.const_ints(1) {
        Some(i) => i,
        None => match cx.static_len(1) {
            Some(n) => vec![DYN; n],
            None => return Ok(None),
        },
    };
    let block = cx.const_ints(2).map_or(DYN, |b| product(&b));
    let cb = x.get(1).copied().unwrap_or(DYN);
    let c = if cb == DYN || block == DYN || block <= 0 || cb % block != 0 {
        DYN
    } else {
        cb / block
    };
    let mut out = vec![x.first().copied().unwrap_or(DYN), c];
    out.extend(image);
    Ok(Some(out))
}

/// The input's shape with the `axes` (default all) set to `shape`.
fn center_crop_pad_shape(cx: &Ctx<'_>, axes: Option<Vec<i64>>) -> Result<Shape, Diagnostic> {
    let Some(mut s) = cx.shape(0)? else {
        return Ok(None);
    };
    let axes = match axes {
        Some(a) => cx.axes(&a, s.len())?,
        None => (0..s.len()).collect(),
    };
    let target = cx.const_ints(1).unwrap_or_else(|| vec![DYN; axes.len()]);
    if target.len() != axes.len() {
        return Err(cx.err(format!(
            "shape has {} entries for {} axes",
            target.len(),
            axes.len()
        )));
    }
    for (a, t) in axes.into_iter().zip(target) {
        if let Some(d) = s.get_mut(a) {
            *d = t;
        }
    }
    Ok(Some(s))
}

/// `output_shape` when given, else `(in - 1) * stride + kernel - pads`.
fn max_unpool_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    if cx.operand(2).is_some() {
        return Ok(cx
            .const_ints(2)
            .or_else(|| cx.static_len(2).map(|n| vec![DYN; n])));
    }
    let Some(x) = cx.shape(0)? else {
        return Ok(None);
    };
    let v = ops::MaxUnpool::of(cx.m, cx.op);
    let kernel = v.kernel_shape();
    let n = kernel.len();
    if x.len() != n + 2 {
        return Err(cx.err("kernel_shape must have one entry per spatial dim"));
    }
    let strides = v.strides().unwrap_or_else(|| vec![1; n]);
    let pads = v.pads().unwrap_or_else(|| vec![0; 2 * n]);
    if strides.len() != n || pads.len() != 2 * n {
        return Err(cx.err("strides and pads must match kernel_shape"));
    }
    let mut out = x.get(..2).map(<[i64]>::to_vec).unwrap_or_default();
    for i in 0..n {
        let d = x.get(i + 2).copied().unwrap_or(DYN);
        let extent = (d != DYN)
            .then(|| {
                (d - 1)
                    .checked_mul(*strides.get(i)?)?
                    .checked_add(*kernel.get(i)?)?
                    .checked_sub(pads.get(i)? + pads.get(i + n)?)
            })
            .flatten()
            .unwrap_or(DYN);
        out.push(extent);
    }
    Ok(Some(out))
}
