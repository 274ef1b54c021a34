//! End-to-end memref programs built with `ir::Builder`: views, globals,
//! realloc, copies; lowered, emitted, built, run and valgrind-checked.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use ir::builder::CmpI;
use ir::{Builder, Module, Type};

fn arr(v: &[i64]) -> ir::Attribute {
    ir::Attribute::i64_array(v)
}

/// Sums a 1-D or 2-D i64 memref with loops over its (static) shape.
fn sum_all(b: &mut ir::Builder<'_>, x: ir::ValueId) -> ir::ValueId {
    let shape = b.m.value_type(x).shape().unwrap().to_vec();
    let zi = b.const_int(0, Type::i64());
    let n0 = b.const_index(shape[0]);
    if shape.len() == 1 {
        let (c0, c1) = (b.const_index(0), b.const_index(1));
        let lp = b.scf_for(c0, n0, c1, &[zi], |b, i, acc| {
            let v = b.load(x, &[i]);
            vec![b.addi(acc[0], v)]
        });
        return b.m.results(lp)[0];
    }
    let n1 = b.const_index(shape[1]);
    let (c0, c1) = (b.const_index(0), b.const_index(1));
    let lp = b.scf_for(c0, n0, c1, &[zi], |b, i, acc| {
        let (c0, c1) = (b.const_index(0), b.const_index(1));
        let lp = b.scf_for(c0, n1, c1, &[acc[0]], |b, j, acc| {
            let v = b.load(x, &[i, j]);
            vec![b.addi(acc[0], v)]
        });
        b.m.results(lp).to_vec()
    });
    b.m.results(lp)[0]
}

