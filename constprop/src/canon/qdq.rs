//! QDQ groups as int8 ops, the form onnxruntime's quantizer writes by
//! default: `QuantizeLinear(Conv(DequantizeLinear(xq), DequantizeLinear(wq),
//! DequantizeLinear(bq)))` becomes `QLinearConv(xq, .., wq, .., bq)` and
//! `QuantizeLinear(MatMul(DequantizeLinear(aq), DequantizeLinear(bq)))`
//! becomes `QLinearMatMul`, as onnxruntime itself runs such groups. The
//! float op between is never computed: the sums are integers and one
//! requantization follows, which differs from the float path by float
//! rounding only (at most one quantization step).
//!
//! It runs before constant propagation, which would fold the weights'
//! DequantizeLinear into float constants.

use crate::fold::constant_operand;
use ir::pass::{Pass, PassContext, PassInfo};
use ir::rewrite::{apply_greedily, GreedyConfig, Pattern};
use ir::{InsertPoint, Module, OpId, OpSpec, Result, Sym, Type, ValueId};
use onnx::{ops, OpKind};

pub struct FuseQdq;

/// A `DequantizeLinear(q, scale, zero_point)` without blocks.
struct Dq {
    q: ValueId,
    scale: ValueId,
    zp: ValueId,
    axis: i64,
    op: OpId,
}

fn dq(m: &Module, v: ValueId) -> Option<Dq> {
    let op = onnx::defined_by(m, v, OpKind::DequantizeLinear)?;
    let view = ops::DequantizeLinear::of(m, op);
    if view.block_size() != 0 {
        return None;
    }
    Some(Dq {
        q: view.x()?,
        scale: view.x_scale()?,
        zp: view.x_zero_point()?,
        axis: view.axis(),
        op,
    })
}

fn shape(m: &Module, v: ValueId) -> Option<Vec<i64>> {
    m.value_type(v).shape().map(<[i64]>::to_vec)
}

/// One element, statically.
fn single(m: &Module, v: ValueId) -> bool {
    shape(m, v).is_some_and(|s| s.iter().all(|&d| d == 1))
}

fn byte_typed(m: &Module, v: ValueId) -> bool {
    m.value_type(v).element_type().int_width() == Some(8)
}

/// A per-tensor quantized 8-bit input.
fn per_tensor(m: &Module, d: &Dq) -> bool {
    byte_typed(m, d.q) && single(m, d.scale) && single(m, d.zp)
}

/// Constant 8-bit weights quantized per tensor or along `axis` of `rank`
/// dims (`len` entries).
fn weights(m: &Module, d: &Dq, axis: i64, len: i64) -> bool {
    let rank = shape(m, d.q).map_or(0, |s| s.len() as i64);
    let along = d.axis == axis || d.axis == axis - rank;
    let per_axis = |v| shape(m, v).is_some_and(|s| s == [len]) && along;
    byte_typed(m, d.q)
        && constant_operand(m, d.op, 0).is_some()
        && ((single(m, d.scale) && single(m, d.zp)) || (per_axis(d.scale) && per_axis(d.zp)))
}

/// An i32 bias whose scale is `x_scale · w_scale` (what QLinearConv adds
/// before requantizing), zero point 0.
fn bias(m: &Module, d: &Dq, x: &Dq, w: &Dq) -> bool {
    let floats = |op: OpId, i| -> Option<Vec<f32>> {
        let e = constant_operand(m, op, i)?;
        Some(e.iter().map(|v| v.f64() as f32).collect())
    };
    let (Some(bs), Some(xs), Some(ws)) = (floats(d.op, 1), floats(x.op, 1), floats(w.op, 1)) else {
        return false;
    };
    let zero_zp = constant_operand(m, d.op, 2).is_some_and(|z| z.iter().all(|v| v.i64() == 0));
    let scale_ok = bs.len() == ws.len().max(1)
        && bs.iter().enumerate().all(|(i, &s)| {
            let w = ws.get(i).or(ws.first()).copied().unwrap_or(f32::NAN);
            xs.first()
                .is_some_and(|&x| (x * w).to_bits() == s.to_bits())
        });
    m.value_type(d.q).element_type().int_width() == Some(32) && zero_zp && scale_ok
}

