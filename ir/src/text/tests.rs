//! Unit tests of the text format pieces: types, attributes, dense literals,
//! SSA names, error positions, hostile input.

use super::parser::{Parser, MAX_DEPTH};
use super::{parse_module, print_module, print_op, PrintOptions};
use crate::attr::Attribute;
use crate::diag::{Diagnostic, Location};
use crate::elements::DType;
use crate::types::{Type, DYN};

fn ty(s: &str) -> Result<Type, Diagnostic> {
    let mut p = Parser::new(s, "t.mlir");
    p.parse_type().map_err(|e| *e)
}

fn attr(s: &str) -> Result<Attribute, Diagnostic> {
    let mut p = Parser::new(s, "t.mlir");
    p.parse_attribute().map_err(|e| *e)
}

/// Parse → print → parse → print; both prints must agree. Returns the print.
fn roundtrip(src: &str) -> String {
    let m = parse_module(src, "t.mlir").unwrap_or_else(|e| panic!("{e}\n{src}"));
    let s = print_module(&m, &PrintOptions::default());
    let m2 = parse_module(&s, "p.mlir").unwrap_or_else(|e| panic!("{e}\n{s}"));
    assert_eq!(s, print_module(&m2, &PrintOptions::default()));
    let g = print_module(
        &m,
        &PrintOptions {
            generic: true,
            debug_info: false,
        },
    );
    let m3 = parse_module(&g, "g.mlir").unwrap_or_else(|e| panic!("{e}\n{g}"));
    assert_eq!(
        s,
        print_module(&m3, &PrintOptions::default()),
        "generic form changes the module"
    );
    s
}

fn err(src: &str) -> Diagnostic {
    match parse_module(src, "e.mlir") {
        Ok(m) => panic!(
            "expected an error, parsed:\n{}",
            print_module(&m, &PrintOptions::default())
        ),
        Err(e) => e,
    }
}

fn at(d: &Diagnostic) -> (u32, u32) {
    match &d.loc {
        Location::File { line, col, .. } => (*line, *col),
        other => panic!("no file location: {other:?}"),
    }
}

#[test]
fn types_print_as_parsed() {
    for s in [
        "index",
        "i1",
        "si8",
        "ui64",
        "f16",
        "bf16",
        "f8E4M3FN",
        "f8E5M2FNUZ",
        "f8E8M0FNU",
        "f4E2M1FN",
        "none",
        "complex<f32>",
        "tensor<2x?xf32>",
        "tensor<*xi8>",
        "tensor<f32>",
        "tensor<0x3xcomplex<f64>>",
        "memref<4x?xf32>",
        "memref<f32>",
        "memref<4x?xf32, strided<[?, 1], offset: ?>>",
        "memref<2xf32, strided<[2]>>",
        "(i32, f32) -> f32",
        "() -> ()",
        "(i32) -> (f32, i1)",
        "!onnx.Seq<tensor<f32>>",
        "!llvm.ptr",
        "!a.b<\"x>\", (i32) -> i32, [<>]>",
    ] {
        assert_eq!(ty(s).unwrap_or_else(|e| panic!("{s}: {e}")).to_string(), s);
    }
    assert_eq!(
        ty("tensor< 2 x ? x f32 >").unwrap(),
        Type::tensor(vec![2, DYN], Type::f32())
    );
    assert_eq!(ty("memref<0x4xf32>").unwrap().shape(), Some(&[0, 4][..]));
    for bad in [
        "i0",
        "i99999999",
        "vector<0xf32>",
        "vector<?xf32>",
        "vector<4xmemref<2xf32>>",
        "tensor<4f32>",
        "memref<4xf32, 1>",
        "tensor<99999999999999999999xf32>",
    ] {
        assert!(ty(bad).is_err(), "{bad}");
    }
}

