//! Sequence models: RNN/GRU/LSTM, Attention, LinearAttention,
//! CausalConvWithState, RotaryEmbedding and SwiGLU.

use super::dims;
use super::{tensor, Ctx, Inferred};
use ir::{Diagnostic, Type, DYN};
use onnx::ops;

type Shape = Option<Vec<i64>>;

/// The attributes RNN, GRU and LSTM share, and their gate count.
struct Recurrent<'m> {
    gates: i64,
    direction: &'m str,
    hidden_size: Option<i64>,
    layout: i64,
}

pub(super) fn rnn(cx: &Ctx<'_>) -> Inferred {
    let v = ops::RNN::of(cx.m, cx.op);
    let r = Recurrent {
        gates: 1,
        direction: v.direction(),
        hidden_size: v.hidden_size(),
        layout: v.layout(),
    };
    Ok(Some(recurrent(cx, &r)?))
}

pub(super) fn gru(cx: &Ctx<'_>) -> Inferred {
    let v = ops::GRU::of(cx.m, cx.op);
    let r = Recurrent {
        gates: 3,
        direction: v.direction(),
        hidden_size: v.hidden_size(),
        layout: v.layout(),
    };
    Ok(Some(recurrent(cx, &r)?))
}

pub(super) fn lstm(cx: &Ctx<'_>) -> Inferred {
    let v = ops::LSTM::of(cx.m, cx.op);
    let r = Recurrent {
        gates: 4,
        direction: v.direction(),
        hidden_size: v.hidden_size(),
        layout: v.layout(),
    };
    Ok(Some(recurrent(cx, &r)?))
}

pub(super) fn attention(cx: &Ctx<'_>) -> Inferred {
    Ok(Some(attention_types(cx)?))
}

pub(super) fn linear_attention(cx: &Ctx<'_>) -> Inferred {
    Ok(Some(linear_attention_types(cx)?))
}

/// Output like the input; the state keeps the last kernel - 1 steps.
pub(super) fn causal_conv_with_state(cx: &Ctx<'_>) -> Inferred {
    let x = cx.shape(0)?;
    let k = cx.shape(1)?.and_then(|w| w.get(2).copied());
    let state = x.as_ref().map(|x| {
        let state_len = k.filter(|&k| k != DYN).map_or(DYN, |k| (k - 1).max(0));
        vec![dim(x, 0), dim(x, 1), state_len]
    });
    Ok(Some(vec![
        tensor(x, cx.elem(0)?),
        tensor(state, cx.elem(0)?),
    ]))
}

/// Extent `i` of `s`, `?` when out of range.
fn dim(s: &[i64], i: usize) -> i64 {
    s.get(i).copied().unwrap_or(DYN)
}

fn div_exact(a: i64, b: i64) -> i64 {
    if a == DYN || b <= 0 || a % b != 0 {
        DYN
    } else {
        a / b
    }
}

/// Y, Y_h (and Y_c for LSTM) of the recurrent ops, for both layouts.
fn recurrent(cx: &Ctx<'_>, r: &Recurrent<'_>) -> Result<Vec<Type>, Diagnostic> {
    let elem = cx.elem(0)?;
    let Some(x) = cx.dims(0)? else {
        return Ok(vec![Type::unranked_tensor(elem); 3]);
    };
    if x.len() != 3 {
        return Err(cx.err(format!("X must have rank 3, got {}", x.len())));
    }
    let dirs = match r.direction {
        "forward" | "reverse" => dims::c(1),
        "bidirectional" => dims::c(2),
        other => return Err(cx.err(format!("unknown direction '{other}'"))),
    };
    let hidden = match r.hidden_size {
        Some(h) => dims::c(h),
        // W is [dirs, gates * hidden, input].
        None => match cx.shape(1)?.map(|w| div_exact(dim(&w, 1), r.gates)) {
            Some(h) if h != DYN => dims::c(h),
            _ => None,
        },
    };
    let batch_first = r.layout != 0;
    let (seq, batch) = if batch_first {
        (x[1].clone(), x[0].clone())
    } else {
        (x[0].clone(), x[1].clone())
    };
    let (y, state) = if batch_first {
        (
            vec![batch.clone(), seq, dirs.clone(), hidden.clone()],
            vec![batch, dirs, hidden],
        )
    } else {
        (
            vec![seq, dirs.clone(), batch.clone(), hidden.clone()],
            vec![dirs, batch, hidden],
        )
    };
    Ok(vec![
        Type::tensor_dims(y, elem.clone()),
        Type::tensor_dims(state.clone(), elem.clone()),
        Type::tensor_dims(state, elem),
    ])
}