#[test]
fn views_subview_reinterpret_collapse_expand() {
    use ir::DYN;
    let mut m = Module::new();
    declare_prints(&mut m);
    let (_, e) = func(&mut m, "main", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, e);
    let i64t = Type::i64();
    let a = b.alloc(&memref(&[4, 6], i64t.clone()), &[]);
    let (n4, n6) = (b.const_index(4), b.const_index(6));
    let (c0, c1) = (b.const_index(0), b.const_index(1));
    b.scf_for(c0, n4, c1, &[], |b, i, _| {
        let (c0, c1) = (b.const_index(0), b.const_index(1));
        b.scf_for(c0, n6, c1, &[], |b, j, _| {
            let six = b.const_index(6);
            let v = b.muli(i, six);
            let v = b.addi(v, j);
            let v = b.index_cast(v, Type::i64());
            b.store(v, a, &[i, j]);
            vec![]
        });
        vec![]
    });
    let sv = |offs: &[i64], sizes: &[i64], strides: &[i64]| -> Vec<(&'static str, ir::Attribute)> {
        vec![
            ("static_offsets", arr(offs)),
            ("static_sizes", arr(sizes)),
            ("static_strides", arr(strides)),
        ]
    };
    let mut outs = Vec::new();
    // A[1:3, 2:5]
    let t = Type::memref_strided(vec![2, 3], i64t.clone(), 8, vec![6, 1]);
    let s1 = b.op1("memref.subview", &[a], t, &sv(&[1, 2], &[2, 3], &[1, 1]));
    outs.push(sum_all(&mut b, s1));
    // A[0:4:2, 1:7:3]
    let t = Type::memref_strided(vec![2, 2], i64t.clone(), 1, vec![12, 3]);
    let s2 = b.op1("memref.subview", &[a], t, &sv(&[0, 1], &[2, 2], &[2, 3]));
    outs.push(sum_all(&mut b, s2));
    // A[%1:%1+2, :], dynamic offset.
    let one = b.const_index(1);
    let t = Type::memref_strided(vec![2, 6], i64t.clone(), DYN, vec![6, 1]);
    let s3 = b.op1(
        "memref.subview",
        &[a, one],
        t,
        &sv(&[DYN, 0], &[2, 6], &[1, 1]),
    );
    outs.push(sum_all(&mut b, s3));
    // Rank-reducing: row 2.
    let t = Type::memref_strided(vec![6], i64t.clone(), 12, vec![1]);
    let s4 = b.op1("memref.subview", &[a], t, &sv(&[2, 0], &[1, 6], &[1, 1]));
    outs.push(sum_all(&mut b, s4));
    // Subview of a subview with a dynamic size: s3[0:1, 1:1+%3].
    let three = b.const_index(3);
    let t = Type::memref_strided(vec![1, DYN], i64t.clone(), DYN, vec![6, 1]);
    let s5 = b.op1(
        "memref.subview",
        &[s3, three],
        t,
        &sv(&[0, 1], &[1, DYN], &[1, 1]),
    );
    let z = b.const_index(0);
    let d = b.dim_at(s5, one);
    let zi = b.const_int(0, Type::i64());
    let (c0, c1) = (b.const_index(0), b.const_index(1));
    let lp = b.scf_for(c0, d, c1, &[zi], |b, j, acc| {
        let v = b.load(s5, &[z, j]);
        vec![b.addi(acc[0], v)]
    });
    let r = b.m.results(lp).to_vec();
    outs.push(r[0]);
    // reinterpret_cast: offset 5, 3 elements, stride 6.
    let t = Type::memref_strided(vec![3], i64t.clone(), 5, vec![6]);
    let rc = b.op1("memref.reinterpret_cast", &[a], t, &sv(&[5], &[3], &[6]));
    outs.push(sum_all(&mut b, rc));
    // collapse to 24, read [17].
    let flat = b.op1(
        "memref.collapse_shape",
        &[a],
        memref(&[24], i64t.clone()),
        &[(
            "reassociation",
            ir::Attribute::Array(vec![arr(&[0, 1])].into()),
        )],
    );
    let k17 = b.const_index(17);
    outs.push(b.load(flat, &[k17]));
    // expand back to 2x12, read [1][5].
    let ex = b.op1(
        "memref.expand_shape",
        &[flat],
        memref(&[2, 12], i64t.clone()),
        &[
            (
                "reassociation",
                ir::Attribute::Array(vec![arr(&[0, 1])].into()),
            ),
            ("static_output_shape", arr(&[2, 12])),
        ],
    );
    let k5 = b.const_index(5);
    outs.push(b.load(ex, &[one, k5]));
    // Dynamic expand: memref<?xi64> -> memref<?x4xi64> with output_shape [%6, 4].
    let dflat = b.memref_cast(flat, memref(&[DYN], i64t.clone()));
    let six = b.const_index(6);
    let dex = b.op1(
        "memref.expand_shape",
        &[dflat, six],
        memref(&[DYN, 4], i64t.clone()),
        &[
            (
                "reassociation",
                ir::Attribute::Array(vec![arr(&[0, 1])].into()),
            ),
            ("static_output_shape", arr(&[DYN, 4])),
        ],
    );
    let k3 = b.const_index(3);
    outs.push(b.load(dex, &[k5, k3]));
    // Without output_shape the dynamic size is inferred: 24 / 4.
    let dex2 = b.op1(
        "memref.expand_shape",
        &[dflat],
        memref(&[DYN, 4], i64t.clone()),
        &[(
            "reassociation",
            ir::Attribute::Array(vec![arr(&[0, 1])].into()),
        )],
    );
    let d0 = b.dim_at(dex2, z);
    outs.push(b.index_cast(d0, Type::i64()));
    // Collapse a strided subview's contiguous inner group: s2 is not
    // contiguous, so collapse A[1:3, :] (2x6, stride 6) to 12.
    let t = Type::memref_strided(vec![2, 6], i64t.clone(), 6, vec![6, 1]);
    let rows = b.op1("memref.subview", &[a], t, &sv(&[1, 0], &[2, 6], &[1, 1]));
    let t = Type::memref_strided(vec![12], i64t.clone(), 6, vec![1]);
    let rflat = b.op1(
        "memref.collapse_shape",
        &[rows],
        t,
        &[(
            "reassociation",
            ir::Attribute::Array(vec![arr(&[0, 1])].into()),
        )],
    );
    outs.push(sum_all(&mut b, rflat));
    for v in outs {
        b.print_i64(v);
    }
    b.dealloc(a);
    b.ret(&[]);
    let want = [
        72,
        34,
        138,
        87,
        7 + 8 + 9,
        5 + 11 + 17,
        17,
        17,
        23,
        6,
        (6..18).sum::<i64>(),
    ];
    let want: String = want.iter().map(|v| format!("{v}\n")).collect();
    assert_eq!(execute("views", &mut m, 0), want);
}