#[test]
fn attributes_print_as_parsed() {
    for s in [
        "unit",
        "true",
        "5 : i64",
        "-3 : index",
        "7 : i8",
        "1.5e+00 : f32",
        "-2.5e-07 : f64",
        "0x7FC00000 : f32",
        "\"a\\\"b\"",
        "[1, \"x\", [unit, 2 : i32]]",
        "{a = 1 : i64, b}",
        "i32",
        "(i32) -> f32",
        "@main",
        "@\"with space\"",
        "@outer::@inner",
        "array<i64: 1, 2>",
        "array<i32>",
        "array<i1: true, false>",
        "dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>",
        "dense<1.0e+00> : tensor<3x3xf32>",
        "dense<[true, false]> : tensor<2xi1>",
        "dense<[]> : tensor<0xf32>",
    ] {
        let a = attr(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(a.to_string(), s);
    }
    assert_eq!(attr("5").unwrap(), Attribute::i64(5));
    assert_eq!(attr("1.5").unwrap(), Attribute::Float(1.5, Type::f64()));
    assert_eq!(
        attr("1.5e-3 : f32").unwrap(),
        Attribute::Float(f64::from(1.5e-3f32), Type::f32())
    );
    assert_eq!(
        attr("dense<[2, 2]> : tensor<2xi32>").unwrap().to_string(),
        "dense<2> : tensor<2xi32>"
    );
    assert_eq!(attr("0x10 : i32").unwrap(), Attribute::Int(16, Type::i(32)));
    assert_eq!(attr("{b, a = 2}").unwrap().to_string(), "{a = 2 : i64, b}");
    assert!(attr("-1 : ui8").is_err());
    assert!(attr("256 : i8").is_err());
    assert_eq!(attr("255 : i8").unwrap(), Attribute::Int(255, Type::i(8)));
    assert!(attr("1.5 : i32").is_err());
    assert!(attr("{a, a}").is_err());
    // Dialect attributes are kept verbatim; aliases must be defined.
    assert_eq!(attr("#foo.bar<1>").unwrap().to_string(), "#foo.bar<1>");
    assert_eq!(
        attr(r#"#vector.kind<a<"x>">>"#).unwrap().to_string(),
        r#"#vector.kind<a<"x>">>"#
    );
    assert!(attr("#foo.bar<1").is_err());
    assert!(attr("#undefined").is_err());
    assert_eq!(ty("vector<4xf32>").unwrap().to_string(), "vector<4xf32>");
}

#[test]
fn dense_literals() {
    let e = attr("dense<\"0x0000803F00000040\"> : tensor<2xf32>").unwrap();
    let Attribute::Elements(e) = e else { panic!() };
    assert_eq!(e.dtype(), DType::F32);
    assert_eq!(
        e.to_wide_vec().iter().map(|v| v.f64()).collect::<Vec<_>>(),
        vec![1.0, 2.0]
    );
    // A one-element hex string is a splat.
    let Attribute::Elements(s) = attr("dense<\"0x0000803F\"> : tensor<4xf32>").unwrap() else {
        panic!()
    };
    assert!(s.is_splat() && s.len() == 4);
    let Attribute::Elements(i4) = attr("dense<[-8, 7]> : tensor<2xi4>").unwrap() else {
        panic!()
    };
    assert_eq!(
        i4.to_wide_vec().iter().map(|v| v.i64()).collect::<Vec<_>>(),
        vec![-8, 7]
    );
    let Attribute::Elements(u8s) = attr("dense<[200, 0x10]> : tensor<2xui8>").unwrap() else {
        panic!()
    };
    assert_eq!(
        u8s.to_wide_vec()
            .iter()
            .map(|v| v.u64())
            .collect::<Vec<_>>(),
        vec![200, 16]
    );
    let Attribute::Elements(h) = attr("dense<[0x7FC00000, 1.0]> : tensor<2xf32>").unwrap() else {
        panic!()
    };
    assert!(h.get(0).unwrap().f64().is_nan());

    // 8-bit floats keep their bytes (there is no encoder for them here).
    let f8 = "dense<\"0x7E407E7E\"> : tensor<4xf8E4M3FN>";
    assert_eq!(attr(f8).unwrap().to_string(), f8);
    let Attribute::Elements(f8e) = attr(f8).unwrap() else {
        panic!()
    };
    assert_eq!(f8e.get(0).unwrap().f64(), 448.0);

    // Sizes are checked against the declared type before anything is allocated.
    let huge = attr("dense<[1.0]> : tensor<1000000000000xf32>").unwrap_err();
    assert!(huge.message.contains("does not match"), "{huge}");
    assert!(attr("dense<\"0x00\"> : tensor<1000000000000xf32>").is_err());
    assert!(attr("dense<1.0> : tensor<99999999999x99999999999xf32>").is_err());
    let ok = attr("dense<1.0> : tensor<100000x100000xf32>").unwrap();
    assert!(matches!(ok, Attribute::Elements(ref e) if e.is_splat() && e.len() == 10_000_000_000));
    for bad in [
        "dense<[1, 2]> : tensor<3xi32>",
        "dense<[[1], [2, 3]]> : tensor<2x2xi32>",
        "dense<[1, [2]]> : tensor<2xi32>",
        "dense<[1.5]> : tensor<1xi32>",
        "dense<[true]> : tensor<1xf32>",
        "dense<> : tensor<1xf32>",
        "dense<\"0x0000\"> : tensor<3xf32>",
        "dense<\"12\"> : tensor<1xi8>",
        "dense<[1]> : tensor<?xi32>",
        "dense<[1]> : memref<1xi32>",
        "dense<[300]> : tensor<1xi8>",
    ] {
        assert!(attr(bad).is_err(), "{bad}");
    }
}

#[test]
fn ssa_names_follow_mlir() {
    let s = roundtrip(
        "func.func @f(%a: index, %c: i1) -> index {\n\
           %x, %y:2 = \"test.three\"() : () -> (index, f32, f32)\n\
           \"test.use\"(%y#1, %x) : (f32, index) -> ()\n\
           scf.if %c {\n  %z = \"test.in\"() : () -> i32\n}\n\
           scf.for %i = %a to %a step %a {\n  %w = \"test.in\"() : () -> i32\n}\n\
           cf.br ^bb1(%a : index)\n\
         ^bb1(%b: index):\n\
           return %b : index\n\
         }",
    );
    // Two result groups bound by separate names are one op's results.
    assert!(
        s.contains("%0:3 = \"test.three\"() : () -> (index, f32, f32)"),
        "{s}"
    );
    assert!(
        s.contains("\"test.use\"(%0#2, %0#0) : (f32, index) -> ()"),
        "{s}"
    );
    // Sibling regions restart from the parent's counters.
    assert!(
        s.contains("scf.if %arg1 {\n      %2 = \"test.in\"() : () -> i32\n    }"),
        "{s}"
    );
    assert!(
        s.contains("scf.for %arg2 = %arg0 to %arg0 step %arg0 {\n      %2 = \"test.in\"()"),
        "{s}"
    );
    assert!(s.contains("^bb1(%1: index):\n    return %1 : index"), "{s}");
}

#[test]
fn forward_references_and_blocks() {
    let s = roundtrip(
        "func.func @f(%c: i1) -> i32 {\n\
           cf.cond_br %c, ^bb2, ^bb1\n\
         ^bb1:\n\
           cf.br ^bb3(%v : i32)\n\
         ^bb2:\n\
           %v = \"test.v\"() : () -> i32\n\
           cf.br ^bb1\n\
         ^bb3(%r: i32):\n\
           return %r : i32\n\
         }",
    );
    assert!(s.contains("cf.br ^bb3(%0 : i32)"), "{s}");
    let m = parse_module(&s, "x").unwrap();
    assert_eq!(m.num_ops(), 7);
}

#[test]
fn errors_have_positions() {
    let e = err("func.func @f() {\n  return %x : i32\n}");
    assert_eq!(at(&e), (2, 10));
    assert!(e.message.contains("undeclared SSA value name '%x'"), "{e}");
    let e = err("%a = \"t.a\"() : () -> i32\n%a = \"t.b\"() : () -> i32");
    assert_eq!(at(&e), (2, 1));
    assert!(e.message.contains("redefinition"), "{e}");
    let e = err("%a = \"t.a\"() : () -> i32\n\"t.b\"(%a) : (f32) -> ()");
    assert_eq!(at(&e), (2, 7));
    assert!(e.message.contains("expects different type"), "{e}");
    let e = err("\"t.b\"(%a) : (f32) -> ()\n%a = \"t.a\"() : () -> i32");
    assert!(e.message.contains("expects type 'f32'"), "{e}");
    let e = err("func.func @f() {\n  cf.br ^bb7\n}");
    assert_eq!(at(&e), (2, 9));
    assert!(e.message.contains("undefined block"), "{e}");
    let e = err("func.func @f() {\n  %0 = arith.addf %1, %1 : f32\n  \"x");
    assert!(e.message.contains("unterminated string"), "{e}");
    assert_eq!(at(&e), (3, 3));
    let e = err("%0 = arith.bogus %1 : f32");
    assert!(e.message.contains("unknown"), "{e}");
    let e = err("\"t.a\"() {x, x} : () -> ()");
    assert!(e.message.contains("duplicate"), "{e}");
    let e = err("%a:2 = \"t.a\"() : () -> i32");
    assert!(
        e.message.contains("defines 1 results but was provided 2"),
        "{e}"
    );
    let e = err("%a:2 = \"t.a\"() : () -> (i32, i32)\n\"t.b\"(%a#5) : (i32) -> ()");
    assert!(e.message.contains("invalid result number"), "{e}");
}

#[test]
fn deep_nesting_is_rejected() {
    let n = MAX_DEPTH + 10;
    let src = "\"t.r\"() ({\n".repeat(n) + &"}) : () -> ()\n".repeat(n);
    let e = err(&src);
    assert!(e.message.contains("nesting"), "{e}");
    let src = "\"t.a\"() {a = ".to_string() + &"[".repeat(100_000) + " : () -> ()";
    let e = err(&src);
    assert!(e.message.contains("nesting"), "{e}");
    let src = "\"t.a\"() : () -> ".to_string() + &"complex<".repeat(100_000);
    assert!(err(&src).message.contains("nesting"));
    // Just below the limit still works.
    let k = MAX_DEPTH - 2;
    let src = "\"t.r\"() ({\n".repeat(k) + &"}) : () -> ()\n".repeat(k);
    let m = parse_module(&src, "deep").unwrap();
    let printed = print_module(&m, &PrintOptions::default());
    assert!(parse_module(&printed, "deep2").is_ok());
}

#[test]
fn module_wrapping() {
    let bare = parse_module("func.func private @f()", "a").unwrap();
    let wrapped = parse_module("module {\n  func.func private @f()\n}", "b").unwrap();
    let o = PrintOptions::default();
    assert_eq!(print_module(&bare, &o), print_module(&wrapped, &o));
    assert_eq!(
        print_module(&bare, &o),
        "module {\n  func.func private @f()\n}\n"
    );
    let named = parse_module("module @m attributes {x = 1 : i32} {\n}", "c").unwrap();
    assert_eq!(
        print_module(&named, &o),
        "module @m attributes {x = 1 : i32} {\n}\n"
    );
    let two = roundtrip("module {\n}\nmodule @b {\n}");
    assert!(two.contains("  module {\n  }\n  module @b {\n  }"), "{two}");
    assert_eq!(print_module(&crate::Module::new(), &o), "module {\n}\n");
}

#[test]
fn locations() {
    let m = parse_module(
        "\"t.a\"() : () -> () loc(\"conv1\")\n\"t.b\"() : () -> () loc(\"f.onnx\":3:4)\n\"t.c\"() : () -> () loc(fused[\"a\", \"b\"])\n\"t.d\"() : () -> ()\n#loc = loc(\"x\")",
        "in.mlir",
    )
    .unwrap();
    let ops: Vec<_> = m.block_ops(m.body()).collect();
    assert_eq!(m.loc(ops[0]), &Location::name("conv1"));
    assert!(matches!(
        m.loc(ops[1]),
        Location::File {
            line: 3,
            col: 4,
            ..
        }
    ));
    assert_eq!(m.loc(ops[2]), &Location::Unknown);
    assert!(matches!(
        m.loc(ops[3]),
        Location::File {
            line: 4,
            col: 1,
            ..
        }
    ));
    let o = PrintOptions {
        debug_info: true,
        generic: false,
    };
    let s = print_module(&m, &o);
    assert!(s.contains("\"t.a\"() : () -> () loc(\"conv1\")"), "{s}");
    assert!(s.contains("loc(\"f.onnx\":3:4)"), "{s}");
    assert!(s.contains("\"t.c\"() : () -> () loc(unknown)"), "{s}");
    let m2 = parse_module(&s, "again").unwrap();
    assert_eq!(print_module(&m2, &o), s);
}

#[test]
fn print_single_op() {
    let m = parse_module(
        "func.func @f(%a: f32) -> f32 {\n  %0 = arith.addf %a, %a : f32\n  return %0 : f32\n}",
        "a",
    )
    .unwrap();
    let f = m.top_level_ops("func.func")[0];
    let body = m.entry_block(m.region(f, 0).unwrap()).unwrap();
    let add = m.first_op(body).unwrap();
    assert_eq!(
        print_op(&m, add, &PrintOptions::default()),
        "%0 = arith.addf %arg0, %arg0 : f32"
    );
    let g = PrintOptions {
        generic: true,
        debug_info: false,
    };
    assert_eq!(
        print_op(&m, add, &g),
        "%0 = \"arith.addf\"(%arg0, %arg0) : (f32, f32) -> f32"
    );
    assert!(print_op(&m, f, &PrintOptions::default())
        .starts_with("func.func @f(%arg0: f32) -> f32 {\n  %0"));
}

#[test]
fn malformed_ir_prints_generic() {
    let m = parse_module(
        "\"arith.addf\"() : () -> f32\n\"scf.for\"() ({}) : () -> ()\n\"arith.constant\"() {value = \"s\"} : () -> i32\n\"func.func\"() ({}) : () -> ()",
        "a",
    )
    .unwrap();
    let s = print_module(&m, &PrintOptions::default());
    assert!(s.contains("\"arith.addf\"() : () -> f32"), "{s}");
    assert!(s.contains("\"scf.for\"() ({\n  }) : () -> ()"), "{s}");
    assert!(s.contains("\"func.func\"() ({\n  }) : () -> ()"), "{s}");
    let m2 = parse_module(&s, "b").unwrap();
    assert_eq!(print_module(&m2, &PrintOptions::default()), s);
}

#[test]
fn hostile_snippets_do_not_panic() {
    for src in [
        "",
        "\"",
        "%",
        "^",
        "@",
        "module {",
        "module }",
        "func.func @f(",
        "func.func @f(%a: i32) {\n ^bb0:",
        "\"t.a\"(%0#99999999999999) : (i32) -> ()",
        "%0:99999999999999999999 = \"t.a\"() : () -> ()",
        "\"t.a\"() {a = dense<[[[[[[[[[[[1]]]]]]]]]]> : tensor<1xf32>} : () -> ()",
        "\"t.a\"() {a = dense<\"0xZZ\"> : tensor<1xi8>} : () -> ()",
        "\"cf.cond_br\"(%a)[^bb1, ^bb2] {operandSegmentSizes = array<i32: 9223372036854775807, 9223372036854775807, 2>} : (i1) -> ()",
        "\"bufferization.dealloc\"() {operandSegmentSizes = array<i32: -1, -1, 2>} : () -> ()",
        "\"t.a\"() : () -> !x<<<<",
        "\"t.a\"() : () -> memref<?x?xf32, strided<[-9223372036854775808]>>",
        "\u{0}\u{1}\u{ff}\u{10ffff}",
        "%0 = arith.constant dense<1> : tensor<18446744073709551615x2xi8>",
        "func.func @f() {\n^bb1:\n^bb1:\n}",
    ] {
        let _ = parse_module(src, "hostile");
    }
}

#[test]
fn random_bytes_do_not_panic() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..300 {
        let mut bytes = Vec::new();
        for _ in 0..(state % 200) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let alphabet = b"%^@\"(){}[]<>:,=-> 0123456789abcfxi.#!\n";
            bytes.push(alphabet[(state % alphabet.len() as u64) as usize]);
        }
        let s = String::from_utf8_lossy(&bytes);
        if let Ok(m) = parse_module(&s, "rand") {
            let _ = print_module(&m, &PrintOptions::default());
        }
    }
}

