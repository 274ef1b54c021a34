//! End-to-end programs in MLIR text (`tests/programs/*.mlir`): parsed,
//! lowered, emitted, built, run, valgrind-checked; the output must match
//! the `// OUT:` lines (and `// EXIT:`), and upstream MLIR 19 compiling the
//! same file must print the same.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use std::process::Command;

/// Print helpers for the upstream build (MLIR's runner utils spellings).
const RUNNER_UTILS_C: &str = r#"#include <stdio.h>
#include <stdint.h>
void printI64(int64_t x) { printf("%lld", (long long)x); }
void printU64(uint64_t x) { printf("%llu", (unsigned long long)x); }
void printF32(float x) { printf("%g", x); }
void printF64(double x) { printf("%g", x); }
void printNewline(void) { printf("\n"); }
void printComma(void) { printf(", "); }
void printOpen(void) { printf("( "); }
void printClose(void) { printf(" )"); }
"#;

const UPSTREAM_PIPELINE: [&str; 10] = [
    "--expand-realloc",
    "--convert-scf-to-cf",
    "--expand-strided-metadata",
    "--finalize-memref-to-llvm",
    "--convert-math-to-llvm",
    "--convert-math-to-libm",
    "--convert-arith-to-llvm",
    "--convert-cf-to-llvm",
    "--convert-func-to-llvm",
    "--reconcile-unrealized-casts",
];

struct Expect {
    code: i32,
    out: String,
}

fn expectations(src: &str) -> Expect {
    let mut e = Expect {
        code: 0,
        out: String::new(),
    };
    for line in src.lines() {
        if let Some(v) = line.strip_prefix("// EXIT: ") {
            e.code = v.trim().parse().expect("EXIT value");
        } else if let Some(v) = line.strip_prefix("// OUT: ") {
            e.out.push_str(v);
            e.out.push('\n');
        } else if line.trim_end() == "// OUT:" {
            e.out.push('\n');
        }
    }
    e
}

/// Compiles `src` with upstream mlir-opt / mlir-translate / clang and
/// returns what it prints.
fn upstream_stdout(name: &str, src: &str) -> String {
    let t = tools();
    let missing = "mlir-opt/mlir-translate 19 not found: run scripts/setup-test-deps.sh";
    let (mlir_opt, translate) = (
        t.mlir_opt.clone().expect(missing),
        t.mlir_translate.clone().expect(missing),
    );
    let dir = scratch(&format!("{name}-upstream"));
    let input = dir.join("in.mlir");
    std::fs::write(&input, src).unwrap();
    let lowered = dir.join("lowered.mlir");
    let r = run(Command::new(&mlir_opt)
        .arg(&input)
        .args(UPSTREAM_PIPELINE)
        .arg("-o")
        .arg(&lowered));
    assert_eq!(
        r.code,
        Some(0),
        "upstream mlir-opt failed on {name}: {}",
        r.stderr
    );
    let ll = dir.join("up.ll");
    let r = run(Command::new(&translate)
        .arg("--mlir-to-llvmir")
        .arg(&lowered)
        .arg("-o")
        .arg(&ll));
    assert_eq!(
        r.code,
        Some(0),
        "mlir-translate failed on {name}: {}",
        r.stderr
    );
    let rt = dir.join("rt.c");
    std::fs::write(&rt, RUNNER_UTILS_C).unwrap();
    let exe = dir.join("up");
    let r = run(Command::new(&t.clang)
        .args(["-O2", "-w"])
        .arg(&ll)
        .arg(&rt)
        .arg("-o")
        .arg(&exe)
        .args(["-lm", "-Wl,--as-needed", "-lgomp"]));
    assert_eq!(
        r.code,
        Some(0),
        "clang failed on upstream {name}: {}",
        r.stderr
    );
    let out = run(&mut Command::new(&exe)).stdout;
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// Our scf→cf output, printed, must still parse and verify upstream.
fn check_lowered_parses_upstream(name: &str, m: &ir::Module) {
    let t = tools();
    let Some(mlir_opt) = t.mlir_opt else {
        panic!("mlir-opt 19 not found: run scripts/setup-test-deps.sh");
    };
    let text = ir::text::print_module(m, &ir::text::PrintOptions::default());
    let dir = scratch(&format!("{name}-cf"));
    let f = dir.join("cf.mlir");
    std::fs::write(&f, &text).unwrap();
    let r = run(Command::new(&mlir_opt).arg(&f).arg("-o").arg("/dev/null"));
    assert_eq!(
        r.code,
        Some(0),
        "upstream rejects our scf-to-cf output of {name}:\n{}\n{text}",
        r.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn run_program(name: &str, src: &str) {
    let want = expectations(src);
    let mut m =
        ir::text::parse_module(src, &format!("{name}.mlir")).unwrap_or_else(|d| panic!("{d}"));
    ir::verify(&m).unwrap_or_else(|d| panic!("{name} does not verify: {d}"));
    lower::scf_to_cf::lower_scf(&mut m).unwrap_or_else(|d| panic!("{d}"));
    ir::verify(&m).unwrap_or_else(|d| panic!("{name} after scf-to-cf: {d}"));
    check_lowered_parses_upstream(name, &m);
    let ll = lower::emit_llvm(&m, &lower::EmitOptions::default()).unwrap_or_else(|d| panic!("{d}"));
    let r = build_and_run(name, &ll);
    assert_eq!(
        r.code,
        Some(want.code),
        "{name}: exit code; stderr: {}",
        r.stderr
    );
    assert_eq!(r.stdout, want.out, "{name}: output");
    assert_eq!(
        upstream_stdout(name, src),
        r.stdout,
        "{name}: upstream MLIR prints something else"
    );
}

macro_rules! programs {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            run_program(stringify!($name), include_str!(concat!("programs/", stringify!($name), ".mlir")));
        }
    )*};
}

programs!(
    calls_memrefs,
    cf_direct,
    collatz,
    global_math,
    matmul_f32,
    realloc_stack,
    views
);
