//! Random programs with unstructured control flow: blocks passing buffers
//! to each other through `cf.br` / `cf.cond_br`, diamonds and loops from
//! back edges. After ownership-based deallocation alone and after the whole
//! pipeline they must verify and run without leaks, double frees or uses
//! after free, on several paths (condition values and loop budgets).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

mod common;

use common::interp::{Interp, Val};
use common::*;
use ir::builder::CmpI;
use ir::{BlockId, Builder, Module, Type, ValueId};

/// Random straight-line buffer ops appended to `pool`.
fn fill_block(rng: &mut Rng, b: &mut Builder<'_>, c: ValueId, pool: &mut Vec<ValueId>) {
    for _ in 0..rng.below(6) {
        match rng.below(9) {
            0 | 1 => {
                let a = alloc(b, vec_ty(4));
                let src = rng.pick(pool);
                add_loop(b, src, a, 4, 1.0);
                pool.push(a);
            }
            2 => {
                let v = rng.pick(pool);
                pool.push(same_view(b, v));
            }
            3 => {
                let (p, q) = (rng.pick(pool), rng.pick(pool));
                pool.push(b.select(c, p, q));
            }
            4 => {
                pool.push(b.alloca(&vec_ty(4), &[]));
            }
            5 => {
                let used: Vec<ValueId> = (0..1 + rng.below(3)).map(|_| rng.pick(pool)).collect();
                b.op("test.use", &used, &[], &[]);
            }
            7 | 8 => {
                // A loop carrying fresh buffers: replaced every iteration
                // (double buffering) or only swapped (loop-result rewrite).
                let src = rng.pick(pool);
                let x0 = alloc(b, vec_ty(4));
                add_loop(b, src, x0, 4, 1.0);
                let y0 = alloc(b, vec_ty(4));
                add_loop(b, x0, y0, 4, 1.0);
                let (lb, ub, one) = (b.const_index(0), b.const_index(3), b.const_index(1));
                let swap = rng.below(2) == 0;
                let lp = b.scf_for(lb, ub, one, &[x0, y0], |b, _, args| {
                    if swap {
                        b.op("test.use", args, &[], &[]);
                        vec![args[1], args[0]]
                    } else {
                        let t = alloc(b, vec_ty(4));
                        add_loop(b, args[0], t, 4, 1.0);
                        vec![t, args[1]]
                    }
                });
                pool.push(b.m.results(lp)[rng.below(2)]);
            }
            _ => {
                // An scf.if yielding one of two buffers (a fresh one on one side).
                let (p, q) = (rng.pick(pool), rng.pick(pool));
                let fresh = rng.below(2) == 0;
                let op = b.scf_if(
                    c,
                    &[vec_ty(4)],
                    &mut |ib| {
                        if !fresh {
                            return vec![p];
                        }
                        let t = alloc(ib, vec_ty(4));
                        add_loop(ib, p, t, 4, 2.0);
                        vec![t]
                    },
                    Some(&mut |_| vec![q]),
                );
                pool.push(b.m.results(op)[0]);
            }
        }
    }
}

