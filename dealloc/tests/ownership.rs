//! `ownership-based-deallocation` (+ simplification): where frees go, what
//! the function boundary does, and that the result is memory safe when run.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

mod common;

use common::interp::{Interp, Val};
use common::*;
use ir::{Attribute, Builder, InsertPoint, Module, OpId, OpSpec, Type, ValueId};

const PIPELINE: &str = "dealloc-pipeline";

fn entry_of(m: &Module, f: OpId) -> ir::BlockId {
    m.entry_block(m.region(f, 0).unwrap()).unwrap()
}

/// `@chain(%x) -> buffer`: `n` buffers, each computed from the one before.
fn chain(n: usize) -> (Module, OpId) {
    let mut m = Module::new();
    let (f, entry) = func(&mut m, "chain", vec![vec_ty(4)], vec![vec_ty(4)]);
    let mut prev = m.block_arg(entry, 0).unwrap();
    let mut b = Builder::at_end(&mut m, entry);
    for _ in 0..n {
        let a = alloc(&mut b, vec_ty(4));
        add_loop(&mut b, prev, a, 4, 1.0);
        prev = a;
    }
    b.ret(&[prev]);
    (m, f)
}

#[test]
fn chain_of_200_frees_each_buffer_after_its_last_use() {
    let (mut m, f) = chain(200);
    let mut reused = m.clone();
    run(
        &mut m,
        "ownership-based-deallocation,dealloc-simplification",
    )
    .unwrap();
    let entry = entry_of(&m, f);
    assert!(max_live(&m, entry) <= 3, "peak {}", max_live(&m, entry));
    assert_eq!(count(&m, f, "memref.dealloc"), 199);
    assert_eq!(count(&m, f, "bufferization.dealloc"), 0);
    assert_eq!(count(&m, f, "bufferization.clone"), 0);
    // Each free directly follows the loop that last reads the buffer.
    for d in ops_named(&m, f, "memref.dealloc") {
        let prev = m.prev_op(d).unwrap();
        assert!(m.is(prev, "scf.for"));
        let src = m.operand(d, 0).unwrap();
        let reads = m
            .collect_ops(prev)
            .into_iter()
            .any(|o| m.is(o, "memref.load") && m.operand(o, 0) == Some(src));
        assert!(reads);
    }
    let mut it = Interp::new(&m);
    let x = it.arg_buffer(&[4], 1.0);
    let out = it.run("chain", vec![x]).unwrap();
    assert!(it.peak_heap <= 3);
    assert_eq!(it.frees, 200);
    let Val::M(_) = &out[0] else { panic!() };

    // With buffer-reuse (the full pipeline) the chain ping-pongs between
    // two buffers.
    run(&mut reused, PIPELINE).unwrap();
    assert_eq!(count(&reused, f, "memref.alloc"), 2);
    assert_eq!(count(&reused, f, "memref.dealloc"), 1);
    let mut it = Interp::new(&reused);
    let x = it.arg_buffer(&[4], 1.0);
    let out = it.run("chain", vec![x]).unwrap();
    assert!(it.peak_heap <= 2);
    let Val::M(_) = &out[0] else { panic!() };
}

#[test]
fn ownership_pass_alone_emits_bufferization_dealloc() {
    let (mut m, f) = chain(3);
    let cx = run(&mut m, "ownership-based-deallocation").unwrap();
    assert_eq!(cx.stats["ownership-based-deallocation.deallocs"], 2);
    assert_eq!(count(&m, f, "memref.dealloc"), 0);
    for d in ops_named(&m, f, "bufferization.dealloc") {
        let c = m.operand(d, 1).unwrap();
        let def = m.defining_op(c).unwrap();
        assert!(m.is(def, "arith.constant"));
        assert_eq!(m.attr(def, "value").and_then(Attribute::as_int), Some(1));
    }
    // Its output runs correctly as is.
    let mut it = Interp::new(&m);
    let x = it.arg_buffer(&[4], 0.0);
    it.run("chain", vec![x]).unwrap();
}

