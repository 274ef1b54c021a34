//! Malformed text never panics: hostile snippets and a deterministic
//! byte-mutation loop over a valid file. Whatever parses must also print
//! and parse back.

use ir::text::{parse_module, print_module, PrintOptions};

const SEED_FILE: &str = include_str!("../../tests/filetests/text/dynamic_kernel.mlir");

/// xorshift64: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Parsing must not panic; a module that parses must print, re-parse and
/// verify (verification may fail, but not panic).
fn exercise(src: &str) -> bool {
    let Ok(m) = parse_module(src, "mutant.mlir") else {
        return false;
    };
    let _ = ir::verify(&m);
    for opts in [
        PrintOptions::default(),
        PrintOptions {
            generic: true,
            debug_info: true,
        },
    ] {
        let text = print_module(&m, &opts);
        let m2 = parse_module(&text, "printed.mlir")
            .unwrap_or_else(|e| panic!("printed text does not parse: {e}\n{text}\nfrom:\n{src}"));
        assert_eq!(
            print_module(&m2, &opts),
            text,
            "print is not stable for:\n{src}"
        );
    }
    true
}

#[test]
fn hostile_snippets() {
    let snippets = [
        "\"t.a\"() {s = \"unterminated} : () -> ()",
        "%0 = arith.constant dense<1.0> : tensor<99999999999x99999999999xf32>",
        "%0 = arith.constant dense<[1.0]> : tensor<1000000000000xf32>",
        "%0 = arith.constant dense<\"0x0000803F\"> : tensor<1000000000000xf32>",
        "%0 = arith.constant dense<[1.0, 2.0]> : tensor<-2xf32>",
        "func.func @f(%a: memref<?xf32>) {\n  %0 = memref.subview %a[%a] [1] [1] : memref<?xf32> to memref<1xf32>\n}",
        "\"cf.br\"()[^bb9] : () -> ()",
        "func.func @f() {\n  cf.br ^bb1\n^bb1:\n  cf.br ^bb1(%x : i32)\n}",
        "\"t.a\"() ({\n^bb0(%x: i32, %x: i32):\n}) : () -> ()",
        "module {\n  func.func @f() {\n    return\n  }\n",
        "%0 = \"t.a\"() : () -> i32 loc(\"a\":1",
        "\"t.a\"() : () -> () loc(callsite(\"a\" at \"b\":1:2))",
        "memref.global @g : memref<2xf32> = dense<[1.0, 2.0, 3.0]>",
        "memref.global @g : tensor<2xf32>",
        "%0 = scf.for %i = %a to %b step %c iter_args(%x = %y) -> (f32) {\n}",
        "\"bufferization.dealloc\"() {operandSegmentSizes = array<i32: -1, -1, 2>} : () -> ()",
        "\"bufferization.dealloc\"() {operandSegmentSizes = array<i32: 9223372036854775807, 9223372036854775807, 2>} : () -> ()",
        "\"memref.subview\"() {static_offsets = array<i64>, static_sizes = array<i64>, static_strides = array<i64>} : () -> ()",
        "\"scf.for\"() ({\n}) : () -> ()\n\"scf.while\"() ({\n}, {\n}) : () -> ()\n\"scf.if\"() : () -> ()",
        "\"func.func\"() {sym_name = \"f\", function_type = (i32) -> ()} ({\n}) : () -> ()",
        "\"func.return\"() : () -> ()\n\"scf.yield\"() : () -> ()\n\"scf.condition\"() : () -> ()",
        "\"memref.load\"() : () -> f32\n\"memref.store\"() : () -> ()\n\"memref.alloc\"() : () -> f32",
        "\"memref.realloc\"() : () -> memref<?xf32>\n\"memref.dim\"() : () -> index\n\"memref.global\"() : () -> ()",
        "\"memref.collapse_shape\"() : () -> memref<f32>\n\"memref.get_global\"() {name = @x} : () -> memref<f32>",
        "\"arith.cmpi\"() : () -> i1\n\"arith.select\"() : () -> i1\n\"arith.constant\"() : () -> i1\n\"cf.assert\"() : () -> ()",
        "\"cf.cond_br\"()[^bb1, ^bb1] {operandSegmentSizes = array<i32: 0, 0, 0>} : () -> ()",
        "\"scf.while\"() ({\n  \"scf.condition\"() : () -> ()\n}, {\n  \"scf.yield\"() : () -> ()\n}) : () -> ()",
        "\"scf.for\"() ({\n^bb0:\n  \"scf.yield\"() : () -> ()\n}) : () -> ()",
        "%c = \"t.c\"() : () -> index\n\"scf.for\"(%c, %c, %c) ({\n^bb0:\n  \"scf.yield\"() : () -> ()\n}) : (index, index, index) -> ()",
        "%c = \"t.c\"() : () -> index\n\"memref.realloc\"(%c) : (index) -> memref<f32>",
        "%c = \"t.c\"() : () -> memref<f32>\n\"memref.realloc\"(%c) : (memref<f32>) -> memref<f32>\n\"memref.load\"(%c, %c) : (memref<f32>, memref<f32>) -> f32",
        "\"func.call\"() {callee = @nothing} : () -> ()\n\"arith.addf\"() : () -> f32\n\"arith.extf\"() : () -> f64",
    ];
    for s in snippets {
        exercise(s);
    }
    // Deep nesting gets a diagnostic, not a stack overflow.
    let n = 5000;
    let deep = "func.func @f(%c: i1) {\n".to_string()
        + &"scf.if %c {\n".repeat(n)
        + &"}\n".repeat(n)
        + "return\n}";
    let e = parse_module(&deep, "deep.mlir")
        .err()
        .map(|e| e.message)
        .unwrap_or_default();
    assert!(e.contains("nesting"), "{e}");
}

