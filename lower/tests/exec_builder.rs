//! End-to-end programs built with `ir::Builder`: lowered, emitted, built
//! with clang -O2, run (and run under valgrind).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use ir::builder::{CmpF, CmpI};
use ir::{Builder, Module, Type};
#[test]
fn matrix_fill_and_sum() {
    let mut m = Module::new();
    declare_prints(&mut m);
    let (_, e) = func(&mut m, "main", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, e);
    let a = b.alloc(&memref(&[3, 4], Type::i64()), &[]);
    let (n3, n4, ten) = (b.const_index(3), b.const_index(4), b.const_index(10));
    let (c0, c1) = (b.const_index(0), b.const_index(1));
    b.scf_for(c0, n3, c1, &[], |b, i, _| {
        let (c0, c1) = (b.const_index(0), b.const_index(1));
        b.scf_for(c0, n4, c1, &[], |b, j, _| {
            let t = b.muli(i, ten);
            let v = b.addi(t, j);
            let v = b.index_cast(v, Type::i64());
            b.store(v, a, &[i, j]);
            vec![]
        });
        vec![]
    });
    let zero = b.const_int(0, Type::i64());
    let (c0, c1) = (b.const_index(0), b.const_index(1));
    let lp = b.scf_for(c0, n3, c1, &[zero], |b, i, acc| {
        let (c0, c1) = (b.const_index(0), b.const_index(1));
        let lp = b.scf_for(c0, n4, c1, &[acc[0]], |b, j, acc| {
            let v = b.load(a, &[i, j]);
            vec![b.addi(acc[0], v)]
        });
        b.m.results(lp).to_vec()
    });
    let sum = b.m.results(lp).to_vec();
    b.print_i64(sum[0]);
    b.dealloc(a);
    b.ret(&[]);
    assert_eq!(execute("matrix_fill_and_sum", &mut m, 0), "138\n");
}

fn f32_of(b: &mut ir::Builder<'_>, v: f64) -> ir::ValueId {
    b.const_float(v, Type::f32())
}

#[test]
fn matmul_4x4_f32() {
    let mut m = Module::new();
    declare_prints(&mut m);
    let (_, e) = func(&mut m, "main", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, e);
    let t = memref(&[4, 4], Type::f32());
    let (a, bm, c) = (
        b.alloc(&t.clone(), &[]),
        b.alloc(&t.clone(), &[]),
        b.alloc(&t, &[]),
    );
    let n = b.const_index(4);
    let (c0, c1) = (b.const_index(0), b.const_index(1));
    b.scf_for(c0, n, c1, &[], |b, i, _| {
        let (c0, c1) = (b.const_index(0), b.const_index(1));
        b.scf_for(c0, n, c1, &[], |b, j, _| {
            let s = b.addi(i, j);
            let d = b.subi(i, j);
            let s = b.index_cast(s, Type::i(32));
            let d = b.index_cast(d, Type::i(32));
            let s = b.sitofp(s, Type::f32());
            let d = b.sitofp(d, Type::f32());
            b.store(s, a, &[i, j]);
            b.store(d, bm, &[i, j]);
            vec![]
        });
        vec![]
    });
    let zero = f32_of(&mut b, 0.0);
    let (c0, c1) = (b.const_index(0), b.const_index(1));
    b.scf_for(c0, n, c1, &[], |b, i, _| {
        let (c0, c1) = (b.const_index(0), b.const_index(1));
        b.scf_for(c0, n, c1, &[], |b, j, _| {
            let (c0, c1) = (b.const_index(0), b.const_index(1));
            let lp = b.scf_for(c0, n, c1, &[zero], |b, k, acc| {
                let x = b.load(a, &[i, k]);
                let y = b.load(bm, &[k, j]);
                let p = b.mulf(x, y);
                vec![b.addf(acc[0], p)]
            });
            let r = b.m.results(lp).to_vec();
            b.store(r[0], c, &[i, j]);
            vec![]
        });
        vec![]
    });
    let (c0, c1) = (b.const_index(0), b.const_index(1));
    let lp = b.scf_for(c0, n, c1, &[zero], |b, i, acc| {
        let (c0, c1) = (b.const_index(0), b.const_index(1));
        let lp = b.scf_for(c0, n, c1, &[acc[0]], |b, j, acc| {
            let v = b.load(c, &[i, j]);
            vec![b.addf(acc[0], v)]
        });
        b.m.results(lp).to_vec()
    });
    let total = b.m.results(lp).to_vec();
    let c12 = {
        let (one, two) = (b.const_index(1), b.const_index(2));
        b.load(c, &[one, two])
    };
    for v in [total[0], c12] {
        let w = b.extf(v, Type::f64());
        b.print_f64(w);
    }
    for x in [a, bm, c] {
        b.dealloc(x);
    }
    b.ret(&[]);
    // Reference in Rust.
    let mut cm = [[0f32; 4]; 4];
    for (i, row) in cm.iter_mut().enumerate() {
        for (j, out) in row.iter_mut().enumerate() {
            *out = (0..4)
                .map(|k| ((i + k) as f32) * (k as f32 - j as f32))
                .sum();
        }
    }
    let total: f32 = cm.iter().flatten().sum();
    let want = format!("{}\n{}\n", total, cm[1][2]);
    assert_eq!(execute("matmul_4x4_f32", &mut m, 0), want);
}