/// A view used after a later buffer keeps its source alive until then.
#[test]
fn views_keep_their_source_alive() {
    let mut m = Module::new();
    let (f, entry) = func(&mut m, "f", vec![vec_ty(4)], vec![]);
    let x = m.block_arg(entry, 0).unwrap();
    let mut b = Builder::at_end(&mut m, entry);
    let a = alloc(&mut b, vec_ty(4));
    add_loop(&mut b, x, a, 4, 1.0);
    let view = reshape(&mut b, a);
    let c = alloc(&mut b, vec_ty(4));
    add_loop(&mut b, a, c, 4, 1.0);
    let last = b.op("test.use", &[view, c], &[], &[]);
    b.ret(&[]);
    run(&mut m, PIPELINE).unwrap();
    let frees = ops_named(&m, f, "memref.dealloc");
    assert_eq!(frees.len(), 2);
    for d in frees {
        assert!(
            m.is_before_in_block(last, d),
            "freed before the view's last use"
        );
    }
    let mut it = Interp::new(&m);
    let xv = it.arg_buffer(&[4], 0.0);
    it.run("f", vec![xv]).unwrap();
}

/// `memref.reinterpret_cast` of a 4-vector to 2x2.
fn reshape(b: &mut Builder<'_>, v: ValueId) -> ValueId {
    let layout = ir::builder::ViewLayout {
        offsets: &[0],
        sizes: &[2, 2],
        strides: &[2, 1],
    };
    b.reinterpret_cast(v, layout, &[], &[], Type::memref(vec![2, 2], Type::f32()))
}

#[test]
fn returning_a_fresh_buffer_hands_it_over() {
    let mut m = Module::new();
    let (f, entry) = func(&mut m, "f", vec![vec_ty(4)], vec![vec_ty(4)]);
    let x = m.block_arg(entry, 0).unwrap();
    let mut b = Builder::at_end(&mut m, entry);
    let a = alloc(&mut b, vec_ty(4));
    add_loop(&mut b, x, a, 4, 2.0);
    b.ret(&[a]);
    run(&mut m, PIPELINE).unwrap();
    assert_eq!(count(&m, f, "bufferization.clone"), 0);
    assert_eq!(count(&m, f, "memref.dealloc"), 0);
    let mut it = Interp::new(&m);
    let xv = it.arg_buffer(&[4], 1.0);
    let out = it.run("f", vec![xv]).unwrap();
    assert_eq!(it.read(&out[0], &[3]).ok(), None, "the caller freed it");
}

/// Returns an argument, a global, a packed view of a fresh buffer, a stack
/// buffer: all but the view are cloned; the view is handed over (its
/// allocated pointer is the buffer's).
#[test]
fn returning_what_the_caller_cannot_own_clones() {
    let mut m = Module::new();
    global(&mut m, "g", vec_ty(4));
    let t22 = Type::memref(vec![2, 2], Type::f32());
    let (f, entry) = func(
        &mut m,
        "f",
        vec![vec_ty(4)],
        vec![vec_ty(4), vec_ty(4), t22, vec_ty(4)],
    );
    let x = m.block_arg(entry, 0).unwrap();
    let mut b = Builder::at_end(&mut m, entry);
    let g = b.get_global("g", vec_ty(4));
    let a = alloc(&mut b, vec_ty(4));
    add_loop(&mut b, x, a, 4, 1.0);
    let view = reshape(&mut b, a);
    let s = b.alloca(&vec_ty(4), &[]);
    add_loop(&mut b, x, s, 4, 5.0);
    let ret = b.ret(&[x, g, view, s]);
    run(&mut m, PIPELINE).unwrap();
    assert_eq!(count(&m, f, "bufferization.clone"), 3);
    for i in [0, 1, 3] {
        assert!(m.is(def_of(&m, ret, i).unwrap(), "bufferization.clone"));
    }
    assert_eq!(m.operand(ret, 2), Some(view));
    assert_eq!(count(&m, f, "memref.dealloc"), 0);
    let mut it = Interp::new(&m);
    let xv = it.arg_buffer(&[4], 1.0);
    let out = it.run("f", vec![xv.clone()]).unwrap();
    assert_eq!(out.len(), 4);
    assert_eq!(it.read(&xv, &[0]).unwrap(), 1.0, "the argument stays alive");
}

