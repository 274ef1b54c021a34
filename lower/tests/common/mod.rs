//! Shared test helpers: declarations and printing for test programs (IR
//! itself is built with `ir::Builder`'s typed methods), and the
//! build-and-run harness (opt verify, clang -O2, run, valgrind).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use ir::attr::Attribute;
use ir::{BlockId, Builder, Module, OpId, OpSpec, Sym, Type, ValueId};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

// ---------------------------------------------------------------- tools

pub struct Tools {
    pub clang: PathBuf,
    pub opt: PathBuf,
    pub valgrind: Option<PathBuf>,
    pub mlir_opt: Option<PathBuf>,
    pub mlir_translate: Option<PathBuf>,
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// clang and opt from `$LLVM_BIN`, `/usr/lib/llvm-19/bin` or PATH; fails
/// loudly when missing.
pub fn tools() -> Tools {
    let dirs: Vec<PathBuf> = std::env::var_os("LLVM_BIN")
        .map(PathBuf::from)
        .into_iter()
        .chain([PathBuf::from("/usr/lib/llvm-19/bin")])
        .collect();
    let find = |names: &[&str]| -> Option<PathBuf> {
        for d in &dirs {
            for n in names {
                let p = d.join(n);
                if p.is_file() {
                    return Some(p);
                }
            }
        }
        names.iter().find_map(|n| which(n))
    };
    let missing = "LLVM 19 tools not found: run scripts/setup-test-deps.sh (or set LLVM_BIN)";
    let clang = find(&["clang", "clang-19"]).expect(missing);
    let opt = find(&["opt", "opt-19"]).expect(missing);
    let valgrind = which("valgrind");
    let mlir_opt = find(&["mlir-opt", "mlir-opt-19"]);
    let mlir_translate = find(&["mlir-translate", "mlir-translate-19"]);
    Tools {
        clang,
        opt,
        valgrind,
        mlir_opt,
        mlir_translate,
    }
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A fresh directory for one test's files.
pub fn scratch(name: &str) -> PathBuf {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("onnxc-lower-{}-{n}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

pub struct RunResult {
    pub stdout: String,
    pub stderr: String,
    pub code: Option<i32>,
}

pub fn run(cmd: &mut Command) -> RunResult {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    RunResult {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code(),
    }
}

/// Verifies `ll` with opt, builds it with clang -O2 and runs it; also
/// builds it at -O0 (where no allocation is optimized away) and runs that
/// under valgrind, which must report no errors or leaks and must print the
/// same output.
pub fn build_and_run(name: &str, ll: &str) -> RunResult {
    let t = tools();
    let dir = scratch(name);
    let src = dir.join(format!("{name}.ll"));
    std::fs::write(&src, ll).expect("write .ll");
    verify_with_opt(&t, name, &src, ll);
    let build = |level: &str| {
        let exe = dir.join(format!("{name}{level}"));
        let c = run(Command::new(&t.clang)
            .arg(level)
            .arg("-w")
            .arg(&src)
            .arg("-o")
            .arg(&exe)
            .args(["-lm", "-Wl,--as-needed", "-lgomp"]));
        assert_eq!(
            c.code,
            Some(0),
            "clang {level} failed for {name}:\n{}\n--- IR ---\n{ll}",
            c.stderr
        );
        exe
    };
    let fast = build("-O2");
    let r = run(&mut Command::new(&fast));
    let slow = build("-O0");
    let vg = valgrind(&t, &slow);
    let _ = std::fs::remove_dir_all(&dir);
    assert_ne!(
        vg.code,
        Some(99),
        "valgrind found errors in {name}:\n{}",
        vg.stderr
    );
    assert_eq!(
        vg.stdout, r.stdout,
        "{name}: -O0 under valgrind printed something else than -O2"
    );
    r
}

fn valgrind(t: &Tools, exe: &Path) -> RunResult {
    let vg = t
        .valgrind
        .as_ref()
        .expect("valgrind not found: run scripts/setup-test-deps.sh");
    run(Command::new(vg)
        .args([
            "-q",
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect",
        ])
        .arg(exe))
}

/// LLVM 14's opt (Debian's `/usr/bin/opt`, or `$LLVM14_OPT`): the oldest
/// LLVM whose verifier the emitted IR must satisfy (with opaque pointers).
pub fn opt14() -> PathBuf {
    let p = std::env::var_os("LLVM14_OPT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/opt"));
    let out = Command::new(&p).arg("--version").output();
    let ok = out
        .as_ref()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("LLVM version 14"));
    assert!(
        ok,
        "LLVM 14 opt not found at {} (run scripts/setup-test-deps.sh or set LLVM14_OPT)",
        p.display()
    );
    p
}

/// `opt -passes=verify` of LLVM 19 and of LLVM 14 (`-opaque-pointers`).
pub fn verify_with_opt(t: &Tools, name: &str, src: &Path, ll: &str) {
    let v = run(Command::new(&t.opt)
        .args(["-passes=verify", "-disable-output"])
        .arg(src));
    assert_eq!(
        v.code,
        Some(0),
        "opt-19 verify failed for {name}:\n{}\n--- IR ---\n{ll}",
        v.stderr
    );
    let v = run(Command::new(opt14())
        .args(["-opaque-pointers", "-passes=verify", "-disable-output"])
        .arg(src));
    assert_eq!(
        v.code,
        Some(0),
        "opt-14 verify failed for {name}:\n{}\n--- IR ---\n{ll}",
        v.stderr
    );
}

/// Runs scf→cf, verifies, emits LLVM IR, and checks the text with the
/// LLVM 19 and LLVM 14 verifiers (every module the lower tests emit).
pub fn lower_and_emit(m: &mut Module) -> String {
    ir::verify(m).unwrap_or_else(|d| panic!("input IR does not verify: {d}"));
    lower::scf_to_cf::lower_scf(m).expect("scf to cf");
    ir::verify(m).unwrap_or_else(|d| panic!("IR after scf-to-cf does not verify: {d}"));
    let ll = lower::emit_llvm(m, &lower::EmitOptions::default())
        .unwrap_or_else(|d| panic!("emit failed: {d}"));
    let dir = scratch("verify");
    let src = dir.join("module.ll");
    std::fs::write(&src, &ll).expect("write .ll");
    verify_with_opt(&tools(), "module", &src, &ll);
    let _ = std::fs::remove_dir_all(&dir);
    ll
}

/// Lowers, emits, builds and runs `m`; returns stdout after checking the
/// exit code.
pub fn execute(name: &str, m: &mut Module, want_code: i32) -> String {
    let ll = lower_and_emit(m);
    let r = build_and_run(name, &ll);
    assert_eq!(
        r.code,
        Some(want_code),
        "{name}: exit code; stderr:\n{}\n--- IR ---\n{ll}",
        r.stderr
    );
    r.stdout
}

// ---------------------------------------------------------------- building

pub fn memref(shape: &[i64], elem: Type) -> Type {
    Type::memref(shape.to_vec(), elem)
}

/// Declares `@name` without a body (e.g. the print helpers, libc).
pub fn declare(m: &mut Module, name: &str, inputs: Vec<Type>, results: Vec<Type>) {
    let body = m.body();
    let mut b = Builder::at_end(m, body);
    b.create(
        "func.func",
        OpSpec {
            attrs: vec![
                (Sym::new("sym_name"), Attribute::string(name)),
                (
                    Sym::new("function_type"),
                    Attribute::Type(Type::function(inputs, results)),
                ),
                (Sym::new("sym_visibility"), Attribute::string("private")),
            ],
            regions: 1,
            ..OpSpec::default()
        },
    );
}

/// Declares the runner-utils print helpers.
pub fn declare_prints(m: &mut Module) {
    declare(m, "printI64", vec![Type::i64()], vec![]);
    declare(m, "printF64", vec![Type::f64()], vec![]);
    declare(m, "printF32", vec![Type::f32()], vec![]);
    declare(m, "printNewline", vec![], vec![]);
}

/// Printing through the runner-utils helpers (see `declare_prints`).
pub trait Print {
    fn print_i64(&mut self, v: ValueId);
    fn print_f64(&mut self, v: ValueId);
    fn newline(&mut self);
}

impl Print for Builder<'_> {
    fn print_i64(&mut self, v: ValueId) {
        self.call("printI64", &[v], &[]);
        self.newline();
    }
    fn print_f64(&mut self, v: ValueId) {
        self.call("printF64", &[v], &[]);
        self.newline();
    }
    fn newline(&mut self) {
        self.call("printNewline", &[], &[]);
    }
}

/// A new function `name` at the end of the module; returns its entry block.
pub fn func(m: &mut Module, name: &str, inputs: Vec<Type>, results: Vec<Type>) -> (OpId, BlockId) {
    let body = m.body();
    let mut b = Builder::at_end(m, body);
    b.func(name, inputs, results)
}
