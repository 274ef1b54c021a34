//! Signal processing: DFT, STFT, the window generators and
//! MelWeightMatrix.

use super::{one, Ctx, Inferred};
use ir::{Diagnostic, Type, DYN};
use onnx::ops;

pub(super) fn dft(cx: &Ctx<'_>) -> Inferred {
    let v = ops::DFT::of(cx.m, cx.op);
    one(
        dft_shape(cx, v.onesided() != 0, v.inverse() != 0)?,
        cx.elem(0)?,
    )
}

pub(super) fn stft(cx: &Ctx<'_>) -> Inferred {
    let onesided = ops::STFT::of(cx.m, cx.op).onesided() != 0;
    one(stft_shape(cx, onesided)?, cx.elem(0)?)
}

/// HannWindow, HammingWindow, BlackmanWindow: `size` values.
fn window(cx: &Ctx<'_>, output_datatype: i64) -> Inferred {
    let size = cx.const_int(0).unwrap_or(DYN);
    let elem = cx.dtype(output_datatype, "output_datatype")?;
    Ok(Some(vec![Type::tensor(vec![size], elem)]))
}

pub(super) fn hann_window(cx: &Ctx<'_>) -> Inferred {
    window(cx, ops::HannWindow::of(cx.m, cx.op).output_datatype())
}

pub(super) fn hamming_window(cx: &Ctx<'_>) -> Inferred {
    window(cx, ops::HammingWindow::of(cx.m, cx.op).output_datatype())
}

pub(super) fn blackman_window(cx: &Ctx<'_>) -> Inferred {
    window(cx, ops::BlackmanWindow::of(cx.m, cx.op).output_datatype())
}

/// `[dft_length / 2 + 1, num_mel_bins]`.
pub(super) fn mel_weight_matrix(cx: &Ctx<'_>) -> Inferred {
    let code = ops::MelWeightMatrix::of(cx.m, cx.op).output_datatype();
    let bins = cx.const_int(1).map_or(DYN, |n| n / 2 + 1);
    let mels = cx.const_int(0).unwrap_or(DYN);
    Ok(Some(vec![Type::tensor(
        vec![bins, mels],
        cx.dtype(code, "output_datatype")?,
    )]))
}

/// Bins along a transformed axis of length `n`.
fn bins(n: i64, onesided: bool) -> i64 {
    match (n, onesided) {
        (DYN, _) => DYN,
        (n, true) => n / 2 + 1,
        (n, false) => n,
    }
}

/// Same rank as the input, last dim 2 (complex), the axis (operand 2,
/// default -2: the last signal axis) resized by `dft_length` and
/// `onesided`. Import moves the attribute of older opsets to the operand.
fn dft_shape(cx: &Ctx<'_>, onesided: bool, inverse: bool) -> Result<Option<Vec<i64>>, Diagnostic> {
    let Some(mut s) = cx.shape(0)? else {
        return Ok(None);
    };
    let rank = i64::try_from(s.len()).map_err(|_| cx.err("rank too large"))?;
    if rank < 2 {
        return Err(cx.err("DFT input needs a signal axis and a complex axis"));
    }
    let axis = match cx.operand(2) {
        Some(_) => cx.const_int(2),
        None => Some(-2),
    };
    let n_axis = match axis {
        Some(a) if a < 0 && a >= -rank => Some(a + rank),
        Some(a) if (0..rank - 1).contains(&a) => Some(a),
        Some(a) => return Err(cx.err(format!("axis {a} is out of range for rank {rank}"))),
        None => None,
    };
    // The inverse of a one-sided transform is real and full length.
    let real_inverse = onesided && inverse;
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
fn stft_shape(cx: &Ctx<'_>, onesided: bool) -> Result<Option<Vec<i64>>, Diagnostic> {
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
    Ok(Some(vec![batch, frames, bins(frame, onesided), 2]))
}