/// A strided view (offset 2) cannot be handed over: it is cloned and its
/// buffer freed after the clone.
#[test]
fn returning_a_strided_view_clones_it() {
    let mut m = Module::new();
    let t2 = Type::memref_strided(vec![2], Type::f32(), 2, vec![1]);
    let (f, entry) = func(&mut m, "f", vec![vec_ty(4)], vec![t2.clone()]);
    let x = m.block_arg(entry, 0).unwrap();
    let mut b = Builder::at_end(&mut m, entry);
    let a = alloc(&mut b, vec_ty(4));
    add_loop(&mut b, x, a, 4, 1.0);
    let layout = ir::builder::ViewLayout {
        offsets: &[2],
        sizes: &[2],
        strides: &[1],
    };
    let view = b.reinterpret_cast(a, layout, &[], &[], t2);
    let ret = b.ret(&[view]);
    run(&mut m, PIPELINE).unwrap();
    assert!(m.is(def_of(&m, ret, 0).unwrap(), "bufferization.clone"));
    let frees = ops_named(&m, f, "memref.dealloc");
    assert_eq!(frees.len(), 1);
    assert_eq!(m.operand(frees[0], 0), Some(a));
}

#[test]
fn returning_one_buffer_twice_clones_the_second() {
    let mut m = Module::new();
    let (f, entry) = func(&mut m, "f", vec![vec_ty(4)], vec![vec_ty(4), vec_ty(4)]);
    let x = m.block_arg(entry, 0).unwrap();
    let mut b = Builder::at_end(&mut m, entry);
    let a = alloc(&mut b, vec_ty(4));
    add_loop(&mut b, x, a, 4, 1.0);
    let ret = b.ret(&[a, a]);
    run(&mut m, PIPELINE).unwrap();
    assert_eq!(m.operand(ret, 0), Some(a));
    assert!(m.is(def_of(&m, ret, 1).unwrap(), "bufferization.clone"));
    assert_eq!(count(&m, f, "memref.dealloc"), 0);
    let mut it = Interp::new(&m);
    let xv = it.arg_buffer(&[4], 1.0);
    it.run("f", vec![xv]).unwrap();
}

/// `select(%c, a, b)` used, not returned: both candidates freed after the use.
#[test]
fn select_keeps_both_candidates_alive() {
    let mut m = Module::new();
    let (f, entry) = func(&mut m, "f", vec![vec_ty(4), Type::i1()], vec![]);
    let (x, c) = (
        m.block_arg(entry, 0).unwrap(),
        m.block_arg(entry, 1).unwrap(),
    );
    let mut b = Builder::at_end(&mut m, entry);
    let a = alloc(&mut b, vec_ty(4));
    add_loop(&mut b, x, a, 4, 1.0);
    let a2 = alloc(&mut b, vec_ty(4));
    add_loop(&mut b, x, a2, 4, 2.0);
    let s = b.select(c, a, a2);
    let d = alloc(&mut b, vec_ty(4));
    add_loop(&mut b, s, d, 4, 1.0);
    b.ret(&[]);
    run(&mut m, PIPELINE).unwrap();
    let frees = ops_named(&m, f, "memref.dealloc");
    assert_eq!(frees.len(), 3);
    let last_read = ops_named(&m, f, "scf.for")[2];
    for fr in frees {
        assert!(m.is_before_in_block(last_read, fr));
    }
    for cond in [0, 1] {
        let mut it = Interp::new(&m);
        let xv = it.arg_buffer(&[4], 1.0);
        it.run("f", vec![xv, Val::I(cond)]).unwrap();
        assert_eq!(it.frees, 3);
    }
}