fn global(
    m: &mut Module,
    name: &str,
    ty: Type,
    init: Option<ir::elements::Elements>,
    constant: bool,
) {
    use ir::{Attribute, OpSpec, Sym};
    let body = m.body();
    let mut attrs = vec![
        (Sym::new("sym_name"), Attribute::string(name)),
        (Sym::new("type"), Attribute::Type(ty)),
        (Sym::new("sym_visibility"), Attribute::string("private")),
    ];
    match init {
        Some(e) => attrs.push((Sym::new("initial_value"), Attribute::Elements(e))),
        None => attrs.push((Sym::new("initial_value"), Attribute::Unit)),
    }
    if constant {
        attrs.push((Sym::new("constant"), Attribute::Unit));
    }
    let mut b = ir::Builder::at_end(m, body);
    b.create(
        "memref.global",
        OpSpec {
            attrs,
            ..OpSpec::default()
        },
    );
}

#[test]
fn globals_dense_constants_and_mutable_state() {
    use ir::elements::{DType, Elements, WideNum};
    let mut m = Module::new();
    declare_prints(&mut m);
    let vals: Vec<WideNum> = (0..6)
        .map(|i| WideNum::from_f64(i as f64 * 1.5 - 2.0))
        .collect();
    let e = Elements::from_wide(DType::F32, vec![2, 3], &vals).unwrap();
    global(
        &mut m,
        "weights",
        memref(&[2, 3], Type::f32()),
        Some(e),
        true,
    );
    // Big enough for the raw byte form.
    let big: Vec<WideNum> = (0..2000).map(|i| WideNum::from_i64(i * 7 - 3000)).collect();
    let e = Elements::from_wide(DType::I32, vec![2000], &big).unwrap();
    global(&mut m, "big", memref(&[2000], Type::i(32)), Some(e), true);
    let e = Elements::splat(DType::I64, vec![], WideNum::from_i64(0)).unwrap();
    global(&mut m, "counter", memref(&[], Type::i64()), Some(e), false);
    global(&mut m, "scratch", memref(&[4], Type::i64()), None, false);
    let (_, e) = func(&mut m, "main", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, e);
    let w = b.op1(
        "memref.get_global",
        &[],
        memref(&[2, 3], Type::f32()),
        &[("name", ir::Attribute::symbol("weights"))],
    );
    let zf = b.const_float(0.0, Type::f32());
    let (n2, n3) = (b.const_index(2), b.const_index(3));
    let (c0, c1) = (b.const_index(0), b.const_index(1));
    let lp = b.scf_for(c0, n2, c1, &[zf], |b, i, acc| {
        let (c0, c1) = (b.const_index(0), b.const_index(1));
        let lp = b.scf_for(c0, n3, c1, &[acc[0]], |b, j, acc| {
            let v = b.load(w, &[i, j]);
            vec![b.addf(acc[0], v)]
        });
        b.m.results(lp).to_vec()
    });
    let s = b.m.results(lp).to_vec();
    let s = b.extf(s[0], Type::f64());
    b.print_f64(s);
    let g = b.op1(
        "memref.get_global",
        &[],
        memref(&[2000], Type::i(32)),
        &[("name", ir::Attribute::symbol("big"))],
    );
    let n = b.const_index(2000);
    let zi = b.const_int(0, Type::i64());
    let (c0, c1) = (b.const_index(0), b.const_index(1));
    let lp = b.scf_for(c0, n, c1, &[zi], |b, i, acc| {
        let v = b.load(g, &[i]);
        let v = b.extsi(v, Type::i64());
        vec![b.addi(acc[0], v)]
    });
    let s = b.m.results(lp).to_vec();
    b.print_i64(s[0]);
    // Mutable rank-0 global used as a counter.
    let c = b.op1(
        "memref.get_global",
        &[],
        memref(&[], Type::i64()),
        &[("name", ir::Attribute::symbol("counter"))],
    );
    let k = b.const_index(5);
    let (c0, c1) = (b.const_index(0), b.const_index(1));
    b.scf_for(c0, k, c1, &[], |b, _, _| {
        let v = b.load(c, &[]);
        let one = b.const_int(1, Type::i64());
        let v = b.addi(v, one);
        b.store(v, c, &[]);
        vec![]
    });
    let v = b.load(c, &[]);
    b.print_i64(v);
    let sc = b.op1(
        "memref.get_global",
        &[],
        memref(&[4], Type::i64()),
        &[("name", ir::Attribute::symbol("scratch"))],
    );
    let k3 = b.const_index(3);
    let v = b.load(sc, &[k3]);
    b.print_i64(v);
    b.ret(&[]);
    let ws: f32 = (0..6).map(|i| i as f32 * 1.5 - 2.0).sum();
    let bs: i64 = (0..2000).map(|i| i * 7 - 3000).sum();
    assert_eq!(execute("globals", &mut m, 0), format!("{ws}\n{bs}\n5\n0\n"));
}

