//! Emitter properties that need no execution: determinism, diagnostics for
//! what it does not handle, options, ABI shape.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use ir::builder::CmpI;
use ir::{Builder, Module, OpSpec, Type};

fn sample() -> Module {
    let mut m = Module::new();
    declare_prints(&mut m);
    let dynt = memref(&[ir::DYN], Type::f32());
    let (_, e) = func(
        &mut m,
        "fill",
        vec![Type::Index],
        vec![dynt.clone(), Type::Index],
    );
    let mut b = Builder::at_end(&mut m, e);
    let n = b.m.block_args(e)[0];
    let buf = b.alloc(&dynt.clone(), &[n]);
    let z = b.const_float(0.0, Type::f32());
    let (lb, one) = (b.const_index(0), b.const_index(1));
    b.scf_for(lb, n, one, &[z], |b, i, acc| {
        let ii = b.index_cast(i, Type::i64());
        let f = b.sitofp(ii, Type::f32());
        b.store(f, buf, &[i]);
        let two = b.const_index(2);
        let rem = b.remui(i, two);
        let zero = b.const_index(0);
        let even = b.cmpi(CmpI::Eq, rem, zero);
        let a = acc[0];
        let r = b.scf_if(
            even,
            &[Type::f32()],
            &mut |b| vec![b.addf(a, f)],
            Some(&mut |_| vec![a]),
        );
        b.m.results(r).to_vec()
    });
    b.ret(&[buf, n]);
    let (_, e) = func(&mut m, "main", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, e);
    let n = b.const_index(8);
    let res = b.call("fill", &[n], &[dynt, Type::Index]);
    b.dealloc(res[0]);
    b.ret(&[]);
    m
}

#[test]
fn emission_is_deterministic() {
    let mut a = sample();
    let mut b = sample();
    let ta = lower_and_emit(&mut a);
    let tb = lower_and_emit(&mut b);
    assert_eq!(ta, tb);
    let again = lower::emit_llvm(&a, &lower::EmitOptions::default()).unwrap();
    assert_eq!(ta, again);
}

#[test]
fn abi_shape() {
    let mut m = sample();
    let ll = lower_and_emit(&mut m);
    let desc = "{ ptr, ptr, i64, [1 x i64], [1 x i64] }";
    assert!(
        ll.contains(&format!("define {{ {desc}, i64 }} @fill(i64 %v")),
        "multi-result functions return a literal struct:\n{ll}"
    );
    assert!(ll.contains("define i32 @main()"), "{ll}");
    // Heap buffers come through the library-wide block cache, under its
    // lock, and the cache is emptied when the library is unloaded.
    assert!(ll.contains("call ptr @__onnxc_alloc(i64 64, "), "{ll}");
    assert!(
        ll.contains("call ptr @aligned_alloc(i64 %align, i64 %bytes)"),
        "{ll}"
    );
    assert!(
        ll.contains("atomicrmw xchg ptr @__onnxc_cache_lock"),
        "{ll}"
    );
    assert!(
        ll.contains("{ i32 65535, ptr @__onnxc_cache_flush, ptr null }"),
        "{ll}"
    );
    assert!(ll.contains(" = phi float "), "{ll}");
    assert!(!ll.contains("target triple"), "{ll}");
}

#[test]
fn target_triple_option() {
    let mut m = sample();
    lower::scf_to_cf::lower_scf(&mut m).unwrap();
    let opts = lower::EmitOptions {
        target_triple: Some("x86_64-pc-linux-gnu".into()),
    };
    let ll = lower::emit_llvm(&m, &opts).unwrap();
    assert!(ll.contains("target triple = \"x86_64-pc-linux-gnu\""));
}

fn emit_err(m: &Module) -> ir::Diagnostic {
    match lower::emit_llvm(m, &lower::EmitOptions::default()) {
        Ok(ll) => panic!("expected an error, got:\n{ll}"),
        Err(d) => d,
    }
}