/// Returning `select(%c, a, b)` of two owned buffers: the dealloc retains
/// it, and the candidate not returned is freed at run time.
#[test]
fn returned_select_is_retained_not_cloned() {
    let mut m = Module::new();
    let (f, entry) = func(&mut m, "f", vec![vec_ty(4), Type::i1()], vec![vec_ty(4)]);
    let (x, c) = (
        m.block_arg(entry, 0).unwrap(),
        m.block_arg(entry, 1).unwrap(),
    );
    let mut b = Builder::at_end(&mut m, entry);
    let a = alloc(&mut b, vec_ty(4));
    add_loop(&mut b, x, a, 4, 1.0);
    let a2 = alloc(&mut b, vec_ty(4));
    add_loop(&mut b, x, a2, 4, 2.0);
    let s = b.select(c, a, a2);
    b.ret(&[s]);

    let mut only = m.clone();
    run(&mut only, "ownership-based-deallocation").unwrap();
    let d = ops_named(&only, f, "bufferization.dealloc");
    assert_eq!(d.len(), 1);
    assert_eq!(
        ir::dialects::bufferization::dealloc_groups(&only, d[0]),
        Some((2, 2, 1))
    );

    run(&mut m, PIPELINE).unwrap();
    assert_eq!(count(&m, f, "bufferization.clone"), 0);
    // Split into one dealloc per buffer, each retaining the select.
    let d = ops_named(&m, f, "bufferization.dealloc");
    assert_eq!(d.len(), 2);
    for op in d {
        assert_eq!(
            ir::dialects::bufferization::dealloc_groups(&m, op),
            Some((1, 1, 1))
        );
    }
    for cond in [0, 1] {
        for mm in [&only, &m] {
            let mut it = Interp::new(mm);
            let xv = it.arg_buffer(&[4], 1.0);
            let out = it.run("f", vec![xv, Val::I(cond)]).unwrap();
            assert_eq!(out.len(), 1);
            assert_eq!(it.frees, 2);
        }
    }
}

/// `select(%c, fresh, %arg)` returned: not provably owned, so cloned.
#[test]
fn returned_select_with_an_argument_is_cloned() {
    let mut m = Module::new();
    let (f, entry) = func(&mut m, "f", vec![vec_ty(4), Type::i1()], vec![vec_ty(4)]);
    let (x, c) = (
        m.block_arg(entry, 0).unwrap(),
        m.block_arg(entry, 1).unwrap(),
    );
    let mut b = Builder::at_end(&mut m, entry);
    let a = alloc(&mut b, vec_ty(4));
    add_loop(&mut b, x, a, 4, 1.0);
    let s = b.select(c, a, x);
    b.ret(&[s]);
    run(&mut m, PIPELINE).unwrap();
    assert_eq!(count(&m, f, "bufferization.clone"), 1);
    assert_eq!(count(&m, f, "memref.dealloc"), 1);
    for cond in [0, 1] {
        let mut it = Interp::new(&m);
        let xv = it.arg_buffer(&[4], 1.0);
        it.run("f", vec![xv, Val::I(cond)]).unwrap();
    }
}

/// Buffers allocated in a loop body are freed in the body, each iteration.
#[test]
fn buffers_in_loop_bodies_are_freed_there() {
    let mut m = Module::new();
    let (f, entry) = func(&mut m, "f", vec![vec_ty(4)], vec![]);
    let x = m.block_arg(entry, 0).unwrap();
    let mut b = Builder::at_end(&mut m, entry);
    let lb = b.const_index(0);
    let ub = b.const_index(10);
    let one = b.const_index(1);
    let outer = alloc(&mut b, vec_ty(4));
    b.scf_for(lb, ub, one, &[], |b, _, _| {
        let t = alloc(b, vec_ty(4));
        add_loop(b, x, t, 4, 1.0);
        add_loop(b, t, outer, 4, 1.0);
        Vec::new()
    });
    b.ret(&[]);
    let mut hoisted = m.clone();
    run(
        &mut m,
        "ownership-based-deallocation,dealloc-simplification",
    )
    .unwrap();
    let frees = ops_named(&m, f, "memref.dealloc");
    assert_eq!(frees.len(), 2);
    let in_loop = frees
        .iter()
        .filter(|&&d| m.is(m.parent_op(d).unwrap(), "scf.for"))
        .count();
    assert_eq!(in_loop, 1);
    let mut it = Interp::new(&m);
    let xv = it.arg_buffer(&[4], 1.0);
    it.run("f", vec![xv]).unwrap();
    assert_eq!(it.frees, 11);
    assert_eq!(it.peak_heap, 2);

    // The full pipeline hoists the loop-invariant buffer out of the loop.
    run(&mut hoisted, PIPELINE).unwrap();
    let frees = ops_named(&hoisted, f, "memref.dealloc");
    assert!(frees.iter().all(|&d| hoisted.parent_op(d) == Some(f)));
    let mut it = Interp::new(&hoisted);
    let xv = it.arg_buffer(&[4], 1.0);
    it.run("f", vec![xv]).unwrap();
    assert_eq!(it.frees, 2);
    assert_eq!(it.peak_heap, 2);
}

