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