#[test]
fn realloc_growth_in_loop() {
    let mut m = Module::new();
    declare_prints(&mut m);
    let (_, e) = func(&mut m, "main", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, e);
    let dynt = memref(&[ir::DYN], Type::i64());
    let one = b.const_index(1);
    let buf = b.alloc(&dynt.clone(), &[one]);
    let n = b.const_index(300);
    // Grow by doubling whenever i reaches the capacity; store i*i.
    let (c0, c1) = (b.const_index(0), b.const_index(1));
    let lp = b.scf_for(c0, n, c1, &[buf, one], |b, i, st| {
        let (buf, cap) = (st[0], st[1]);
        let full = b.cmpi(CmpI::Sge, i, cap);
        let dynt = dynt.clone();
        let r = b.scf_if(
            full,
            &[dynt.clone(), Type::Index],
            &mut |b| {
                let two = b.const_index(2);
                let nc = b.muli(cap, two);
                let nb = b.realloc(buf, Some(nc), dynt.clone());
                vec![nb, nc]
            },
            Some(&mut |_| vec![buf, cap]),
        );
        let r = b.m.results(r).to_vec();
        let ii = b.index_cast(i, Type::i64());
        let sq = b.muli(ii, ii);
        b.store(sq, r[0], &[i]);
        r
    });
    let r = b.m.results(lp).to_vec();
    let zi = b.const_int(0, Type::i64());
    let (c0, c1) = (b.const_index(0), b.const_index(1));
    let lp = b.scf_for(c0, n, c1, &[zi], |b, i, acc| {
        let v = b.load(r[0], &[i]);
        vec![b.addi(acc[0], v)]
    });
    let s = b.m.results(lp).to_vec();
    b.print_i64(s[0]);
    let cap = b.index_cast(r[1], Type::i64());
    b.print_i64(cap);
    // Alignment survives: the aligned pointer is a multiple of 64.
    let p = b.op1(
        "memref.extract_aligned_pointer_as_index",
        &[r[0]],
        Type::Index,
        &[],
    );
    let k64 = b.const_index(64);
    let rem = b.remui(p, k64);
    let rem = b.index_cast(rem, Type::i64());
    b.print_i64(rem);
    // A static realloc keeps the prefix.
    let small = b.alloc(&memref(&[4], Type::f32()), &[]);
    let k2 = b.const_index(2);
    let x = b.const_float(2.5, Type::f32());
    b.store(x, small, &[k2]);
    let big = b.op1(
        "memref.realloc",
        &[small],
        memref(&[1000], Type::f32()),
        &[],
    );
    let y = b.load(big, &[k2]);
    let y = b.extf(y, Type::f64());
    b.print_f64(y);
    b.dealloc(big);
    b.dealloc(r[0]);
    b.ret(&[]);
    let want: i64 = (0..300i64).map(|i| i * i).sum();
    assert_eq!(
        execute("realloc", &mut m, 0),
        format!("{want}\n512\n0\n2.5\n")
    );
}

