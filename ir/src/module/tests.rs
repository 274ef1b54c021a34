//! Unit tests of the arena: build, replace, erase, compact.

use super::*;
use crate::ops::CfOp;

fn spec(operands: Vec<ValueId>, results: Vec<Type>) -> OpSpec {
    OpSpec {
        operands,
        result_types: results,
        ..OpSpec::default()
    }
}

#[test]
fn build_replace_erase_compact() {
    let mut m = Module::new();
    let body = m.body();
    let f = m.create_op(
        Sym::new("test.func"),
        OpSpec {
            regions: 1,
            ..OpSpec::default()
        },
    );
    m.insert(f, InsertPoint::End(body));
    let r = m.region(f, 0).unwrap();
    let b = m.append_block(r, &[Type::f32()]);
    let x = m.block_arg(b, 0).unwrap();
    let a = m.create_op(Sym::new("test.a"), spec(vec![x, x], vec![Type::f32()]));
    m.insert(a, InsertPoint::End(b));
    let av = m.result(a, 0).unwrap();
    let c = m.create_op(Sym::new("test.c"), spec(vec![av], vec![]));
    m.insert(c, InsertPoint::End(b));
    assert_eq!(m.uses(x).len(), 2);
    assert_eq!(m.users(x), vec![a]);

    let n = m.create_op(Sym::new("test.n"), spec(vec![x], vec![Type::f32()]));
    m.insert(n, InsertPoint::Before(c));
    let nv = m.result(n, 0).unwrap();
    m.replace_op(a, &[nv]);
    assert_eq!(m.block_ops(b).collect::<Vec<_>>(), vec![n, c]);
    assert_eq!(m.operands(c), &[nv]);
    assert_eq!(m.uses(x).len(), 1);
    assert_eq!(m.arena_sizes().0, 5);
    // Cancelled: left as it was (tombstone kept, ids valid).
    let t = crate::cancel::Token::new();
    t.cancel();
    crate::cancel::scope(&t, || m.compact());
    assert_eq!(m.arena_sizes().0, 5);
    assert_eq!(m.operands(c), &[nv]);
    m.compact();
    assert_eq!(m.arena_sizes().0, 4);
    assert_eq!(m.num_ops(), 4);
    let f = m.top_level_ops("test.func")[0];
    let b = m.entry_block(m.region(f, 0).unwrap()).unwrap();
    let ops: Vec<OpId> = m.block_ops(b).collect();
    assert_eq!(m.name(ops[0]), "test.n");
    let nres = m.result(ops[0], 0).unwrap();
    assert_eq!(m.operands(ops[1]), &[nres]);
    assert_eq!(m.uses(m.block_arg(b, 0).unwrap()).len(), 1);
}

#[test]
fn successors_and_attrs() {
    let mut m = Module::new();
    let body = m.body();
    let f = m.create_op(
        Sym::new("test.func"),
        OpSpec {
            regions: 1,
            ..OpSpec::default()
        },
    );
    m.insert(f, InsertPoint::End(body));
    let r = m.region(f, 0).unwrap();
    let b0 = m.append_block(r, &[Type::i1(), Type::f32()]);
    let b1 = m.append_block(r, &[Type::f32()]);
    let c = m.block_arg(b0, 0).unwrap();
    let x = m.block_arg(b0, 1).unwrap();
    let br = m.create_op(
        Sym::new(CfOp::CondBr.name()),
        OpSpec {
            operands: vec![c],
            successors: vec![(b1, vec![x]), (b1, vec![])],
            ..OpSpec::default()
        },
    );
    m.insert(br, InsertPoint::End(b0));
    assert_eq!(m.regular_operands(br), &[c]);
    assert_eq!(m.successor_args(br, 0), &[x]);
    assert_eq!(m.successor_args(br, 1), &[] as &[ValueId]);
    m.push_successor_arg(br, 1, x);
    assert_eq!(m.successor_args(br, 1), &[x]);
    assert_eq!(m.uses(x).len(), 2);
    m.set_attr(br, "z", Attribute::Unit);
    m.set_attr(br, "a", Attribute::i64(1));
    assert_eq!(m.attrs(br)[0].0, "a");
    assert_eq!(m.attr(br, "a"), Some(&Attribute::i64(1)));
}
