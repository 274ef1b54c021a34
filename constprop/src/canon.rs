//! Canonicalizations that make folding happen: Shape/Size of static shapes,
//! BatchNormalization folded into a preceding Conv or turned into a
//! per-channel scale and shift, neutral-constant removal (x+0, x*1, x-0,
//! x/1) and reassociation of constant Add/Mul chains.

use crate::fold::constant_operand;
use crate::fold::elementwise::apply_arith;
use ir::attr::Attribute;
use ir::elements::{DType, Elements, NumClass, WideNum};
use ir::rewrite::Pattern;
use ir::{InsertPoint, Module, OpId, OpSpec, Result, Sym, Type, ValueId};

/// Inserts `onnx.Constant` holding `e` before `before`.
pub fn make_const(m: &mut Module, before: OpId, e: Elements) -> Option<ValueId> {
    let loc = m.loc(before).clone();
    let c = m.create_op(
        Sym::new("onnx.Constant"),
        OpSpec {
            result_types: vec![e.tensor_type()],
            attrs: vec![(Sym::new("value"), Attribute::Elements(e))],
            loc,
            ..OpSpec::default()
        },
    );
    m.insert(c, InsertPoint::Before(before));
    m.result(c, 0)
}

/// Inserts a one-result op before `before`; `suffix` keeps the ONNX node
/// names of ops made from one op distinct.
fn make_op(
    m: &mut Module,
    before: OpId,
    name: &str,
    operands: Vec<ValueId>,
    ty: Type,
    suffix: &str,
) -> Option<ValueId> {
    let loc = match m.loc(before) {
        ir::Location::Name(n) if !suffix.is_empty() => ir::Location::name(&format!("{n}/{suffix}")),
        l => l.clone(),
    };
    let o = m.create_op(
        Sym::new(name),
        OpSpec {
            operands,
            result_types: vec![ty],
            loc,
            ..OpSpec::default()
        },
    );
    m.insert(o, InsertPoint::Before(before));
    m.result(o, 0)
}

/// `Shape`/`Size` of a value whose type has a static shape.
pub struct StaticShape;

impl Pattern for StaticShape {
    fn name(&self) -> &'static str {
        "static-shape"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        let is_size = m.is(op, "onnx.Size");
        if !(m.is(op, "onnx.Shape") || is_size) {
            return Ok(false);
        }
        let Some(x) = m.operand(op, 0) else {
            return Ok(false);
        };
        let Some(shape) = m.value_type(x).shape().map(<[i64]>::to_vec) else {
            return Ok(false);
        };
        if shape.iter().any(|&d| d < 0) {
            return Ok(false);
        }
        let e = if is_size {
            let n: i64 = shape.iter().product();
            Elements::from_wide(DType::I64, vec![], &[WideNum::from_i64(n)])
        } else {
            let r = shape.len() as i64;
            let fix = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
            let s = fix(m.attr(op, "start").and_then(Attribute::as_int).unwrap_or(0));
            let t = fix(m.attr(op, "end").and_then(Attribute::as_int).unwrap_or(r));
            let dims: Vec<WideNum> = shape[s..t.max(s)]
                .iter()
                .map(|&d| WideNum::from_i64(d))
                .collect();
            Elements::from_wide(DType::I64, vec![dims.len() as i64], &dims)
        };
        let Ok(e) = e else { return Ok(false) };
        let Some(c) = make_const(m, op, e) else {
            return Ok(false);
        };
        m.replace_op(op, &[c]);
        Ok(true)
    }
}

/// Per-channel values as `Elements` of `shape`; a splat when all are equal.
fn channel_elements(dtype: DType, vals: &[f64], shape: Vec<i64>) -> Option<Elements> {
    let first = *vals.first()?;
    if vals
        .iter()
        .all(|&v| v == first || (v.is_nan() && first.is_nan()))
    {
        return Elements::splat(dtype, shape, WideNum::from_f64(first)).ok();
    }
    let w: Vec<WideNum> = vals.iter().map(|&v| WideNum::from_f64(v)).collect();
    Elements::from_wide(dtype, shape, &w).ok()
}

/// Values of a per-channel constant, broadcast to `c` entries.
fn per_channel(e: &Elements, c: usize) -> Option<Vec<f64>> {
    let v: Vec<f64> = e.iter().map(|x| x.f64()).collect();
    match v.len() {
        n if n == c => Some(v),
        1 => Some(vec![v[0]; c]),
        _ => None,
    }
}