/// `@f(%x, %c, %limit)`: blocks 0..n; block i branches forward, or back to
/// a block j <= i while its counter argument is below `%limit` (every back
/// edge increments it, so every run ends). Block arguments: the counter,
/// then 0..3 memrefs. Values visible in a block: its own and the entry's.
fn program(seed: u64) -> Module {
    let mut rng = Rng(seed);
    let mut m = Module::new();
    let nres = rng.below(3);
    let (f, entry) = func(
        &mut m,
        "f",
        vec![vec_ty(4), Type::i1(), Type::Index],
        vec![vec_ty(4); nres],
    );
    let (x, c, limit) = (
        m.block_arg(entry, 0).unwrap(),
        m.block_arg(entry, 1).unwrap(),
        m.block_arg(entry, 2).unwrap(),
    );
    let region = m.region(f, 0).unwrap();
    let n = 2 + rng.below(5);
    let mut blocks: Vec<BlockId> = vec![entry];
    for _ in 1..n {
        let mut tys = vec![Type::Index];
        tys.extend((0..rng.below(4)).map(|_| vec_ty(4)));
        blocks.push(m.append_block(region, &tys));
    }
    let mut entry_pool = vec![x];
    let zero = Builder::at_end(&mut m, entry).const_index(0);
    for i in 0..n {
        let blk = blocks[i];
        let mut b = Builder::at_end(&mut m, blk);
        let (counter, mut pool) = if i == 0 {
            (zero, entry_pool.clone())
        } else {
            let args = b.m.block_args(blk).to_vec();
            let mut pool = entry_pool.clone();
            pool.extend(args.iter().skip(1).copied());
            (args[0], pool)
        };
        fill_block(&mut rng, &mut b, c, &mut pool);
        if i == 0 {
            entry_pool = pool.clone();
        }
        if i + 1 == n {
            let results: Vec<ValueId> = (0..nres).map(|_| rng.pick(&pool)).collect();
            b.ret(&results);
            continue;
        }
        let edge = |rng: &mut Rng, b: &mut Builder<'_>, to: usize, k: ValueId| {
            let mut vals = vec![k];
            let nargs = b.m.block_args(blocks[to]).len() - 1;
            vals.extend((0..nargs).map(|_| rng.pick(&pool)));
            (blocks[to], vals)
        };
        let fwd = i + 1 + rng.below(n - i - 1);
        match rng.below(3) {
            0 => {
                let (to, args) = edge(&mut rng, &mut b, fwd, counter);
                b.br(to, &args);
            }
            1 => {
                let other = i + 1 + rng.below(n - i - 1);
                let e1 = edge(&mut rng, &mut b, fwd, counter);
                let e2 = edge(&mut rng, &mut b, other, counter);
                b.cond_br(c, (e1.0, &e1.1), (e2.0, &e2.1));
            }
            _ => {
                // A back edge to a non-entry block, taken while counter < limit.
                let back = 1 + rng.below(i.max(1));
                let one = b.const_index(1);
                let next = b.addi(counter, one);
                let go = b.cmpi(CmpI::Slt, counter, limit);
                let e1 = edge(&mut rng, &mut b, back.min(n - 1), next);
                let e2 = edge(&mut rng, &mut b, fwd, counter);
                b.cond_br(go, (e1.0, &e1.1), (e2.0, &e2.1));
            }
        }
    }
    m
}

fn text(m: &Module) -> String {
    ir::text::print_module(m, &ir::text::PrintOptions::default())
}

fn check_runs(m: &Module, seed: u64, what: &str) {
    for cond in [0, 1] {
        for limit in [0, 1, 3] {
            let mut it = Interp::new(m);
            let x = it.arg_buffer(&[4], 1.0);
            if let Err(e) = it.run("f", vec![x, Val::I(cond), Val::I(limit)]) {
                panic!(
                    "seed {seed} ({what}), cond {cond}, limit {limit}: {e}\n{}",
                    text(m)
                );
            }
        }
    }
}

#[test]
fn random_cfg_programs_are_memory_safe() {
    let (mut conditional, mut back_edges, mut doubled, mut permuted) = (0, 0, 0, 0);
    for seed in 0..300 {
        let mut m = program(seed);
        ir::verify(&m).unwrap_or_else(|e| panic!("seed {seed}: generator: {e}\n{}", text(&m)));
        let mut only = m.clone();
        run(&mut only, "ownership-based-deallocation")
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{}", text(&m)));
        check_runs(&only, seed, "ownership");
        let cx = run(&mut m, "dealloc-pipeline").unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        doubled += cx.stats.get("double-buffer.loops").copied().unwrap_or(0);
        permuted += cx
            .stats
            .get("simplify-loop-results.loops")
            .copied()
            .unwrap_or(0);
        check_runs(&m, seed, "pipeline");
        let top = m.top();
        conditional += count(&m, top, "bufferization.dealloc");
        back_edges += usize::from(count(&m, top, "arith.cmpi") > 0);
    }
    // The generator reaches flag-carrying deallocs, loops, and both loop
    // rewrites.
    assert!(
        conditional > 0 && back_edges > 0 && doubled > 0 && permuted > 0,
        "{conditional} {back_edges} {doubled} {permuted}"
    );
}