#[test]
fn iter_args_f32_and_i64_with_if_in_loop() {
    let mut m = Module::new();
    declare_prints(&mut m);
    let (_, e) = func(&mut m, "main", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, e);
    let n = b.const_index(10);
    let (zf, zi) = (f32_of(&mut b, 0.0), b.const_int(0, Type::i64()));
    let half = f32_of(&mut b, 0.5);
    // Σ 0.5·i in f32, Σ (i even ? i² : -i) in i64, count of evens.
    let (c0, c1) = (b.const_index(0), b.const_index(1));
    let lp = b.scf_for(c0, n, c1, &[zf, zi, zi], |b, i, acc| {
        let (af, ai, cnt) = (acc[0], acc[1], acc[2]);
        let ii = b.index_cast(i, Type::i64());
        let fi = b.sitofp(ii, Type::f32());
        let h = b.mulf(fi, half);
        let af = b.addf(af, h);
        let two = b.const_int(2, Type::i64());
        let rem = b.remsi(ii, two);
        let z = b.const_int(0, Type::i64());
        let even = b.cmpi(CmpI::Eq, rem, z);
        let r = b.scf_if(
            even,
            &[Type::i64(), Type::i64()],
            &mut |b| {
                let sq = b.muli(ii, ii);
                let one = b.const_int(1, Type::i64());
                vec![b.addi(ai, sq), b.addi(cnt, one)]
            },
            Some(&mut |b| vec![b.subi(ai, ii), cnt]),
        );
        let r = b.m.results(r);
        vec![af, r[0], r[1]]
    });
    let r = b.m.results(lp).to_vec();
    let w = b.extf(r[0], Type::f64());
    b.print_f64(w);
    b.print_i64(r[1]);
    b.print_i64(r[2]);
    b.ret(&[]);
    let want_i: i64 = (0..10i64)
        .map(|i| if i % 2 == 0 { i * i } else { -i })
        .sum();
    assert_eq!(
        execute("iter_args", &mut m, 0),
        format!("22.5\n{want_i}\n5\n")
    );
}

#[test]
fn while_collatz_steps() {
    let mut m = Module::new();
    declare_prints(&mut m);
    let (_, e) = func(&mut m, "main", vec![], vec![Type::i(32)]);
    let mut b = Builder::at_end(&mut m, e);
    let start = b.const_int(27, Type::i64());
    let zero = b.const_int(0, Type::i64());
    let r = b.scf_while(
        &[start, zero],
        &mut |b, a| {
            let one = b.const_int(1, Type::i64());
            (b.cmpi(CmpI::Ne, a[0], one), vec![a[0], a[1]])
        },
        &mut |b, a| {
            let (x, steps) = (a[0], a[1]);
            let one = b.const_int(1, Type::i64());
            let two = b.const_int(2, Type::i64());
            let three = b.const_int(3, Type::i64());
            let bit = b.andi(x, one);
            let odd = b.cmpi(CmpI::Eq, bit, one);
            let up = b.muli(x, three);
            let up = b.addi(up, one);
            let down = b.divui(x, two);
            let next = b.select(odd, up, down);
            vec![next, b.addi(steps, one)]
        },
    );
    let r = b.m.results(r).to_vec();
    b.print_i64(r[1]);
    let code = b.trunci(r[1], Type::i(32));
    b.ret(&[code]);
    assert_eq!(execute("collatz", &mut m, 111), "111\n");
}