/// Inference-mode BatchNormalization: into the preceding Conv's weight and
/// bias when it is the Conv's only use, else `x * k + shift` per channel.
pub struct FoldBatchNorm;

impl Pattern for FoldBatchNorm {
    fn name(&self) -> &'static str {
        "fold-batchnorm"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        if !m.is(op, "onnx.BatchNormalization")
            || m.attr(op, "training_mode")
                .and_then(Attribute::as_int)
                .unwrap_or(0)
                != 0
            || m.results(op).iter().skip(1).any(|&r| m.has_uses(r))
        {
            return Ok(false);
        }
        let params: Option<Vec<Elements>> = (1..5).map(|i| constant_operand(m, op, i)).collect();
        let (Some(params), Some(x), Some(y)) = (params, m.operand(op, 0), m.result(op, 0)) else {
            return Ok(false);
        };
        let Some(dtype) = DType::from_type(m.value_type(y).element_type()) else {
            return Ok(false);
        };
        if dtype.class() != NumClass::Float {
            return Ok(false);
        }
        let Some(rank) = m.value_type(x).shape().map(<[i64]>::len) else {
            return Ok(false);
        };
        let c = match m.value_type(x).shape().and_then(|s| s.get(1)) {
            Some(&d) if d > 0 => d as usize,
            _ => params[0].len().max(params[2].len()),
        };
        let eps = m
            .attr(op, "epsilon")
            .and_then(Attribute::as_float)
            .unwrap_or(1e-5);
        let p: Option<Vec<Vec<f64>>> = params.iter().map(|e| per_channel(e, c)).collect();
        let Some(p) = p else { return Ok(false) };
        let k: Vec<f64> = (0..c).map(|i| p[0][i] / (p[3][i] + eps).sqrt()).collect();
        if rank < 2 {
            return Ok(false);
        }
        // Fuse into a Conv whose only use is this BatchNormalization.
        if let Some(conv) = m.defining_op(x).filter(|&d| m.is(d, "onnx.Conv")) {
            if m.uses(x).len() == 1 {
                if let Some(w) = constant_operand(m, conv, 1) {
                    let bias = match m.operand(conv, 2) {
                        Some(b) if *m.value_type(b) != Type::None => {
                            match constant_operand(m, conv, 2) {
                                Some(e) => per_channel(&e, c),
                                None => None,
                            }
                        }
                        _ => Some(vec![0.0; c]),
                    };
                    let wd = w.dtype();
                    let mut kshape = vec![1i64; w.shape().len()];
                    if let (Some(b), Some(first)) = (bias, kshape.first_mut()) {
                        *first = c as i64;
                        let new_b: Vec<f64> =
                            (0..c).map(|i| (b[i] - p[2][i]) * k[i] + p[1][i]).collect();
                        // Dense weights stay a lazy view over their buffer
                        // (scaled when read); splats stay splats.
                        let nw = if w.is_splat() || w.len() % c != 0 {
                            let kc = channel_elements(wd, &k, kshape);
                            kc.and_then(|kc| apply_arith("Mul", &w, &kc, wd))
                        } else {
                            w.affine_blocks(wd, w.len() / c, k.clone(), vec![0.0; c])
                        };
                        let nb = channel_elements(wd, &new_b, vec![c as i64]);
                        if let (Some(nw), Some(nb)) = (nw, nb) {
                            let (Some(wv), Some(bv)) =
                                (make_const(m, conv, nw), make_const(m, conv, nb))
                            else {
                                return Ok(false);
                            };
                            m.set_operands(conv, &[x_of(m, conv)?, wv, bv]);
                            m.replace_all_uses(y, x);
                            m.erase_op(op);
                            return Ok(true);
                        }
                    }
                }
            }
        }
        // Otherwise a per-channel scale and shift.
        let mut cshape = vec![1i64; rank - 1];
        cshape[0] = c as i64;
        let shift: Vec<f64> = (0..c).map(|i| p[1][i] - p[2][i] * k[i]).collect();
        let (Some(kc), Some(sc)) = (
            channel_elements(dtype, &k, cshape.clone()),
            channel_elements(dtype, &shift, cshape),
        ) else {
            return Ok(false);
        };
        let ty = m.value_type(y).clone();
        let (Some(kv), Some(sv)) = (make_const(m, op, kc), make_const(m, op, sc)) else {
            return Ok(false);
        };
        let Some(mul) = make_op(m, op, "onnx.Mul", vec![x, kv], ty.clone(), "scale") else {
            return Ok(false);
        };
        let Some(add) = make_op(m, op, "onnx.Add", vec![mul, sv], ty, "shift") else {
            return Ok(false);
        };
        m.replace_all_uses(y, add);
        m.erase_op(op);
        Ok(true)
    }
}