#[test]
fn memref_copy_contiguous_and_strided() {
    let mut m = Module::new();
    declare_prints(&mut m);
    let (_, e) = func(&mut m, "main", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, e);
    let i64t = Type::i64();
    let a = b.alloc(&memref(&[4, 6], i64t.clone()), &[]);
    let (n4, n6) = (b.const_index(4), b.const_index(6));
    let (c0, c1) = (b.const_index(0), b.const_index(1));
    b.scf_for(c0, n4, c1, &[], |b, i, _| {
        let (c0, c1) = (b.const_index(0), b.const_index(1));
        b.scf_for(c0, n6, c1, &[], |b, j, _| {
            let six = b.const_index(6);
            let v = b.muli(i, six);
            let v = b.addi(v, j);
            let v = b.index_cast(v, Type::i64());
            b.store(v, a, &[i, j]);
            vec![]
        });
        vec![]
    });
    // Contiguous: memcpy into a fresh 4x6 buffer.
    let c = b.alloc(&memref(&[4, 6], i64t.clone()), &[]);
    b.copy(a, c);
    let s1 = sum_all(&mut b, c);
    // Strided: A[0:4:2, 1:7:3] (2x2) copied into C[1:3, 2:4].
    let src_t = Type::memref_strided(vec![2, 2], i64t.clone(), 1, vec![12, 3]);
    let src = b.op1(
        "memref.subview",
        &[a],
        src_t,
        &[
            ("static_offsets", arr(&[0, 1])),
            ("static_sizes", arr(&[2, 2])),
            ("static_strides", arr(&[2, 3])),
        ],
    );
    let zero = b.const_int(0, i64t.clone());
    let (c0, c1) = (b.const_index(0), b.const_index(1));
    b.scf_for(c0, n4, c1, &[], |b, i, _| {
        let (c0, c1) = (b.const_index(0), b.const_index(1));
        b.scf_for(c0, n6, c1, &[], |b, j, _| {
            b.store(zero, c, &[i, j]);
            vec![]
        });
        vec![]
    });
    let dst_t = Type::memref_strided(vec![2, 2], i64t.clone(), 8, vec![6, 1]);
    let dst = b.op1(
        "memref.subview",
        &[c],
        dst_t,
        &[
            ("static_offsets", arr(&[1, 2])),
            ("static_sizes", arr(&[2, 2])),
            ("static_strides", arr(&[1, 1])),
        ],
    );
    b.copy(src, dst);
    let s2 = sum_all(&mut b, c);
    let (k2, k3) = (b.const_index(2), b.const_index(3));
    let corner = b.load(c, &[k2, k3]);
    // Rank-0 copy.
    let r0a = b.alloc(&memref(&[], Type::f64()), &[]);
    let r0b = b.alloc(&memref(&[], Type::f64()), &[]);
    let x = b.const_float(6.25, Type::f64());
    b.store(x, r0a, &[]);
    b.copy(r0a, r0b);
    let y = b.load(r0b, &[]);
    for v in [s1, s2, corner] {
        b.print_i64(v);
    }
    b.print_f64(y);
    for x in [a, c, r0a, r0b] {
        b.dealloc(x);
    }
    b.ret(&[]);
    assert_eq!(execute("copy", &mut m, 0), "276\n34\n16\n6.25\n");
}
