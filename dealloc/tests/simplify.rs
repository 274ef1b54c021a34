//! `dealloc-simplification` patterns, each checked for the resulting shape
//! and for unchanged behaviour (results and freed buffers) on every input.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

mod common;

use common::interp::{Interp, Val};
use common::*;
use ir::dialects::bufferization::dealloc_groups;
use ir::{Builder, Module, OpId, Type, ValueId};

/// `@f(%c0, %c1: i1) -> (i1 x r)`: two fresh buffers `a0`, `a1`, then the
/// dealloc `build` makes from (a0, a1, c0, c1, builder); its results are returned.
fn dealloc_fn(
    r: usize,
    build: impl FnOnce(&mut Builder<'_>, [ValueId; 4]) -> (Vec<ValueId>, Vec<ValueId>, Vec<ValueId>),
) -> (Module, OpId) {
    let mut m = Module::new();
    let (f, entry) = func(
        &mut m,
        "f",
        vec![Type::i1(), Type::i1()],
        vec![Type::i1(); r],
    );
    let (c0, c1) = (
        m.block_arg(entry, 0).unwrap(),
        m.block_arg(entry, 1).unwrap(),
    );
    let mut b = Builder::at_end(&mut m, entry);
    let a0 = alloc(&mut b, vec_ty(4));
    let a1 = alloc(&mut b, vec_ty(4));
    let (mems, conds, kept) = build(&mut b, [a0, a1, c0, c1]);
    let op = b.bufferization_dealloc(&mems, &conds, &kept);
    let res = b.m.results(op).to_vec();
    b.ret(&res);
    (m, f)
}

/// For every pair of conditions: (returned i1s, which buffers were freed).
fn behaviour(m: &Module) -> Vec<(Vec<Val>, Vec<bool>)> {
    let mut out = Vec::new();
    for c0 in [0, 1] {
        for c1 in [0, 1] {
            let mut it = Interp::new(m);
            let f = m.lookup_symbol("f").unwrap();
            let res = it.call(f, vec![Val::I(c0), Val::I(c1)]).unwrap();
            out.push((res, it.bufs.iter().map(|b| b.live).collect()));
        }
    }
    out
}

/// Simplifies and checks that behaviour did not change.
fn simplify(m: &mut Module) {
    let before = behaviour(m);
    run(m, "dealloc-simplification").unwrap();
    assert_eq!(behaviour(m), before);
}

fn deallocs(m: &Module, f: OpId) -> Vec<(usize, usize, usize)> {
    ops_named(m, f, "bufferization.dealloc")
        .into_iter()
        .map(|d| dealloc_groups(m, d).unwrap())
        .collect()
}

#[test]
fn duplicate_memrefs_merge_their_conditions() {
    let (mut m, f) = dealloc_fn(0, |_, [a0, _, c0, c1]| (vec![a0, a0], vec![c0, c1], vec![]));
    simplify(&mut m);
    assert_eq!(deallocs(&m, f), vec![(1, 1, 0)]);
    assert_eq!(count(&m, f, "arith.ori"), 1);
}

#[test]
fn false_conditions_drop_memrefs() {
    let (mut m, f) = dealloc_fn(0, |b, [a0, a1, c0, _]| {
        let no = b.const_bool(false);
        (vec![a0, a1], vec![no, c0], vec![])
    });
    simplify(&mut m);
    assert_eq!(deallocs(&m, f), vec![(1, 1, 0)]);
}

#[test]
fn empty_deallocs_vanish_and_retained_results_are_false() {
    let (mut m, f) = dealloc_fn(1, |b, [a0, _, _, _]| {
        let no = b.const_bool(false);
        (vec![a0], vec![no], vec![a0])
    });
    simplify(&mut m);
    assert!(deallocs(&m, f).is_empty());
    let ret = ops_named(&m, f, "func.return")[0];
    assert_eq!(common::interp::Val::I(0), behaviour(&m)[3].0[0]);
    assert!(m.is(def_of(&m, ret, 0).unwrap(), "arith.constant"));
}

#[test]
fn retained_values_that_cannot_alias_are_dropped() {
    let (mut m, f) = dealloc_fn(2, |b, [a0, a1, c0, _]| {
        let g = b.alloca(&vec_ty(4), &[]);
        (vec![a0], vec![c0], vec![a1, g])
    });
    simplify(&mut m);
    assert_eq!(deallocs(&m, f), vec![(1, 1, 0)]);
    assert_eq!(count(&m, f, "memref.dealloc"), 0);
}

#[test]
fn duplicate_retained_values_share_one_result() {
    let (mut m, f) = dealloc_fn(2, |_, [a0, _, c0, _]| (vec![a0], vec![c0], vec![a0, a0]));
    simplify(&mut m);
    // a0 is retained, so never freed: the op goes, both results are c0.
    assert!(deallocs(&m, f).is_empty());
    let ret = ops_named(&m, f, "func.return")[0];
    assert_eq!(m.operand(ret, 0), m.operand(ret, 1));
}

#[test]
fn disjoint_memrefs_split_with_their_own_retained() {
    let (mut m, f) = dealloc_fn(1, |b, [a0, a1, c0, c1]| {
        let t = b.const_bool(true);
        let _ = c1;
        (vec![a0, a1], vec![c0, t], vec![a0])
    });
    simplify(&mut m);
    // a0 is retained (never freed); a1 is freed unconditionally.
    assert!(deallocs(&m, f).is_empty());
    assert_eq!(count(&m, f, "memref.dealloc"), 1);
}

#[test]
fn possibly_aliasing_memrefs_stay_together() {
    let mut m = Module::new();
    let (f, entry) = func(&mut m, "f", vec![Type::i1(), vec_ty(4)], vec![]);
    let c = m.block_arg(entry, 0).unwrap();
    let mut b = Builder::at_end(&mut m, entry);
    let a = alloc(&mut b, vec_ty(4));
    let s = b.select(c, a, a);
    let t = b.const_bool(true);
    b.bufferization_dealloc(&[a, s], &[t, c], &[]);
    b.ret(&[]);
    run(&mut m, "dealloc-simplification").unwrap();
    assert_eq!(deallocs(&m, f), vec![(2, 2, 0)]);
}

#[test]
fn constant_true_single_becomes_memref_dealloc() {
    let (mut m, f) = dealloc_fn(0, |b, [a0, a1, _, _]| {
        let t = b.const_bool(true);
        (vec![a0, a1], vec![t, t], vec![])
    });
    simplify(&mut m);
    assert!(deallocs(&m, f).is_empty());
    assert_eq!(count(&m, f, "memref.dealloc"), 2);
}

#[test]
fn views_of_a_memref_must_alias_it() {
    // A view of a0 retained (a branch yielding a reshape): a0 is never
    // freed there and the result is its condition (likewise a1, retained
    // itself): no pointer comparison is left.
    let (mut m, f) = dealloc_fn(2, |b, [a0, a1, c0, c1]| {
        let v = same_view(b, a0);
        (vec![a0, a1], vec![c0, c1], vec![v, a1])
    });
    simplify(&mut m);
    assert!(deallocs(&m, f).is_empty());
    let ret = ops_named(&m, f, "func.return")[0];
    let c0 = m.block_arg(m.entry_block(m.region(f, 0).unwrap()).unwrap(), 0);
    assert_eq!(m.operand(ret, 0), c0);
}