#[test]
fn mutations_do_not_panic() {
    const ALPHABET: &[u8] = b"%^@#!\"(){}[]<>:,=-x?*0123456789abcdefi.\n \\";
    let seed = SEED_FILE.as_bytes();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut parsed = 0;
    for _ in 0..2000 {
        let mut bytes = seed.to_vec();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(bytes.len());
            match rng.below(5) {
                0 => bytes[at] = ALPHABET[rng.below(ALPHABET.len())],
                1 => bytes[at] = rng.next() as u8,
                2 => {
                    let end = (at + 1 + rng.below(40)).min(bytes.len());
                    bytes.drain(at..end);
                }
                3 => {
                    let end = (at + 1 + rng.below(40)).min(bytes.len());
                    let chunk = bytes[at..end].to_vec();
                    let to = rng.below(bytes.len());
                    bytes.splice(to..to, chunk);
                }
                _ => bytes.insert(at, ALPHABET[rng.below(ALPHABET.len())]),
            }
            if bytes.is_empty() {
                bytes.push(b' ');
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        if exercise(&text) {
            parsed += 1;
        }
    }
    // Some mutants (e.g. inside comments) still parse; most do not.
    assert!(
        parsed > 0 && parsed < 2000,
        "{parsed} of 2000 mutants parsed"
    );
}

/// Registered ops in random, mostly malformed shapes (operand types and
/// counts, regions, successors, attributes): the pretty printer must notice
/// what its form cannot express and fall back to the generic form, so the
/// printed text always reads back to the same module.
#[test]
fn malformed_registered_ops_roundtrip() {
    const TYPES: [&str; 8] = [
        "index",
        "i1",
        "f32",
        "memref<?xf32>",
        "memref<f32>",
        "memref<2x?xf32>",
        "i32",
        "tensor<2xf32>",
    ];
    const REGIONS: [&str; 7] = [
        "",
        " ({\n})",
        " ({\n^bb0(%x: f32):\n  \"scf.yield\"() : () -> ()\n})",
        " ({\n  \"scf.condition\"() : () -> ()\n}, {\n  \"scf.yield\"() : () -> ()\n})",
        " ({\n^bb0(%x: index, %y: f32):\n  \"scf.yield\"(%y) : (f32) -> ()\n})",
        " ({\n  \"t.x\"() : () -> ()\n}, {\n})",
        " ({\n^bb0:\n}, {\n^bb0(%q: i1):\n  \"scf.yield\"() : () -> ()\n})",
    ];
    const ATTRS: [&str; 10] = [
        "",
        " {predicate = 99 : i64}",
        " {operandSegmentSizes = array<i32: 1, 1, 1>}",
        " {static_offsets = array<i64: -9223372036854775808>, static_sizes = array<i64: 1>, static_strides = array<i64: 1>}",
        " {value = 1 : i32, callee = @t, name = @t, sym_name = \"t\", type = memref<f32>, function_type = (i32) -> ()}",
        " {reassociation = [[0, 1]], static_output_shape = array<i64: 1, 2>}",
        " {value = dense<1.0> : tensor<2xf32>, msg = \"m\", predicate = 1 : i64}",
        " {value = true, static_offsets = array<i64: 0>, static_sizes = array<i64: 1>, static_strides = array<i64: -9223372036854775808>, operandSegmentSizes = array<i32: 1, 0, 0, 1>}",
        " {sym_name = \"g\", type = memref<2xf32>, initial_value = dense<0.0> : tensor<2xf32>, constant, sym_visibility = \"private\"}",
        " {callee = @f, arg_attrs = [{a}], function_type = (f32) -> f32, sym_name = \"f\"}",
    ];
    let names: Vec<&str> = ir::dialects::builtin_ops().map(|d| d.name).collect();
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for _ in 0..4000 {
        let name = names[rng.below(names.len())];
        let operands: Vec<&str> = (0..rng.below(4))
            .map(|_| TYPES[rng.below(TYPES.len())])
            .collect();
        let results: Vec<&str> = (0..rng.below(3))
            .map(|_| TYPES[rng.below(TYPES.len())])
            .collect();
        let mut src = String::new();
        for (i, t) in operands.iter().enumerate() {
            src += &format!("%a{i} = \"t.src\"() : () -> {t}\n");
        }
        let refs: Vec<String> = (0..operands.len()).map(|i| format!("%a{i}")).collect();
        let succ = ["", "", "[^bb1]", "[^bb1, ^bb1]"][rng.below(4)];
        let op = format!(
            "\"{name}\"({}){succ}{}{} : ({}) -> ({})\n",
            refs.join(", "),
            REGIONS[rng.below(REGIONS.len())],
            ATTRS[rng.below(ATTRS.len())],
            operands.join(", "),
            results.join(", ")
        );
        if succ.is_empty() {
            src += &op;
        } else {
            src = format!(
                "\"t.f\"() ({{\n{src}{op}^bb1:\n  \"t.end\"() : () -> ()\n}}) : () -> ()\n"
            );
        }
        exercise(&src);
    }
}
