//! Sequence models: RNN/GRU/LSTM, Attention, LinearAttention,
//! CausalConvWithState, RotaryEmbedding and SwiGLU.

use super::{tensor, Ctx};
use ir::{Diagnostic, Type, DYN};

type Shape = Option<Vec<i64>>;

pub(super) fn infer(cx: &Ctx<'_>, kind: &str) -> Result<Option<Vec<Type>>, Diagnostic> {
    Ok(Some(match kind {
        "RNN" | "GRU" | "LSTM" => recurrent(cx, kind)?,
        "Attention" => attention(cx)?,
        "LinearAttention" => linear_attention(cx)?,
        "CausalConvWithState" => {
            let x = cx.shape(0)?;
            let k = cx.shape(1)?.and_then(|w| w.get(2).copied());
            let state = x.as_ref().map(|x| {
                let state_len = k.filter(|&k| k != DYN).map_or(DYN, |k| (k - 1).max(0));
                vec![dim(x, 0), dim(x, 1), state_len]
            });
            vec![tensor(x, cx.elem(0)?), tensor(state, cx.elem(0)?)]
        }
        "RotaryEmbedding" | "SwiGLU" => vec![cx.same_as(0)?],
        _ => return Ok(None),
    }))
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
fn recurrent(cx: &Ctx<'_>, kind: &str) -> Result<Vec<Type>, Diagnostic> {
    let elem = cx.elem(0)?;
    let Some(x) = cx.shape(0)? else {
        return Ok(vec![Type::unranked_tensor(elem); 3]);
    };
    if x.len() != 3 {
        return Err(cx.err(format!("X must have rank 3, got {}", x.len())));
    }
    let dirs = match cx.attr_str("direction").unwrap_or("forward") {
        "forward" | "reverse" => 1,
        "bidirectional" => 2,
        other => return Err(cx.err(format!("unknown direction '{other}'"))),
    };
    let gates = match kind {
        "LSTM" => 4,
        "GRU" => 3,
        _ => 1,
    };
    let hidden = match cx.attr("hidden_size").and_then(ir::Attribute::as_int) {
        Some(h) => h,
        None => cx.shape(1)?.map_or(DYN, |w| div_exact(dim(&w, 1), gates)),
    };
    let batch_first = cx.attr_int("layout", 0) != 0;
    let (seq, batch) = if batch_first {
        (x[1], x[0])
    } else {
        (x[0], x[1])
    };
    let (y, state) = if batch_first {
        (vec![batch, seq, dirs, hidden], vec![batch, dirs, hidden])
    } else {
        (vec![seq, dirs, batch, hidden], vec![dirs, batch, hidden])
    };
    Ok(vec![
        Type::tensor(y, elem.clone()),
        Type::tensor(state.clone(), elem.clone()),
        Type::tensor(state, elem),
    ])
}

/// Attention (opset 23+) with 4-D `[B, heads, seq, size]` or 3-D
/// `[B, seq, heads * size]` inputs; outputs Y, present_key, present_value,
/// qk_matmul_output.
fn attention(cx: &Ctx<'_>) -> Result<Vec<Type>, Diagnostic> {
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
    let attr = |n: &str| cx.attr(n).and_then(ir::Attribute::as_int);
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
    let [b, qh, qs, _] = split(&q, attr("q_num_heads"))?;
    let kv_heads = attr("kv_num_heads");
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
fn linear_attention(cx: &Ctx<'_>) -> Result<Vec<Type>, Diagnostic> {
    let elem = cx.elem(0)?;
    let heads = |n: &str| cx.attr(n).and_then(ir::Attribute::as_int).unwrap_or(DYN);
    let (qh, kvh) = (heads("q_num_heads"), heads("kv_num_heads"));
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