/// A buffer only used deep inside nested loops dies after the outer loop.
#[test]
fn nested_uses_count_as_uses_by_the_outer_op() {
    let mut m = Module::new();
    let (f, entry) = func(&mut m, "f", vec![vec_ty(4)], vec![]);
    let x = m.block_arg(entry, 0).unwrap();
    let mut b = Builder::at_end(&mut m, entry);
    let a = alloc(&mut b, vec_ty(4));
    let lb = b.const_index(0);
    let ub = b.const_index(3);
    let one = b.const_index(1);
    let outer = b.scf_for(lb, ub, one, &[], |b, _, _| {
        b.scf_for(lb, ub, one, &[], |b, _, _| {
            add_loop(b, x, a, 4, 1.0);
            Vec::new()
        });
        Vec::new()
    });
    b.ret(&[]);
    run(&mut m, PIPELINE).unwrap();
    let frees = ops_named(&m, f, "memref.dealloc");
    assert_eq!(frees.len(), 1);
    assert_eq!(m.prev_op(frees[0]), Some(outer));
}

#[test]
fn unused_buffers_die_at_once() {
    let mut m = Module::new();
    let (f, entry) = func(&mut m, "f", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, entry);
    let a = alloc(&mut b, vec_ty(4));
    b.ret(&[]);
    run(&mut m, PIPELINE).unwrap();
    let frees = ops_named(&m, f, "memref.dealloc");
    assert_eq!(frees.len(), 1);
    assert_eq!(m.prev_op(frees[0]), m.defining_op(a));
}

#[test]
fn realloc_consumes_its_source() {
    let mut m = Module::new();
    let (f, entry) = func(&mut m, "f", vec![vec_ty(4)], vec![]);
    let x = m.block_arg(entry, 0).unwrap();
    let mut b = Builder::at_end(&mut m, entry);
    let a = alloc(&mut b, vec_ty(4));
    add_loop(&mut b, x, a, 4, 1.0);
    let r = b.realloc(a, None, vec_ty(8));
    add_loop(&mut b, x, r, 4, 1.0);
    b.ret(&[]);
    let mut bad = m.clone();
    run(&mut m, PIPELINE).unwrap();
    let frees = ops_named(&m, f, "memref.dealloc");
    assert_eq!(frees.len(), 1);
    assert_eq!(m.operand(frees[0], 0), Some(r));
    let mut it = Interp::new(&m);
    let xv = it.arg_buffer(&[4], 1.0);
    it.run("f", vec![xv]).unwrap();

    // Using the source after the realloc is an error.
    let ret = m_last(&bad, f);
    Builder::new(&mut bad, InsertPoint::Before(ret)).op("test.use", &[a], &[], &[]);
    let err = run(&mut bad, PIPELINE).unwrap_err();
    assert_eq!(err.op.as_deref(), Some("memref.realloc"));
    assert!(err.message.contains("used after the realloc"), "{err}");
}

fn m_last(m: &Module, f: OpId) -> OpId {
    m.last_op(entry_of(m, f)).unwrap()
}