#[test]
fn dynamic_alloc_with_dim_and_calls_returning_memrefs() {
    let mut m = Module::new();
    declare_prints(&mut m);
    let dyn1 = memref(&[ir::DYN], Type::i64());
    // @make(n) -> (memref<?xi64>, index): m[i] = 3i + 1, and n * 2.
    let (_, e) = func(
        &mut m,
        "make",
        vec![Type::Index],
        vec![dyn1.clone(), Type::Index],
    );
    let mut b = Builder::at_end(&mut m, e);
    let n = b.m.block_args(e)[0];
    let buf = b.alloc(&dyn1.clone(), &[n]);
    let (c0, c1) = (b.const_index(0), b.const_index(1));
    b.scf_for(c0, n, c1, &[], |b, i, _| {
        let (three, one) = (b.const_index(3), b.const_index(1));
        let v = b.muli(i, three);
        let v = b.addi(v, one);
        let v = b.index_cast(v, Type::i64());
        b.store(v, buf, &[i]);
        vec![]
    });
    let two = b.const_index(2);
    let n2 = b.muli(n, two);
    b.ret(&[buf, n2]);
    // @sum(m) -> i64 using memref.dim.
    let (_, e) = func(&mut m, "sum", vec![dyn1.clone()], vec![Type::i64()]);
    let mut b = Builder::at_end(&mut m, e);
    let buf = b.m.block_args(e)[0];
    let z = b.const_index(0);
    let len = b.dim_at(buf, z);
    let zi = b.const_int(0, Type::i64());
    let (c0, c1) = (b.const_index(0), b.const_index(1));
    let lp = b.scf_for(c0, len, c1, &[zi], |b, i, acc| {
        let v = b.load(buf, &[i]);
        vec![b.addi(acc[0], v)]
    });
    let r = b.m.results(lp).to_vec();
    b.ret(&[r[0]]);
    let (_, e) = func(&mut m, "main", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, e);
    let n = b.const_index(37);
    let made = b.call("make", &[n], &[dyn1.clone(), Type::Index]);
    let s = b.call("sum", &[made[0]], &[Type::i64()]);
    b.print_i64(s[0]);
    let n2 = b.index_cast(made[1], Type::i64());
    b.print_i64(n2);
    // A dynamic dim index through a select chain on a 2-D memref.
    let (k1, k5) = (b.const_index(1), b.const_index(5));
    let two_d = b.alloc(&memref(&[3, ir::DYN], Type::f32()), &[k5]);
    let d1 = b.dim_at(two_d, k1);
    let d1 = b.index_cast(d1, Type::i64());
    b.print_i64(d1);
    b.dealloc(two_d);
    b.dealloc(made[0]);
    b.ret(&[]);
    let want: i64 = (0..37).map(|i| 3 * i + 1).sum();
    assert_eq!(
        execute("dyn_alloc_calls", &mut m, 0),
        format!("{want}\n74\n5\n")
    );
}

