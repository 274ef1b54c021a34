//! convert-scf-to-cf on for / if / while / nested loops: the result
//! verifies and holds no scf ops.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use ir::builder::CmpI;
use ir::pass::{PassManager, PassRegistry};
use ir::{Builder, Module, Type};

fn scf_ops_left(m: &Module) -> Vec<String> {
    m.collect_ops(m.top())
        .into_iter()
        .filter(|&o| m.name(o).dialect() == "scf")
        .map(|o| m.name(o).to_string())
        .collect()
}

fn lower(m: &mut Module) {
    ir::verify(m).unwrap_or_else(|d| panic!("input does not verify: {d}"));
    let mut reg = PassRegistry::new();
    lower::register_passes(&mut reg);
    let mut pm = PassManager::new();
    pm.extend(reg.parse("lower-to-llvm-ready").expect("pipeline"));
    pm.instrument(Box::new(ir::pass::VerifyEach));
    pm.run(m).unwrap_or_else(|d| panic!("pass failed: {d}"));
    assert_eq!(scf_ops_left(m), Vec::<String>::new());
}

fn count(m: &Module, name: &str) -> usize {
    m.collect_ops(m.top())
        .into_iter()
        .filter(|&o| m.is(o, name))
        .count()
}

#[test]
fn for_with_iter_args() {
    let mut m = Module::new();
    let (f, e) = func(&mut m, "f", vec![Type::Index], vec![Type::Index]);
    let mut b = Builder::at_end(&mut m, e);
    let n = b.m.block_args(e)[0];
    let z = b.const_index(0);
    let (lb, one) = (b.const_index(0), b.const_index(1));
    let lp = b.scf_for(lb, n, one, &[z], |b, i, acc| vec![b.addi(acc[0], i)]);
    let r = b.m.results(lp).to_vec();
    b.ret(&r);
    lower(&mut m);
    let region = m.region(f, 0).unwrap();
    // entry, header, body, continuation
    assert_eq!(m.region_blocks(region).len(), 4);
    assert_eq!(count(&m, "cf.cond_br"), 1);
    assert_eq!(count(&m, "cf.br"), 2);
    assert_eq!(count(&m, "arith.cmpi"), 1);
}

#[test]
fn if_with_results_and_if_without_else() {
    let mut m = Module::new();
    let (f, e) = func(
        &mut m,
        "f",
        vec![Type::i1(), Type::Index],
        vec![Type::Index],
    );
    let mut b = Builder::at_end(&mut m, e);
    let (c, x) = (b.m.block_args(e)[0], b.m.block_args(e)[1]);
    let r = b.scf_if(
        c,
        &[Type::Index],
        &mut |b| vec![b.addi(x, x)],
        Some(&mut |b| vec![b.muli(x, x)]),
    );
    b.scf_if(c, &[], &mut |_| vec![], None);
    let r = b.m.results(r).to_vec();
    b.ret(&r);
    lower(&mut m);
    let region = m.region(f, 0).unwrap();
    // entry, then, else, merge, then2, merge2
    assert_eq!(m.region_blocks(region).len(), 6);
    assert_eq!(count(&m, "cf.cond_br"), 2);
}

#[test]
fn while_loop() {
    let mut m = Module::new();
    let (_, e) = func(&mut m, "f", vec![Type::Index], vec![Type::Index]);
    let mut b = Builder::at_end(&mut m, e);
    let n = b.m.block_args(e)[0];
    let r = b.scf_while(
        &[n],
        &mut |b, a| {
            let one = b.const_index(1);
            (b.cmpi(CmpI::Sgt, a[0], one), vec![a[0]])
        },
        &mut |b, a| {
            let two = b.const_index(2);
            vec![b.divui(a[0], two)]
        },
    );
    let r = b.m.results(r).to_vec();
    b.ret(&r);
    lower(&mut m);
    assert_eq!(count(&m, "cf.cond_br"), 1);
    assert_eq!(count(&m, "cf.br"), 2);
}

#[test]
fn deeply_nested_mix() {
    let mut m = Module::new();
    let (_, e) = func(&mut m, "f", vec![Type::Index], vec![Type::Index]);
    let mut b = Builder::at_end(&mut m, e);
    let n = b.m.block_args(e)[0];
    let z = b.const_index(0);
    let (lb, one) = (b.const_index(0), b.const_index(1));
    let outer = b.scf_for(lb, n, one, &[z], |b, i, acc| {
        let acc0 = acc[0];
        let (lb, one) = (b.const_index(0), b.const_index(1));
        let inner = b.scf_for(lb, i, one, &[acc0], |b, j, acc| {
            let acc1 = acc[0];
            let odd = {
                let two = b.const_index(2);
                let rem = b.remui(j, two);
                let one = b.const_index(1);
                b.cmpi(CmpI::Eq, rem, one)
            };
            let r = b.scf_if(
                odd,
                &[Type::Index],
                &mut |b| {
                    let w = b.scf_while(
                        &[acc1],
                        &mut |b, a| {
                            let lim = b.const_index(100);
                            (b.cmpi(CmpI::Slt, a[0], lim), vec![a[0]])
                        },
                        &mut |b, a| {
                            let ten = b.const_index(10);
                            vec![b.addi(a[0], ten)]
                        },
                    );
                    b.m.results(w).to_vec()
                },
                Some(&mut |b| vec![b.addi(acc1, j)]),
            );
            b.m.results(r).to_vec()
        });
        b.m.results(inner).to_vec()
    });
    let r = b.m.results(outer).to_vec();
    b.ret(&r);
    lower(&mut m);
    assert_eq!(count(&m, "cf.cond_br"), 4);
}

#[test]
fn pass_is_registered() {
    let mut reg = PassRegistry::new();
    lower::register_passes(&mut reg);
    let names: Vec<&str> = reg.list().into_iter().map(|(n, _)| n).collect();
    assert!(names.contains(&"convert-scf-to-cf"));
    assert!(names.contains(&"lower-to-llvm-ready"));
}