/// Attention (opset 23+) with 4-D `[B, heads, seq, size]` or 3-D
/// `[B, seq, heads * size]` inputs; outputs Y, present_key, present_value,
/// qk_matmul_output.
fn attention_types(cx: &Ctx<'_>) -> Result<Vec<Type>, Diagnostic> {
    let (q, k, v) = (cx.shape(0)?, cx.shape(1)?, cx.shape(2)?);
    let (elem_q, elem_v) = (cx.elem(0)?, cx.elem(2)?);
    let (Some(q), Some(k), Some(v)) = (q, k, v) else {
        return Ok(vec![
            Type::unranked_tensor(elem_q.clone()),
            Type::unranked_tensor(elem_q.clone()),
            Type::unranked_tensor(elem_v),
            Type::unranked_tensor(elem_q),
        ]);
    };
    let view = ops::Attention::of(cx.m, cx.op);
    // (batch, heads, seq, head size) of each input.
    let split = |s: &[i64], heads: Option<i64>| -> Result<[i64; 4], Diagnostic> {
        match s {
            [b, h, n, d] => Ok([*b, *h, *n, *d]),
            [b, n, hidden] => {
                let heads =
                    heads.ok_or_else(|| cx.err("3-D inputs need q_num_heads and kv_num_heads"))?;
                Ok([*b, heads, *n, div_exact(*hidden, heads)])
            }
            _ => Err(cx.err(format!("Q, K and V must have rank 3 or 4, got {}", s.len()))),
        }
    };
    let [b, qh, qs, _] = split(&q, view.q_num_heads())?;
    let kv_heads = view.kv_num_heads();
    let [_, kh, ks, kd] = split(&k, kv_heads)?;
    let [_, _, _, vd] = split(&v, kv_heads)?;
    let past = match cx.operand(4) {
        Some(_) => cx.shape(4)?.map_or(DYN, |p| dim(&p, 2)),
        None => 0,
    };
    let total = if past == DYN || ks == DYN {
        DYN
    } else {
        past + ks
    };
    let y = if q.len() == 3 {
        let hidden = if qh == DYN || vd == DYN { DYN } else { qh * vd };
        vec![b, qs, hidden]
    } else {
        vec![b, qh, qs, vd]
    };
    Ok(vec![
        Type::tensor(y, elem_q.clone()),
        Type::tensor(vec![b, kh, total, kd], elem_q.clone()),
        Type::tensor(vec![b, kh, total, vd], elem_v),
        Type::tensor(vec![b, qh, qs, total], elem_q),
    ])
}

/// LinearAttention: packed `[B, T, H * D]` inputs; output `[B, T, Hq * Dv]`
/// and the recurrent state `[B, Hkv, Dk, Dv]`.
fn linear_attention_types(cx: &Ctx<'_>) -> Result<Vec<Type>, Diagnostic> {
    let elem = cx.elem(0)?;
    let v = ops::LinearAttention::of(cx.m, cx.op);
    let (qh, kvh) = (v.q_num_heads(), v.kv_num_heads());
    let shape3 = |i: usize| -> Result<Shape, Diagnostic> {
        match cx.shape(i)? {
            Some(s) if s.len() != 3 => Err(cx.err(format!("operand #{i} must have rank 3"))),
            s => Ok(s),
        }
    };
    let (q, k, v) = (shape3(0)?, shape3(1)?, shape3(2)?);
    let dk = k.as_ref().map_or(DYN, |k| div_exact(dim(k, 2), kvh));
    let dv = v.as_ref().map_or(DYN, |v| div_exact(dim(v, 2), kvh));
    let out = q.map(|q| {
        let hidden = if qh == DYN || dv == DYN { DYN } else { qh * dv };
        vec![dim(&q, 0), dim(&q, 1), hidden]
    });
    let batch = cx.shape(0)?.map_or(DYN, |q| dim(&q, 0));
    let state_elem = match cx.operand(3) {
        Some(_) => cx.elem(3)?,
        None => elem.clone(),
    };
    Ok(vec![
        tensor(out, elem),
        Type::tensor(vec![batch, kvh, dk, dv], state_elem),
    ])
}