#[test]
fn manual_deallocations_are_left_alone() {
    let mut m = Module::new();
    let manual = (dealloc::MANUAL_DEALLOCATION, Attribute::Unit);
    let (f, entry) = func(&mut m, "f", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, entry);
    let a = b.op1(
        "memref.alloc",
        &[],
        vec_ty(4),
        std::slice::from_ref(&manual),
    );
    b.op("memref.dealloc", &[a], &[], std::slice::from_ref(&manual));
    b.ret(&[]);
    run(&mut m, PIPELINE).unwrap();
    assert_eq!(count(&m, f, "memref.dealloc"), 1);

    // An unmarked dealloc, or a marked one freeing a managed buffer: errors.
    for attrs in [vec![], vec![manual]] {
        let mut m = Module::new();
        let (_, entry) = func(&mut m, "f", vec![], vec![]);
        let mut b = Builder::at_end(&mut m, entry);
        let a = alloc(&mut b, vec_ty(4));
        b.op("memref.dealloc", &[a], &[], &attrs);
        b.ret(&[]);
        let err = run(&mut m, PIPELINE).unwrap_err();
        assert_eq!(err.op.as_deref(), Some("memref.dealloc"));
    }
}

/// Runs `@f` in the memory-checking interpreter: no leak, no double free.
fn check_runs(m: &Module, args: Vec<Val>) {
    let mut it = Interp::new(m);
    it.run("f", args).unwrap();
}

/// Memrefs carried by scf.for / yielded by scf.if get ownership flags.
#[test]
fn structured_memref_results_get_ownership_flags() {
    // scf.for carrying a memref.
    let mut m = Module::new();
    let (_, entry) = func(&mut m, "f", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, entry);
    let a = alloc(&mut b, vec_ty(4));
    let lb = b.const_index(0);
    let one = b.const_index(1);
    b.scf_for(lb, one, one, &[a], |_, _, args| args.to_vec());
    b.ret(&[]);
    run(&mut m, PIPELINE).unwrap();
    check_runs(&m, vec![]);

    // scf.if yielding a memref.
    let mut m = Module::new();
    let (_, entry) = func(&mut m, "f", vec![Type::i1()], vec![]);
    let c = m.block_arg(entry, 0).unwrap();
    let mut b = Builder::at_end(&mut m, entry);
    let a = alloc(&mut b, vec_ty(4));
    b.scf_if(c, &[vec_ty(4)], &mut |_| vec![a], Some(&mut |_| vec![a]));
    b.ret(&[]);
    run(&mut m, PIPELINE).unwrap();
    check_runs(&m, vec![Val::I(1)]);
    check_runs(&m, vec![Val::I(0)]);

    // Both branches yield the same buffer with a false flag: the flag
    // folds and one plain free remains.
    assert_eq!(count(&m, m.top(), "bufferization.dealloc"), 0);
    assert_eq!(count(&m, m.top(), "memref.dealloc"), 1);
}

/// The shapes the pass rejects, each with a diagnostic naming the op.
#[test]
fn unsupported_shapes_are_diagnosed() {
    fn expect_err(m: &mut Module, op: &str, text: &str) {
        let err = run(m, PIPELINE).unwrap_err();
        assert_eq!(err.op.as_deref(), Some(op), "{err}");
        assert!(err.message.contains(text), "{err}");
    }

    // A call to an external function returning a memref: who frees it?
    let mut m = Module::new();
    let body = m.body();
    let fty = Type::function(vec![], vec![vec_ty(4)]);
    Builder::at_end(&mut m, body).create(
        "func.func",
        OpSpec {
            attrs: vec![
                (ir::Sym::new("sym_name"), Attribute::string("ext")),
                (ir::Sym::new("sym_visibility"), Attribute::string("private")),
                (ir::Sym::new("function_type"), Attribute::Type(fty)),
            ],
            regions: 1,
            ..OpSpec::default()
        },
    );
    let (_, entry) = func(&mut m, "f", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, entry);
    b.call("ext", &[], &[vec_ty(4)]);
    b.ret(&[]);
    expect_err(
        &mut m,
        "func.call",
        "only supported for functions defined in this module",
    );

    // An op of unknown ownership producing a memref.
    let mut m = Module::new();
    let (_, entry) = func(&mut m, "f", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, entry);
    b.op1("test.make", &[], vec_ty(4), &[]);
    b.ret(&[]);
    expect_err(&mut m, "test.make", "ownership is unknown");

    // Running the pass twice.
    let (mut m, _) = chain(2);
    run(&mut m, "ownership-based-deallocation").unwrap();
    expect_err(&mut m, "bufferization.dealloc", "already deallocated");
}

