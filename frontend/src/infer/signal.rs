//! Signal processing: DFT, STFT, the window generators and
//! MelWeightMatrix.

use super::{tensor, Ctx};
use crate::import::tensor::elem_type_from_onnx;
use ir::{Attribute, Diagnostic, Type, DYN};

pub(super) fn infer(cx: &Ctx<'_>, kind: &str) -> Result<Option<Vec<Type>>, Diagnostic> {
    Ok(Some(match kind {
        "DFT" => vec![tensor(dft(cx)?, cx.elem(0)?)],
        "STFT" => vec![tensor(stft(cx)?, cx.elem(0)?)],
        "HannWindow" | "HammingWindow" | "BlackmanWindow" => {
            let size = cx.const_int(0).unwrap_or(DYN);
            vec![Type::tensor(vec![size], output_datatype(cx)?)]
        }
        "MelWeightMatrix" => {
            let bins = cx.const_int(1).map_or(DYN, |n| n / 2 + 1);
            let mels = cx.const_int(0).unwrap_or(DYN);
            vec![Type::tensor(vec![bins, mels], output_datatype(cx)?)]
        }
        _ => return Ok(None),
    }))
}

/// `output_datatype` (default float).
fn output_datatype(cx: &Ctx<'_>) -> Result<Type, Diagnostic> {
    let code = cx.attr_int("output_datatype", 1);
    i32::try_from(code)
        .ok()
        .and_then(elem_type_from_onnx)
        .ok_or_else(|| cx.err(format!("unsupported output_datatype {code}")))
}

/// Bins along a transformed axis of length `n`.
fn bins(n: i64, onesided: bool) -> i64 {
    match (n, onesided) {
        (DYN, _) => DYN,
        (n, true) => n / 2 + 1,
        (n, false) => n,
    }
}

/// Same rank as the input, last dim 2 (complex), the axis resized by
/// `dft_length` and `onesided`. The axis is an attribute (default 1) up to
/// opset 19 and an operand (default -2, from the end) from opset 20.
fn dft(cx: &Ctx<'_>) -> Result<Option<Vec<i64>>, Diagnostic> {
    let Some(mut s) = cx.shape(0)? else {
        return Ok(None);
    };
    let rank = i64::try_from(s.len()).map_err(|_| cx.err("rank too large"))?;
    if rank < 2 {
        return Err(cx.err("DFT input needs a signal axis and a complex axis"));
    }
    let opset =
        cx.m.attr(cx.m.top(), "onnx.opset")
            .and_then(Attribute::as_int)
            .unwrap_or(20);
    let axis = match (cx.attr("axis").and_then(Attribute::as_int), cx.operand(2)) {
        (Some(a), _) => Some(a),
        (None, Some(_)) => cx.const_int(2),
        (None, None) if opset >= 20 => Some(-2),
        (None, None) => Some(1),
    };
    let n_axis = match axis {
        Some(a) if a < 0 && a >= -rank => Some(a + rank),
        Some(a) if (0..rank - 1).contains(&a) => Some(a),
        Some(a) => return Err(cx.err(format!("axis {a} is out of range for rank {rank}"))),
        None => None,
    };
    let onesided = cx.attr_int("onesided", 0) != 0;
    // The inverse of a one-sided transform is real and full length.
    let real_inverse = onesided && cx.attr_int("inverse", 0) != 0;
    let last = s.len() - 1;
    if let Some(c) = s.get_mut(last) {
        *c = if real_inverse { 1 } else { 2 };
    }
    match n_axis.and_then(|a| usize::try_from(a).ok()) {
        Some(a) => {
            let given = cx.operand(1).map(|_| cx.const_int(1).unwrap_or(DYN));
            let here = s.get(a).copied().unwrap_or(DYN);
            let n = match (given, real_inverse) {
                (Some(n), true) => n,
                (Some(n), false) => bins(n, onesided),
                (None, true) if here != DYN => 2 * (here - 1),
                (None, true) => DYN,
                (None, false) => bins(here, onesided),
            };
            if let Some(d) = s.get_mut(a) {
                *d = n;
            }
        }
        // A runtime axis: every signal dim may change.
        None => s.iter_mut().take(last).for_each(|d| *d = DYN),
    }
    Ok(Some(s))
}

/// `[batch, frames, bins, 2]` from the signal, frame_step and the frame
/// length (operand 3, else the window's length).
fn stft(cx: &Ctx<'_>) -> Result<Option<Vec<i64>>, Diagnostic> {
    let Some(s) = cx.shape(0)? else {
        return Ok(None);
    };
    let [batch, len, _] = s[..] else {
        return Err(cx.err("STFT signal must have rank 3"));
    };
    let frame = match cx.operand(3) {
        Some(_) => cx.const_int(3).unwrap_or(DYN),
        None if cx.operand(2).is_some() => {
            cx.shape(2)?.and_then(|w| w.first().copied()).unwrap_or(DYN)
        }
        None => DYN,
    };
    let step = cx.const_int(1).unwrap_or(DYN);
    let frames = if [len, frame, step].contains(&DYN) || step <= 0 || frame > len {
        DYN
    } else {
        (len - frame) / step + 1
    };
    let onesided = cx.attr_int("onesided", 1) != 0;
    Ok(Some(vec![batch, frames, bins(frame, onesided), 2]))
}