#[test]
fn math_functions_and_casts() {
    let mut m = Module::new();
    declare_prints(&mut m);
    let (_, e) = func(&mut m, "main", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, e);
    let mut outs = Vec::new();
    for ty in [
        Type::f64(),
        Type::f32(),
        Type::Float(ir::FloatKind::F16),
        Type::Float(ir::FloatKind::BF16),
    ] {
        let one = b.const_float(1.0, ty.clone());
        let half = b.const_float(0.5, ty.clone());
        let two = b.const_float(2.0, ty.clone());
        let vals = [
            b.exp(one),
            b.tanh(half),
            b.erf(half),
            b.sqrt(two),
            b.rsqrt(two),
            b.powf(two, two),
            b.log1p(one),
        ];
        for v in vals {
            outs.push(if ty == Type::f64() {
                v
            } else {
                b.extf(v, Type::f64())
            });
        }
    }
    for v in outs {
        b.call("printF64", &[v], &[]);
        b.call("printComma", &[], &[]);
    }
    b.newline();
    // Integer ops and casts.
    let i64t = Type::i64();
    let (m7, p7, p2, m2) = (
        b.const_int(-7, i64t.clone()),
        b.const_int(7, i64t.clone()),
        b.const_int(2, i64t.clone()),
        b.const_int(-2, i64t.clone()),
    );
    let mut ints = vec![
        b.ceildivsi(m7, p2),
        b.floordivsi(m7, p2),
        b.ceildivsi(p7, m2),
        b.floordivsi(p7, m2),
        b.ceildivsi(p7, p2),
        b.floordivsi(p7, p2),
        b.ceildivui(p7, p2),
        b.remsi(m7, p2),
        b.maxsi(m7, p2),
        b.minui(m7, p2),
        b.shrsi(m7, p2),
        b.absi(m7),
        b.ctlz(p7),
        b.ctpop(m7),
    ];
    let i8v = b.const_int(200, Type::i(8));
    ints.push(b.extsi(i8v, i64t.clone()));
    ints.push(b.extui(i8v, i64t.clone()));
    let big = b.const_int(0x1_0000_0005, i64t.clone());
    let t = b.trunci(big, Type::i(32));
    ints.push(b.extsi(t, i64t.clone()));
    let f = b.const_float(-3.75, Type::f32());
    ints.push(b.fptosi(f, i64t.clone()));
    let u = b.const_int(-1, Type::i(32));
    let uf = b.uitofp(u, Type::f64());
    ints.push(b.fptoui(uf, i64t.clone()));
    let fb = b.const_float(1.0, Type::f32());
    let bits = b.bitcast(fb, Type::i(32));
    ints.push(b.extui(bits, i64t.clone()));
    let nan = b.const_float(f64::NAN, Type::f32());
    let isnan = b.cmpf(CmpF::Uno, nan, nan);
    ints.push(b.extui(isnan, i64t.clone()));
    let mx = b.maximumf(nan, f);
    let mxn = b.cmpf(CmpF::Uno, mx, mx);
    ints.push(b.extui(mxn, i64t.clone()));
    let mn = b.maxnumf(nan, f);
    ints.push(b.fptosi(mn, i64t.clone()));
    for v in ints {
        b.call("printI64", &[v], &[]);
        b.call("printComma", &[], &[]);
    }
    b.newline();
    // bf16 / f16 round trips.
    let x = b.const_float(1.1, Type::f32());
    let h = b.truncf(x, Type::Float(ir::FloatKind::F16));
    let bf = b.truncf(x, Type::Float(ir::FloatKind::BF16));
    let sum = b.addf(bf, bf);
    for v in [h, bf, sum] {
        let w = b.extf(v, Type::f64());
        b.print_f64(w);
    }
    b.ret(&[]);
    declare(&mut m, "printComma", vec![], vec![]);
    let row = "2.71828, 0.462117, 0.5205, 1.41421, 0.707107, 4, 0.693147, ";
    let row16 = "2.71875, 0.462158, 0.520508, 1.41406, 0.707031, 4, 0.693359, ";
    let rowbf = "2.71875, 0.462891, 0.519531, 1.41406, 0.707031, 4, 0.691406, ";
    let want_math = format!("{row}{row}{row16}{rowbf}\n");
    let ints: [i64; 23] = [
        -3, -4, -3, -4, 4, 3, 4, -1, 2, 2, -2, 7, 61, 62, -56, 200, 5, -3, 4294967295, 1065353216,
        1, 1, -3,
    ];
    let want_ints: String = ints.iter().map(|v| format!("{v}, ")).collect();
    let out = execute("math_casts", &mut m, 0);
    assert_eq!(
        out,
        format!("{want_math}{want_ints}\n1.09961\n1.10156\n2.20312\n")
    );
}

