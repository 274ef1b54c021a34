#![allow(clippy::unwrap_used)]
//! The generated typed ops: `try_of` checks the kind, operands read by
//! their table names (an omitted optional one is `None`), and the typed
//! builders insert ops the verifier accepts.

use ir::{InsertPoint, Location, Module, Type, ValueId};
use onnx::{ops, verify::check_op, OpKind};

fn input(m: &mut Module, shape: &[i64]) -> ValueId {
    let ty = Type::tensor(shape.to_vec(), Type::f32());
    let at = InsertPoint::End(m.body());
    let op = ops::RandomNormal::build()
        .shape(shape)
        .insert(m, at, vec![ty], Location::Unknown);
    m.results(op)[0]
}

#[test]
fn gemm_built_read_and_verified() {
    let mut m = Module::new();
    let (a, b, c) = (
        input(&mut m, &[2, 3]),
        input(&mut m, &[3, 4]),
        input(&mut m, &[4]),
    );
    let at = InsertPoint::End(m.body());
    let ty = Type::tensor(vec![2, 4], Type::f32());
    let op = ops::Gemm::build(a, b, Some(c))
        .alpha(0.5)
        .trans_b(0)
        .insert(&mut m, at, vec![ty], Location::Unknown);
    check_op(&m, op, OpKind::Gemm).unwrap();
    let g = ops::Gemm::try_of(&m, op).unwrap();
    assert_eq!((g.a(), g.b(), g.c()), (Some(a), Some(b), Some(c)));
    assert_eq!((g.alpha(), g.beta(), g.trans_b()), (0.5, 1.0, 0));
    assert_eq!(ops::Gemm::C, 2);
    assert!(ops::MatMul::try_of(&m, op).is_none());
}

#[test]
fn omitted_operands_are_none() {
    let mut m = Module::new();
    let (x, scale) = (input(&mut m, &[2, 3]), input(&mut m, &[]));
    let at = InsertPoint::End(m.body());
    let ty = Type::tensor(vec![2, 3], Type::f32());
    // Trailing: left off.
    let q =
        ops::QuantizeLinear::build(x, scale, None).insert(&mut m, at, vec![ty], Location::Unknown);
    assert_eq!(m.operands(q).len(), 2);
    assert_eq!(ops::QuantizeLinear::of(&m, q).y_zero_point(), None);
    // Before a present one: a `none` value, which reads as omitted.
    let lengths = input(&mut m, &[2]);
    let at = InsertPoint::End(m.body());
    let ty = Type::tensor(vec![2, 3], Type::f32());
    let clip =
        ops::Clip::build(x, None, Some(lengths)).insert(&mut m, at, vec![ty], Location::Unknown);
    check_op(&m, clip, OpKind::Clip).unwrap();
    let view = ops::Clip::of(&m, clip);
    assert_eq!(m.operands(clip).len(), 3);
    assert_eq!((view.min(), view.max()), (None, Some(lengths)));
}

#[test]
fn variadic_operands_spread() {
    let mut m = Module::new();
    let xs: Vec<ValueId> = (0..3).map(|_| input(&mut m, &[2])).collect();
    let at = InsertPoint::End(m.body());
    let ty = Type::tensor(vec![6], Type::f32());
    let op = ops::Concat::build(&xs)
        .axis(0)
        .insert(&mut m, at, vec![ty], Location::Unknown);
    check_op(&m, op, OpKind::Concat).unwrap();
    assert_eq!(ops::Concat::of(&m, op).inputs(), &xs[..]);
    assert_eq!(ops::Concat::of(&m, op).axis(), 0);
}
