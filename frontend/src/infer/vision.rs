//! Image and spatial ops: GridSample, AffineGrid, RoiAlign, Col2Im,
//! CenterCropPad, DeformConv, MaxUnpool, ImageDecoder.

use super::{product, tensor, Ctx};
use ir::{Diagnostic, Type, DYN};

type Shape = Option<Vec<i64>>;

pub(super) fn infer(cx: &Ctx<'_>, kind: &str) -> Result<Option<Vec<Type>>, Diagnostic> {
    let shape = match kind {
        "GridSample" => grid_sample(cx)?,
        "AffineGrid" => affine_grid(cx)?,
        "RoiAlign" => {
            let c = cx.shape(0)?.and_then(|x| x.get(1).copied()).unwrap_or(DYN);
            let rois = cx.shape(1)?.and_then(|r| r.first().copied()).unwrap_or(DYN);
            let out_h = cx.attr_int("output_height", 1);
            let out_w = cx.attr_int("output_width", 1);
            Some(vec![rois, c, out_h, out_w])
        }
        "Col2Im" => col2im(cx)?,
        "CenterCropPad" => center_crop_pad(cx)?,
        "DeformConv" => super::nn::conv(cx)?,
        "MaxUnpool" => max_unpool(cx)?,
        "ImageDecoder" => {
            let channels = match cx.attr_str("pixel_format").unwrap_or("RGB") {
                "Grayscale" => 1,
                _ => 3,
            };
            return Ok(Some(vec![Type::tensor(
                vec![DYN, DYN, channels],
                Type::ui(8),
            )]));
        }
        _ => return Ok(None),
    };
    Ok(Some(vec![tensor(shape, cx.elem(0)?)]))
}

/// `[N, C]` of X followed by the grid's spatial output dims.
fn grid_sample(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
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
fn affine_grid(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
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
fn col2im(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
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
fn center_crop_pad(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let Some(mut s) = cx.shape(0)? else {
        return Ok(None);
    };
    let axes = match cx.attr_ints("axes") {
        Some(a) => a
            .iter()
            .map(|&a| cx.axis(a, s.len()))
            .collect::<Result<Vec<_>, _>>()?,
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
fn max_unpool(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    if cx.operand(2).is_some() {
        return Ok(cx
            .const_ints(2)
            .or_else(|| cx.static_len(2).map(|n| vec![DYN; n])));
    }
    let Some(x) = cx.shape(0)? else {
        return Ok(None);
    };
    let kernel = cx
        .attr_ints("kernel_shape")
        .ok_or_else(|| cx.err("requires kernel_shape"))?;
    let n = kernel.len();
    if x.len() != n + 2 {
        return Err(cx.err("kernel_shape must have one entry per spatial dim"));
    }
    let strides = cx.attr_ints("strides").unwrap_or_else(|| vec![1; n]);
    let pads = cx.attr_ints("pads").unwrap_or_else(|| vec![0; 2 * n]);
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