/// Hand-written cf: a loop whose latch is a cond_br to the same block with
/// different arguments on both edges, plus a passing cf.assert.
#[test]
fn unstructured_cf_same_target_twice() {
    use ir::{OpSpec, Sym};
    let mut m = Module::new();
    declare_prints(&mut m);
    let (f, e) = func(&mut m, "main", vec![], vec![Type::i(32)]);
    let r = m.region(f, 0).unwrap();
    let head = m.append_block(r, &[Type::i64(), Type::i64()]);
    let tail = m.append_block(r, &[Type::i64(), Type::i64()]);
    let exit = m.append_block(r, &[Type::i64()]);
    let mut b = Builder::at_end(&mut m, e);
    let (z, one) = (b.const_int(0, Type::i64()), b.const_int(1, Type::i64()));
    b.create(
        "cf.br",
        OpSpec {
            successors: vec![(head, vec![z, z])],
            ..OpSpec::default()
        },
    );
    // head(i, acc): i < 10 ? tail(i, acc) : exit(acc)
    let (i, acc) = (m.block_args(head)[0], m.block_args(head)[1]);
    let mut b = Builder::at_end(&mut m, head);
    let ten = b.const_int(10, Type::i64());
    let lt = b.cmpi(CmpI::Slt, i, ten);
    b.create(
        "cf.cond_br",
        OpSpec {
            operands: vec![lt],
            successors: vec![(tail, vec![i, acc]), (exit, vec![acc])],
            ..OpSpec::default()
        },
    );
    // tail(i, acc): odd i adds 100, even adds i; both edges go to head.
    let (ti, tacc) = (m.block_args(tail)[0], m.block_args(tail)[1]);
    let mut b = Builder::at_end(&mut m, tail);
    let one2 = b.const_int(1, Type::i64());
    let bit = b.andi(ti, one2);
    let odd = b.cmpi(CmpI::Eq, bit, one2);
    let next = b.addi(ti, one);
    let hundred = b.const_int(100, Type::i64());
    let a1 = b.addi(tacc, hundred);
    let a2 = b.addi(tacc, ti);
    b.create(
        "cf.cond_br",
        OpSpec {
            operands: vec![odd],
            successors: vec![(head, vec![next, a1]), (head, vec![next, a2])],
            ..OpSpec::default()
        },
    );
    let res = m.block_args(exit)[0];
    let mut b = Builder::at_end(&mut m, exit);
    let pos = b.cmpi(CmpI::Sgt, res, one);
    b.create(
        "cf.assert",
        OpSpec {
            operands: vec![pos],
            attrs: vec![(
                Sym::new("msg"),
                ir::Attribute::string("result must be positive"),
            )],
            ..OpSpec::default()
        },
    );
    b.print_i64(res);
    let code = b.const_int(3, Type::i(32));
    b.ret(&[code]);
    assert_eq!(execute("cf_same_target", &mut m, 3), "520\n");
}

#[test]
fn failing_assert_aborts_with_message() {
    use ir::{OpSpec, Sym};
    let mut m = Module::new();
    let (_, e) = func(&mut m, "main", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, e);
    let f = b.const_bool(false);
    b.create(
        "cf.assert",
        OpSpec {
            operands: vec![f],
            attrs: vec![(Sym::new("msg"), ir::Attribute::string("boom \"quoted\""))],
            ..OpSpec::default()
        },
    );
    b.ret(&[]);
    let ll = lower_and_emit(&mut m);
    let r = build_and_run("assert_fail", &ll);
    assert_eq!(r.code, None, "expected an abort signal");
    assert!(
        r.stderr.contains("assertion failed: boom \"quoted\""),
        "stderr: {}",
        r.stderr
    );
}