fn x_of(m: &Module, op: OpId) -> Result<ValueId> {
    m.operand(op, 0)
        .ok_or_else(|| ir::dialects::op_error(m, op, "missing operand"))
}

fn splat_value(e: &Elements) -> Option<f64> {
    if !e.is_splat() || e.is_empty() {
        return None;
    }
    let v = e.get(0)?;
    Some(v.to_f64(e.dtype().class()))
}

/// x+0, 0+x, x-0, x*1, 1*x, x/1 forward x when the types agree.
pub struct NeutralOperand;

impl Pattern for NeutralOperand {
    fn name(&self) -> &'static str {
        "neutral-operand"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        let (neutral, commutes) = match m.name(op).as_str() {
            "onnx.Add" => (0.0, true),
            "onnx.Sub" => (0.0, false),
            "onnx.Mul" => (1.0, true),
            "onnx.Div" => (1.0, false),
            _ => return Ok(false),
        };
        let Some(r) = m.result(op, 0) else {
            return Ok(false);
        };
        let sides: &[(usize, usize)] = if commutes {
            &[(1, 0), (0, 1)]
        } else {
            &[(1, 0)]
        };
        for &(c, other) in sides {
            let Some(e) = constant_operand(m, op, c) else {
                continue;
            };
            if splat_value(&e) != Some(neutral) {
                continue;
            }
            let Some(x) = m.operand(op, other) else {
                continue;
            };
            if m.value_type(x) == m.value_type(r) {
                m.replace_all_uses(r, x);
                m.erase_op(op);
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// (x op c1) op c2 → x op (c1 op c2) for Add and Mul when the inner result
/// has no other use.
pub struct Reassociate;

impl Pattern for Reassociate {
    fn name(&self) -> &'static str {
        "reassociate-constants"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        let kind = m.name(op);
        let kind = kind.as_str();
        if kind != "onnx.Add" && kind != "onnx.Mul" {
            return Ok(false);
        }
        let Some(c2) = constant_operand(m, op, 1) else {
            return Ok(false);
        };
        let Some(inner_v) = m.operand(op, 0) else {
            return Ok(false);
        };
        let Some(inner) = m.defining_op(inner_v) else {
            return Ok(false);
        };
        if !m.is(inner, kind) || m.uses(inner_v).len() != 1 {
            return Ok(false);
        }
        let Some(c1) = constant_operand(m, inner, 1) else {
            return Ok(false);
        };
        let (Some(x), Some(r)) = (m.operand(inner, 0), m.result(op, 0)) else {
            return Ok(false);
        };
        if c1.dtype() != c2.dtype() || constant_operand(m, inner, 0).is_some() {
            return Ok(false);
        }
        let short = kind.trim_start_matches("onnx.");
        let Some(c) = apply_arith(short, &c1, &c2, c1.dtype()) else {
            return Ok(false);
        };
        let ty = m.value_type(r).clone();
        let Some(cv) = make_const(m, op, c) else {
            return Ok(false);
        };
        let Some(n) = make_op(m, op, kind, vec![x, cv], ty, "") else {
            return Ok(false);
        };
        m.replace_all_uses(r, n);
        m.erase_op(op);
        Ok(true)
    }
}

/// `If` with a constant condition: the taken branch's ops move before it
/// and its yielded values replace the results.
pub struct ConstantIf;

impl Pattern for ConstantIf {
    fn name(&self) -> &'static str {
        "constant-if"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        if !m.is(op, "onnx.If") {
            return Ok(false);
        }
        let Some(cond) = constant_operand(m, op, 0).and_then(|e| e.get(0)) else {
            return Ok(false);
        };
        let branch = usize::from(cond.u64() == 0);
        let Some(block) = m.region(op, branch).and_then(|r| m.entry_block(r)) else {
            return Ok(false);
        };
        if !m.block_args(block).is_empty() {
            return Ok(false);
        }
        let ops: Vec<OpId> = m.block_ops(block).collect();
        let Some((&yield_op, body)) = ops.split_last() else {
            return Ok(false);
        };
        if !m.is(yield_op, "onnx.Yield") || m.operands(yield_op).len() != m.results(op).len() {
            return Ok(false);
        }
        let values = m.operands(yield_op).to_vec();
        for &o in body {
            m.move_to(o, InsertPoint::Before(op));
        }
        m.replace_op(op, &values);
        Ok(true)
    }
}