#[test]
fn small_float_specials_roundtrip() {
    for (lit, ty) in [
        ("0x7F", "f8E4M3FN"),
        ("0x7C", "f8E5M2"),
        ("0x80", "f8E5M2FNUZ"),
        ("0xFF", "f8E8M0FNU"),
        ("0x40", "f8E4M3FN"),
    ] {
        let a = attr(&format!("{lit} : {ty}")).unwrap();
        let printed = a.to_string();
        assert_eq!(attr(&printed).unwrap().to_string(), printed, "{lit} : {ty}");
    }
}

#[test]
fn symbolic_tensor_dims_round_trip() {
    let t = ty(r#"tensor<?x3x?xf32, #onnx.dims<"N, 3, (H - 1) floordiv 2 + 1">>"#)
        .unwrap_or_else(|e| panic!("{e}"));
    let tt = t.as_tensor().unwrap_or_else(|| panic!("not a tensor"));
    assert_eq!(tt.dim(0).map(|d| d.to_string()), Some("N".to_string()));
    assert_eq!(tt.dim(1).and_then(|d| d.as_const()), Some(3));
    assert_eq!(
        t.to_string(),
        r#"tensor<?x3x?xf32, #onnx.dims<"N, 3, (H + 1) floordiv 2">>"#
    );
    assert_eq!(ty(&t.to_string()).ok(), Some(t.clone()));
    // An unknown dim stays `?`; a type without symbols prints as before.
    let u =
        ty(r#"tensor<?x?xi64, #onnx.dims<"?, \"batch size\"">>"#).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        u.to_string(),
        r#"tensor<?x?xi64, #onnx.dims<"?, \"batch size\"">>"#
    );
    assert_eq!(u.without_dims().to_string(), "tensor<?x?xi64>");
    assert!(ty(r#"tensor<?xf32, #onnx.dims<"N, M">>"#).is_err());
    assert!(ty(r#"tensor<?xf32, #onnx.dims<"N +">>"#).is_err());
    let src = r#"func.func @f(%a: tensor<?x4xf32, #onnx.dims<"B, 4">>) -> tensor<?x4xf32, #onnx.dims<"B, 4">> {
  return %a : tensor<?x4xf32, #onnx.dims<"B, 4">>
}
"#;
    assert!(roundtrip(src).contains(r#"#onnx.dims<"B, 4">"#));
}

/// The ops with a declarative format print exactly as MLIR writes them
/// and read back; a malformed one is an error at its position.
#[test]
fn declarative_formats_roundtrip() {
    let src = r#"module {
  memref.global "private" constant @g : memref<2xf32> = dense<[1.0e+00, 2.0e+00]>
  func.func @f(%arg0: memref<2xf32>, %arg1: vector<8xf32>) -> vector<8xf32> {
    %0 = memref.alloc() : memref<2xf32>
    memref.copy %arg0, %0 : memref<2xf32> to memref<2xf32>
    %1 = memref.get_global @g : memref<2xf32>
    %2 = memref.extract_aligned_pointer_as_index %1 : memref<2xf32> -> index
    %3 = vector.fma %arg1, %arg1, %arg1 {fastmath} : vector<8xf32>
    memref.dealloc %0 : memref<2xf32>
    return %3 : vector<8xf32>
  }
}
"#;
    assert_eq!(roundtrip(src), src);
    let e = err("func.func @f(%a: memref<2xf32>) {\n  memref.copy %a %a : memref<2xf32> to memref<2xf32>\n  return\n}\n");
    assert_eq!(at(&e), (2, 18), "{e}");
}
