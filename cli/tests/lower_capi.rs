#![allow(clippy::expect_used, clippy::unwrap_used)] // test helpers abort on setup failure
//! `--emit lib|obj|llvm` end to end: the C example of docs/ABI.md built
//! against a generated library and compared with onnxruntime (and run
//! under valgrind), the weights sidecar, object files, and the error when
//! clang is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

fn onnxc(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_onnxc"))
        .args(args)
        .output()
        .expect("run onnxc")
}

fn onnxc_ok(args: &[&str]) {
    let out = onnxc(args);
    assert!(
        out.status.success(),
        "onnxc {} failed:\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn workdir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("lower_capi")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create workdir");
    d
}

const SETUP: &str = "run scripts/setup-test-deps.sh";

fn llvm19(tool: &str) -> PathBuf {
    let p = Path::new("/usr/lib/llvm-19/bin").join(tool);
    assert!(p.is_file(), "{} not found: {SETUP}", p.display());
    p
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// The C block of docs/ABI.md that has a `main`.
fn abi_example() -> String {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/ABI.md"))
        .expect("read docs/ABI.md");
    doc.split("```c\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .find(|b| b.contains("int main"))
        .expect("docs/ABI.md has a C example with main")
        .to_string()
}

/// onnxruntime's output for the example's ramp input, one value a line.
fn ort_reference(model: &Path) -> Vec<f64> {
    let script = r#"
import sys, numpy as np, onnxruntime as ort
s = ort.InferenceSession(sys.argv[1], providers=["CPUExecutionProvider"])
i = s.get_inputs()[0]
shape = [d if isinstance(d, int) and d > 0 else 1 for d in i.shape]
x = (np.arange(int(np.prod(shape))) % 17).astype(np.float32) / np.float32(17)
for v in s.run(None, {i.name: x.reshape(shape)})[0].reshape(-1):
    print(repr(float(v)))
"#;
    let py = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(py)
        .args(["-c", script, s(model)])
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "onnxruntime failed ({SETUP}):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    numbers(&out.stdout)
}

fn numbers(text: &[u8]) -> Vec<f64> {
    String::from_utf8_lossy(text)
        .lines()
        .map(|l| l.trim().parse::<f64>().expect("a number per line"))
        .collect()
}

#[test]
fn abi_example_runs_against_a_generated_library() {
    let dir = workdir("example");
    let model = dir.join("cnn.onnx");
    onnxc_ok(&["zoo", "gen", "cnn", "-o", s(&model)]);
    let lib = dir.join("libcnn.so");
    onnxc_ok(&["compile", s(&model), "--emit", "lib", "-o", s(&lib)]);
    assert!(
        dir.join("cnn.h").is_file(),
        "the header is written next to the library"
    );
    let nm = Command::new(llvm19("llvm-nm"))
        .args(["-D", "--defined-only"])
        .arg(&lib)
        .output()
        .expect("run llvm-nm");
    let exported = String::from_utf8_lossy(&nm.stdout);
    assert!(exported.contains("cnn_run") && exported.contains("cnn_free_outputs"));
    assert!(
        !exported.contains("main_graph") && !exported.contains("onnxc_entry"),
        "internal symbols must stay local:\n{exported}"
    );

    let main_c = dir.join("main.c");
    std::fs::write(&main_c, abi_example()).unwrap();
    let exe = dir.join("main");
    let cc = Command::new(llvm19("clang"))
        .args(["-O1", "-Wall", "-Werror"])
        .arg(&main_c)
        .arg(format!("-I{}", s(&dir)))
        .arg(format!("-L{}", s(&dir)))
        .args(["-lcnn", "-Wl,-rpath,$ORIGIN", "-o"])
        .arg(&exe)
        .output()
        .expect("run clang");
    assert!(
        cc.status.success(),
        "the ABI example does not build:\n{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let got = numbers(&Command::new(&exe).output().expect("run example").stdout);
    let want = ort_reference(&model);
    assert_eq!(got.len(), want.len(), "output size");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-4 + 1e-4 * w.abs(),
            "output {i}: onnxc {g}, onnxruntime {w}"
        );
    }
    let vg = Command::new("valgrind")
        .args(["-q", "--error-exitcode=99", "--leak-check=full"])
        .args(["--errors-for-leak-kinds=definite,indirect,possible"])
        .arg(concat!(
            "--suppressions=",
            env!("CARGO_MANIFEST_DIR"),
            "/../scripts/valgrind-gomp.supp"
        ))
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("valgrind: {e} ({SETUP})"));
    assert_eq!(
        vg.status.code(),
        Some(0),
        "valgrind:\n{}",
        String::from_utf8_lossy(&vg.stderr)
    );
}

