//! A Squeeze without axes of dynamic dims (opset < 13) as a chain of
//! `If(dim == 1)`, whose results `absorb_continuation` then versions.

use crate::canon::{make_i64s, make_op};
use ir::{InsertPoint, Module, OpId, OpSpec, Sym, Type, ValueId};
use onnx::OpKind;

/// `Squeeze(x)` without axes of an `x` with dynamic dims: from the last dim
/// to the first, a static 1 is squeezed and a dynamic dim is squeezed in
/// the then branch of `If(dim == 1)` (kept in the else branch), so the
/// rank is decided by Ifs that `absorb_continuation` versions. A declared
/// rank of the result does not stop it: exporters declare the rank they
/// traced (torch's `x.squeeze()` of `[N, 1]` as `[N]`), while onnxruntime
/// squeezes N too when it is 1.
pub(super) fn expand_squeeze(m: &mut Module, op: OpId) -> bool {
    if !onnx::is(m, op, OpKind::Squeeze) || m.operands(op).len() != 1 {
        return false;
    }
    let (Some(&x), Some(&r)) = (m.operands(op).first(), m.results(op).first()) else {
        return false;
    };
    let Some(dims) = m.value_type(x).shape().map(<[i64]>::to_vec) else {
        return false;
    };
    if !dims.contains(&ir::DYN) {
        return false;
    }
    // Ops made before a failure are left unused; dead-code removal takes them.
    let mut v = x;
    for (axis, &d) in dims.iter().enumerate().rev() {
        let next = match d {
            1 => squeeze_axis(m, op, v, axis),
            ir::DYN => squeeze_if_one(m, op, v, axis),
            _ => Some(v),
        };
        let Some(next) = next else {
            return false;
        };
        v = next;
    }
    m.replace_all_uses(r, v);
    m.erase_op(op);
    true
}

/// `Squeeze(v, [axis])` before `before` (located there).
fn squeeze_axis(m: &mut Module, before: OpId, v: ValueId, axis: usize) -> Option<ValueId> {
    let axes = make_i64s(m, before, vec![1], &[axis as i64])?;
    let ty = Type::unranked_tensor(m.value_type(v).element_type().clone());
    make_op(m, before, onnx::ops::Squeeze::build(v, Some(axes)), ty, "")
}

/// `If(Shape(v)[axis] == 1) { Squeeze(v, [axis]) } else { v }` before `at`.
fn squeeze_if_one(m: &mut Module, at: OpId, v: ValueId, axis: usize) -> Option<ValueId> {
    let rank = m.value_type(v).shape().map_or(ir::DYN, |s| s.len() as i64);
    let shape_ty = Type::tensor(vec![rank], Type::i64());
    let shape = make_op(m, at, onnx::ops::Shape::build(v), shape_ty, "")?;
    let index = make_i64s(m, at, vec![], &[axis as i64])?;
    let scalar = Type::tensor(vec![], Type::i64());
    let dim = make_op(m, at, onnx::ops::Gather::build(shape, index), scalar, "")?;
    let one = make_i64s(m, at, vec![], &[1])?;
    let flag = Type::tensor(vec![], Type::i1());
    let cond = make_op(m, at, onnx::ops::Equal::build(dim, one), flag, "")?;
    let elem = m.value_type(v).element_type().clone();
    let iff = m.create_op(
        Sym::new(OpKind::If.ir_name()),
        OpSpec {
            operands: vec![cond],
            result_types: vec![Type::unranked_tensor(elem)],
            regions: 2,
            loc: m.loc(at).clone(),
            ..OpSpec::default()
        },
    );
    m.insert(iff, InsertPoint::Before(at));
    for k in 0..2 {
        let region = m.region(iff, k)?;
        let block = m.append_block(region, &[]);
        let y = m.create_op(
            Sym::new(OpKind::Yield.ir_name()),
            OpSpec {
                loc: m.loc(at).clone(),
                ..OpSpec::default()
            },
        );
        m.insert(y, InsertPoint::End(block));
        // Located as `at`, as the Squeeze made before it.
        let out = if k == 0 {
            squeeze_axis(m, y, v, axis)?
        } else {
            v
        };
        m.set_operands(y, &[out]);
    }
    m.result(iff, 0)
}