#[test]
fn scf_left_in_is_an_error_naming_the_op() {
    let mut m = Module::new();
    let (_, e) = func(&mut m, "f", vec![Type::Index], vec![]);
    let mut b = Builder::at_end(&mut m, e);
    let n = b.m.block_args(e)[0];
    let (lb, one) = (b.const_index(0), b.const_index(1));
    b.scf_for(lb, n, one, &[], |_, _, _| vec![]);
    b.ret(&[]);
    let d = emit_err(&m);
    assert_eq!(d.op.as_deref(), Some("scf.for"));
    assert!(d.to_string().contains("scf.for"), "{d}");
    assert!(
        d.notes.iter().any(|n| n.contains("convert-scf-to-cf")),
        "{d}"
    );
}

#[test]
fn foreign_ops_are_errors() {
    for name in ["onnx.Add", "bufferization.clone"] {
        let mut m = Module::new();
        let t = memref(&[4], Type::f32());
        let (_, e) = func(&mut m, "f", vec![t.clone()], vec![]);
        let mut b = Builder::at_end(&mut m, e);
        let x = b.m.block_args(e)[0];
        b.op(name, &[x], &[t], &[]);
        b.ret(&[]);
        let d = emit_err(&m);
        assert_eq!(d.op.as_deref(), Some(name));
        assert!(d.to_string().contains(name), "{d}");
    }
}

#[test]
fn unsupported_types_are_errors() {
    // An element type wider than LLVM's codegen takes here.
    let mut m = Module::new();
    let (_, e) = func(&mut m, "f", vec![], vec![]);
    let mut b = Builder::at_end(&mut m, e);
    let a = b.alloc(&memref(&[4], Type::i(256)), &[]);
    b.dealloc(a);
    b.ret(&[]);
    let d = emit_err(&m);
    assert!(d.to_string().contains("unsupported in codegen"), "{d}");
    assert_eq!(d.op.as_deref(), Some("memref.alloc"));
    // Tensor-typed arith.
    let mut m = Module::new();
    let t = Type::tensor(vec![4], Type::f32());
    let (_, e) = func(&mut m, "f", vec![t.clone()], vec![t.clone()]);
    let mut b = Builder::at_end(&mut m, e);
    let x = b.m.block_args(e)[0];
    let y = b.addf(x, x);
    b.ret(&[y]);
    let d = emit_err(&m);
    assert!(d.to_string().contains("tensor"), "{d}");
}

#[test]
fn bad_main_and_module_level_ops() {
    let mut m = Module::new();
    let (_, e) = func(&mut m, "main", vec![Type::Index], vec![]);
    Builder::at_end(&mut m, e).ret(&[]);
    let d = emit_err(&m);
    assert!(d.to_string().contains("'main' must have type"), "{d}");

    let mut m = Module::new();
    let body = m.body();
    Builder::at_end(&mut m, body).create("test.thing", OpSpec::default());
    let d = emit_err(&m);
    assert_eq!(d.op.as_deref(), Some("test.thing"));
}

/// `onnxc.vectorize` on an `scf.for` becomes `!llvm.loop` metadata with
/// vectorize.enable on the loop's back edge (one distinct id per loop);
/// `lower_and_emit` checks the result with the LLVM 19 and 14 verifiers.
#[test]
fn vectorize_hint_becomes_loop_metadata() {
    let src = r#"
func.func @scale(%m: memref<64xf32>, %k: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    %v = memref.load %m[%i] : memref<64xf32>
    %w = arith.mulf %v, %k : f32
    memref.store %w, %m[%i] : memref<64xf32>
  } {onnxc.vectorize}
  scf.for %i = %c0 to %c64 step %c1 {
    %v = memref.load %m[%i] : memref<64xf32>
    %w = arith.addf %v, %k : f32
    memref.store %w, %m[%i] : memref<64xf32>
  } {onnxc.vectorize}
  scf.for %i = %c0 to %c64 step %c1 {
    memref.store %k, %m[%i] : memref<64xf32>
  }
  return
}
"#;
    let mut m = ir::text::parse_module(src, "hint.mlir").unwrap_or_else(|d| panic!("{d}"));
    let ll = lower_and_emit(&mut m);
    assert_eq!(ll.matches(", !llvm.loop !").count(), 2, "{ll}");
    assert!(ll.contains("!0 = !{!\"llvm.loop.vectorize.enable\", i1 true}"));
    assert!(ll.contains("!2 = distinct !{!2, !0, !1}"));
    assert!(ll.contains("!3 = distinct !{!3, !0, !1}"));
}