/// The int8 op's operands for the float op `f`, whose only user is the
/// QuantizeLinear `q`; `None` when the group does not qualify.
fn operands(m: &Module, f: OpId, kind: OpKind) -> Option<Vec<ValueId>> {
    // Conv's X and W, MatMul's A and B: the first two operands alike.
    let (x, w) = (
        dq(m, m.operand(f, ops::Conv::X)?)?,
        dq(m, m.operand(f, ops::Conv::W)?)?,
    );
    if !per_tensor(m, &x) {
        return None;
    }
    let ws = shape(m, w.q)?;
    let ok = match kind {
        // A depthwise conv (one input channel per group) stays float: it
        // has a kernel of its own on planes, faster than the int8 GEMM's
        // one-row tiles.
        OpKind::Conv if ws.get(1) == Some(&1) && ops::Conv::of(m, f).group() > 1 => false,
        OpKind::Conv => weights(m, &w, 0, *ws.first()?),
        _ => ws.len() == 2 && weights(m, &w, 1, ws[1]),
    };
    if !ok {
        return None;
    }
    let mut v = vec![x.q, x.scale, x.zp, w.q, w.scale, w.zp];
    if let Some(bias_dq) = ops::Conv::try_of(m, f).and_then(|c| c.b()) {
        let b = dq(m, bias_dq)?;
        if !bias(m, &b, &x, &w) {
            return None;
        }
        v.push(b.q);
    }
    Some(v)
}

fn fuse(m: &mut Module, q: OpId) -> Option<ValueId> {
    let qv = ops::QuantizeLinear::of(m, q);
    let y = qv.x()?;
    let f = m.defining_op(y)?;
    let (kind, int8) = match OpKind::of(m, f)? {
        OpKind::Conv => (OpKind::Conv, OpKind::QLinearConv),
        OpKind::MatMul => (OpKind::MatMul, OpKind::QLinearMatMul),
        _ => return None,
    };
    let (ys, yz) = (qv.y_scale()?, qv.y_zero_point()?);
    let out = m.result(q, 0)?;
    if m.uses(y).len() != 1 || qv.block_size() != 0 || !single(m, ys) || !single(m, yz) {
        return None;
    }
    if !byte_typed(m, out) || m.value_type(yz).element_type() != m.value_type(out).element_type() {
        return None;
    }
    let mut v = operands(m, f, kind)?;
    // QLinearConv's bias comes last, after the output's scale and zero point.
    let bias = (v.len() == 7).then(|| v.pop()).flatten();
    v.extend([ys, yz]);
    v.extend(bias);
    let attrs = if kind == OpKind::Conv {
        m.attrs(f).to_vec()
    } else {
        Vec::new()
    };
    let ty: Type = m.value_type(out).clone();
    let op = m.create_op(
        Sym::new(int8.ir_name()),
        OpSpec {
            operands: v,
            result_types: vec![ty],
            attrs,
            loc: m.loc(f).clone(),
            ..OpSpec::default()
        },
    );
    m.insert(op, InsertPoint::Before(q));
    m.result(op, 0)
}

impl Pattern for FuseQdq {
    fn name(&self) -> &'static str {
        "fuse-qdq"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        if !onnx::is(m, op, OpKind::QuantizeLinear) {
            return Ok(false);
        }
        let (Some(r), Some(float_op)) = (m.result(op, 0), m.operand(op, 0)) else {
            return Ok(false);
        };
        let Some(f) = m.defining_op(float_op) else {
            return Ok(false);
        };
        let Some(v) = fuse(m, op) else {
            return Ok(false);
        };
        m.replace_all_uses(r, v);
        m.erase_op(op);
        m.erase_op(f);
        Ok(true)
    }
}

struct FuseQdqPass;

impl Pass for FuseQdqPass {
    fn name(&self) -> &'static str {
        "fuse-qdq"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let top = m.top();
        let report = apply_greedily(m, top, &[&FuseQdq], &GreedyConfig::default())?;
        cx.bump("fuse-qdq.rewrites", report.rewrites as u64);
        Ok(())
    }
}

pub fn pass_info() -> PassInfo {
    PassInfo {
        name: "fuse-qdq",
        summary: "QDQ groups around Conv and MatMul as QLinearConv and QLinearMatMul",
        create: |_| Ok(Box::new(FuseQdqPass)),
    }
}