#[test]
fn weights_go_to_a_sidecar_the_ir_includes() {
    let dir = workdir("sidecar");
    let model = dir.join("cnn.onnx");
    onnxc_ok(&["zoo", "gen", "cnn", "-o", s(&model)]);
    let ll = dir.join("cnn.ll");
    onnxc_ok(&["compile", s(&model), "--emit", "llvm", "-o", s(&ll)]);
    let bin = dir.join("cnn.weights.bin");
    let text = std::fs::read_to_string(&ll).unwrap();
    let weights = std::fs::metadata(&bin).expect("sidecar written").len();
    // The CNN has about 11k float parameters, most in tensors > 1024.
    assert!(weights > 40_000, "sidecar has {weights} bytes");
    assert!(text.contains(".incbin"), "the IR pulls the sidecar in");
    // Only small constants (at most 1024 elements) stay inline.
    for line in text.lines().filter(|l| l.contains(" constant [")) {
        let n: u64 = line
            .split(" constant [")
            .nth(1)
            .and_then(|r| r.split(" x ").next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(
            n <= 1024 || line.starts_with("@__onnxc_weights = external"),
            "large constant printed into the IR: {}",
            &line[..line.len().min(120)]
        );
    }
    for (opt, extra) in [
        (llvm19("opt"), None),
        (PathBuf::from("/usr/bin/opt"), Some("-opaque-pointers")),
    ] {
        let out = Command::new(&opt)
            .args(extra)
            .args(["-passes=verify", "-disable-output"])
            .arg(&ll)
            .output()
            .unwrap_or_else(|e| panic!("{}: {e} ({SETUP})", opt.display()));
        assert!(
            out.status.success(),
            "{} -passes=verify:\n{}",
            opt.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The object embeds the weights and exports the descriptor entry.
    let obj = dir.join("cnn.o");
    onnxc_ok(&["compile", s(&model), "--emit", "obj", "-o", s(&obj)]);
    let size = std::fs::metadata(&obj).unwrap().len();
    assert!(size > weights, "object ({size} bytes) holds the weights");
    let nm = Command::new(llvm19("llvm-nm"))
        .arg(&obj)
        .output()
        .expect("llvm-nm");
    assert!(String::from_utf8_lossy(&nm.stdout).contains("T onnxc_entry"));
}

#[test]
fn missing_clang_is_a_clear_error() {
    let dir = workdir("noclang");
    let model = dir.join("mlp.onnx");
    onnxc_ok(&["zoo", "gen", "mlp", "-o", s(&model)]);
    let empty = dir.join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let out = onnxc(&[
        "compile",
        s(&model),
        "--emit",
        "lib",
        "-o",
        s(&dir.join("libmlp.so")),
        "--llvm-bin",
        s(&empty),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("clang not found") && err.contains("--llvm-bin"),
        "{err}"
    );
    // --emit llvm needs no tool.
    onnxc_ok(&[
        "compile",
        s(&model),
        "--emit",
        "llvm",
        "-o",
        s(&dir.join("mlp.ll")),
        "--llvm-bin",
        s(&empty),
    ]);
}