#[test]
fn harness_catches_leaks() {
    let mut m = Module::new();
    let (_, e) = func(&mut m, "main", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, e);
    let a = b.alloc(&memref(&[100], Type::f32()), &[]);
    let (k, x) = (b.const_index(3), b.const_float(1.0, Type::f32()));
    b.store(x, a, &[k]);
    b.ret(&[]);
    let ll = lower_and_emit(&mut m);
    let caught = std::panic::catch_unwind(|| build_and_run("leaky", &ll));
    let msg = caught
        .err()
        .and_then(|e| e.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    assert!(
        msg.contains("valgrind found errors"),
        "valgrind should have reported the leak: {msg}"
    );
}

/// while inside if inside two fors, with iter_args threaded through all.
#[test]
fn nested_for_if_while() {
    let mut m = Module::new();
    declare_prints(&mut m);
    let (_, e) = func(&mut m, "main", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, e);
    let n = b.const_index(12);
    let z = b.const_index(0);
    let (c0, c1) = (b.const_index(0), b.const_index(1));
    let lp = b.scf_for(c0, n, c1, &[z], |b, i, acc| {
        let acc0 = acc[0];
        let (c0, c1) = (b.const_index(0), b.const_index(1));
        let lp = b.scf_for(c0, i, c1, &[acc0], |b, j, acc| {
            let acc1 = acc[0];
            let two = b.const_index(2);
            let rem = b.remui(j, two);
            let one = b.const_index(1);
            let odd = b.cmpi(CmpI::Eq, rem, one);
            let r = b.scf_if(
                odd,
                &[Type::Index],
                &mut |b| {
                    let w = b.scf_while(
                        &[acc1],
                        &mut |b, a| {
                            let lim = b.const_index(1000);
                            (b.cmpi(CmpI::Slt, a[0], lim), vec![a[0]])
                        },
                        &mut |b, a| {
                            let seven = b.const_index(7);
                            vec![b.addi(a[0], seven)]
                        },
                    );
                    b.m.results(w).to_vec()
                },
                Some(&mut |b| {
                    let t = b.muli(i, j);
                    vec![b.addi(acc1, t)]
                }),
            );
            b.m.results(r).to_vec()
        });
        b.m.results(lp).to_vec()
    });
    let r = b.m.results(lp).to_vec();
    let v = b.index_cast(r[0], Type::i64());
    b.print_i64(v);
    b.ret(&[]);
    let mut acc: i64 = 0;
    for i in 0..12i64 {
        for j in 0..i {
            if j % 2 == 1 {
                while acc < 1000 {
                    acc += 7;
                }
            } else {
                acc += i * j;
            }
        }
    }
    assert_eq!(execute("nested_mix", &mut m, 0), format!("{acc}\n"));
}

/// alloca, i1 and f16 element types, an i32 induction variable.
#[test]
fn alloca_small_types_and_i32_loop() {
    let mut m = Module::new();
    declare_prints(&mut m);
    let (_, e) = func(&mut m, "main", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, e);
    let flags = b.alloca(&memref(&[16], Type::i1()), &[]);
    let halves = b.alloca(&memref(&[16], Type::Float(ir::FloatKind::F16)), &[]);
    let (lo, hi, st) = (
        b.const_int(0, Type::i(32)),
        b.const_int(16, Type::i(32)),
        b.const_int(1, Type::i(32)),
    );
    let op = b.scf_for(lo, hi, st, &[], |b, i, _| {
        let three = b.const_int(3, Type::i(32));
        let r = b.remsi(i, three);
        let z = b.const_int(0, Type::i(32));
        let is0 = b.cmpi(CmpI::Eq, r, z);
        let ix = b.index_cast(i, Type::Index);
        b.store(is0, flags, &[ix]);
        let f = b.sitofp(i, Type::Float(ir::FloatKind::F16));
        let q = b.const_float(0.25, Type::Float(ir::FloatKind::F16));
        let f = b.mulf(f, q);
        b.store(f, halves, &[ix]);
        vec![]
    });
    let _ = op;
    let n = b.const_index(16);
    let zi = b.const_int(0, Type::i64());
    let zf = b.const_float(0.0, Type::f32());
    let (c0, c1) = (b.const_index(0), b.const_index(1));
    let lp = b.scf_for(c0, n, c1, &[zi, zf], |b, i, acc| {
        let f = b.load(flags, &[i]);
        let f = b.extui(f, Type::i64());
        let h = b.load(halves, &[i]);
        let h = b.extf(h, Type::f32());
        vec![b.addi(acc[0], f), b.addf(acc[1], h)]
    });
    let r = b.m.results(lp).to_vec();
    b.print_i64(r[0]);
    let w = b.extf(r[1], Type::f64());
    b.print_f64(w);
    b.ret(&[]);
    // multiples of 3 below 16: 6; Σ i/4 for i < 16 = 30.
    assert_eq!(execute("small_types", &mut m, 0), "6\n30\n");
}