#[test]
fn functions_without_buffers_are_untouched() {
    let mut m = Module::new();
    let (f, entry) = func(&mut m, "f", vec![Type::Index], vec![Type::Index]);
    let x = m.block_arg(entry, 0).unwrap();
    Builder::at_end(&mut m, entry).ret(&[x]);
    let before = m.num_ops();
    run(&mut m, PIPELINE).unwrap();
    assert_eq!(m.num_ops(), before);
    assert_eq!(count(&m, f, "arith.constant"), 0);
}

/// Results of calls to functions of the module are fresh and caller-owned:
/// freed after their last use, or handed over when returned.
#[test]
fn call_results_are_owned_by_the_caller() {
    let mut m = Module::new();
    let (_, e) = func(&mut m, "make", vec![vec_ty(4)], vec![vec_ty(4), vec_ty(4)]);
    let x = m.block_arg(e, 0).unwrap();
    let mut b = Builder::at_end(&mut m, e);
    let a = alloc(&mut b, vec_ty(4));
    add_loop(&mut b, x, a, 4, 1.0);
    b.ret(&[a, x]);
    let (f, entry) = func(&mut m, "f", vec![vec_ty(4)], vec![vec_ty(4)]);
    let x = m.block_arg(entry, 0).unwrap();
    let mut b = Builder::at_end(&mut m, entry);
    let res = b.call("make", &[x], &[vec_ty(4), vec_ty(4)]);
    let (r0, r1) = (res[0], res[1]);
    let c = alloc(&mut b, vec_ty(4));
    add_loop(&mut b, r0, c, 4, 1.0);
    let last = b.op("test.use", &[r1], &[], &[]);
    let ret = b.ret(&[c]);
    run(&mut m, PIPELINE).unwrap();
    assert_eq!(m.operand(ret, 0), Some(c));
    let frees = ops_named(&m, f, "memref.dealloc");
    assert_eq!(frees.len(), 2);
    assert!(m.is_before_in_block(last, frees[1]));
    let mut it = Interp::new(&m);
    let xv = it.arg_buffer(&[4], 1.0);
    let out = it.run("f", vec![xv]).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(it.frees, 3);
}

/// Memrefs crossing blocks (more in `random_cfg.rs` and the cf filetests).
#[test]
fn memrefs_cross_blocks() {
    // A branch passing a memref to another block.
    let mut m = Module::new();
    let (f, entry) = func(&mut m, "f", vec![], vec![]);
    let r = m.region(f, 0).unwrap();
    let bb1 = m.append_block(r, &[vec_ty(4)]);
    let mut b = Builder::at_end(&mut m, entry);
    let a = alloc(&mut b, vec_ty(4));
    b.br(bb1, &[a]);
    Builder::at_end(&mut m, bb1).ret(&[]);
    run(&mut m, PIPELINE).unwrap();
    check_runs(&m, vec![]);

    // Several blocks, memrefs not crossing them.
    let mut m = Module::new();
    let (f, entry) = func(&mut m, "f", vec![], vec![]);
    let r = m.region(f, 0).unwrap();
    let bb1 = m.append_block(r, &[]);
    let mut b = Builder::at_end(&mut m, entry);
    alloc(&mut b, vec_ty(4));
    b.br(bb1, &[]);
    Builder::at_end(&mut m, bb1).ret(&[]);
    run(&mut m, PIPELINE).unwrap();
    check_runs(&m, vec![]);
}
