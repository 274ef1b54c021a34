//! Random straight-line buffer programs: after the pipeline they must
//! verify and run without leaks, double frees or uses after free, for both
//! values of the select condition. Also checks the checker itself.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

mod common;

use common::interp::{Interp, Val};
use common::*;
use ir::{Builder, Module, Type, ValueId};

fn program(seed: u64) -> Module {
    let mut rng = Rng(seed);
    let mut m = Module::new();
    global(&mut m, "g", vec_ty(4));
    // @mk(%x) -> (fresh, %x): results are caller-owned after the pass.
    let (_, e) = func(&mut m, "mk", vec![vec_ty(4)], vec![vec_ty(4), vec_ty(4)]);
    let mx = m.block_arg(e, 0).unwrap();
    let mut b = Builder::at_end(&mut m, e);
    let fresh = alloc(&mut b, vec_ty(4));
    add_loop(&mut b, mx, fresh, 4, 3.0);
    b.ret(&[fresh, mx]);
    let nres = rng.below(4);
    let (_, entry) = func(
        &mut m,
        "f",
        vec![vec_ty(4), Type::i1()],
        vec![vec_ty(4); nres],
    );
    let (x, c) = (
        m.block_arg(entry, 0).unwrap(),
        m.block_arg(entry, 1).unwrap(),
    );
    let mut b = Builder::at_end(&mut m, entry);
    let mut pool = vec![x];
    for _ in 0..(5 + rng.below(30)) {
        match rng.below(8) {
            0 | 1 => {
                let a = alloc(&mut b, vec_ty(4));
                let src = rng.pick(&pool);
                add_loop(&mut b, src, a, 4, 1.0);
                pool.push(a);
            }
            2 => {
                let v = rng.pick(&pool);
                pool.push(same_view(&mut b, v));
            }
            3 => {
                let (p, q) = (rng.pick(&pool), rng.pick(&pool));
                pool.push(b.select(c, p, q));
            }
            4 => {
                let s = b.alloca(&vec_ty(4), &[]);
                pool.push(s);
            }
            5 => {
                pool.push(b.get_global("g", vec_ty(4)));
            }
            6 if rng.below(2) == 0 => {
                let p = rng.pick(&pool);
                pool.extend(b.call("mk", &[p], &[vec_ty(4), vec_ty(4)]));
            }
            6 => {
                let used: Vec<ValueId> = (0..1 + rng.below(3)).map(|_| rng.pick(&pool)).collect();
                b.op("test.use", &used, &[], &[]);
            }
            _ => {
                let (src, dst) = (rng.pick(&pool), rng.pick(&pool));
                let lb = b.const_index(0);
                let ub = b.const_index(2);
                let one = b.const_index(1);
                b.scf_for(lb, ub, one, &[], |b, _, _| {
                    let t = alloc(b, vec_ty(4));
                    add_loop(b, src, t, 4, 1.0);
                    add_loop(b, t, dst, 4, 1.0);
                    Vec::new()
                });
            }
        }
    }
    let results: Vec<ValueId> = (0..nres).map(|_| rng.pick(&pool)).collect();
    b.ret(&results);
    m
}

fn check_runs(m: &Module, seed: u64) {
    for cond in [0, 1] {
        let mut it = Interp::new(m);
        let x = it.arg_buffer(&[4], 1.0);
        if let Err(e) = it.run("f", vec![x, Val::I(cond)]) {
            panic!("seed {seed}, cond {cond}: {e}");
        }
    }
}

#[test]
fn random_programs_are_memory_safe() {
    let (mut retains, mut clones, mut frees) = (0, 0, 0);
    for seed in 0..400 {
        let mut m = program(seed);
        let mut only = m.clone();
        run(&mut only, "ownership-based-deallocation")
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        check_runs(&only, seed);
        run(&mut m, "dealloc-pipeline").unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        check_runs(&m, seed);
        let top = m.top();
        retains += count(&m, top, "bufferization.dealloc");
        clones += count(&m, top, "bufferization.clone");
        frees += count(&m, top, "memref.dealloc");
    }
    // The generator reaches every handover path.
    assert!(
        retains > 0 && clones > 0 && frees > 0,
        "{retains} {clones} {frees}"
    );
}

#[test]
fn the_checker_catches_leaks_and_bad_frees() {
    let mut m = Module::new();
    let (_, entry) = func(&mut m, "leak", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, entry);
    alloc(&mut b, vec_ty(4));
    b.ret(&[]);
    let (_, entry) = func(&mut m, "uaf", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, entry);
    let a = alloc(&mut b, vec_ty(4));
    b.dealloc(a);
    b.op("test.use", &[a], &[], &[]);
    b.ret(&[]);
    let (_, entry) = func(&mut m, "argfree", vec![vec_ty(4)], vec![]);
    let x = m.block_arg(entry, 0).unwrap();
    let mut b = Builder::at_end(&mut m, entry);
    b.dealloc(x);
    b.ret(&[]);
    let (_, entry) = func(&mut m, "retarg", vec![vec_ty(4)], vec![vec_ty(4)]);
    let x = m.block_arg(entry, 0).unwrap();
    Builder::at_end(&mut m, entry).ret(&[x]);

    let mut it = Interp::new(&m);
    assert!(it.run("leak", vec![]).unwrap_err().contains("leaked"));
    let mut it = Interp::new(&m);
    assert!(it
        .run("uaf", vec![])
        .unwrap_err()
        .contains("use after free"));
    let mut it = Interp::new(&m);
    let x = it.arg_buffer(&[4], 0.0);
    assert!(it.run("argfree", vec![x]).unwrap_err().contains("Arg"));
    let mut it = Interp::new(&m);
    let x = it.arg_buffer(&[4], 0.0);
    assert!(it.run("retarg", vec![x]).unwrap_err().contains("Arg"));
}
