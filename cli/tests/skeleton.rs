#![allow(clippy::expect_used, clippy::unwrap_used)] // test helpers abort on setup failure
//! The walking skeleton: generated models go through every stage, run under
//! valgrind, and must match onnxruntime. Each stage leaves evidence that is
//! checked, so skipping one fails the test.

use std::path::{Path, PathBuf};
use std::process::Command;

fn onnxc(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_onnxc"))
        .args(args)
        .output()
        .expect("run onnxc");
    assert!(
        out.status.success(),
        "onnxc {} failed:\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".into())
}

fn workdir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("skeleton")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create workdir");
    d
}

fn read(path: &Path) -> (Vec<i64>, Vec<f64>) {
    let (_, e) = frontend::tensor_io::read_tensor_pb(path).expect("read tensor");
    (e.shape().to_vec(), e.iter().map(|v| v.f64()).collect())
}

fn stage(model: &str, stop: &str) -> String {
    onnxc(&["compile", model, "--stop-after", stop, "--verify-each"])
}

fn skeleton(name: &str, folded_op: &str) {
    let dir = workdir(name);
    let model = dir.join(format!("{name}.onnx"));
    let m = model.to_str().expect("utf8 path");
    let inputs = dir.join("in");
    onnxc(&[
        "zoo",
        "gen",
        name,
        "-o",
        m,
        "--inputs",
        inputs.to_str().expect("utf8"),
    ]);
    let input = inputs.join("input_0.pb");

    // Every stage did its job.
    let imported = stage(m, "import");
    assert!(imported.contains("\"onnx.Conv\"") || imported.contains("\"onnx.MatMul\""));
    assert!(
        imported.contains(folded_op),
        "the model has a weight path to fold"
    );
    let folded = stage(m, "constprop");
    assert!(
        !folded.contains(folded_op),
        "constprop folded the weight path:\n{folded}"
    );
    let buffers = stage(m, "bufferize");
    assert!(
        !buffers.contains("\"onnx."),
        "no onnx op survives bufferize"
    );
    assert!(buffers.contains("memref.alloc") && buffers.contains("scf.for"));
    assert!(!buffers.contains("memref.dealloc"));
    let freed = stage(m, "dealloc");
    // Small buffers (all of mlp's) go to the stack; the rest are freed.
    assert!(
        freed.contains("memref.dealloc") || freed.contains("memref.alloca"),
        "the dealloc stage freed buffers or put them on the stack"
    );
    let llvm = onnxc(&["compile", m, "--emit", "llvm"]);
    assert!(
        (llvm.contains("call void @__onnxc_release") || llvm.contains(" = alloca "))
            && llvm.contains("define void @onnxc_entry")
    );

    // Executed by LLVM-built code under valgrind, compared with onnxruntime.
    let ours = dir.join("ours");
    onnxc(&[
        "run",
        m,
        "--input",
        input.to_str().expect("utf8"),
        "--output-dir",
        ours.to_str().expect("utf8"),
        "--valgrind",
    ]);
    let ort = dir.join("ort");
    let status = Command::new(python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/ort_oracle.py"))
        .args([
            m,
            "--input",
            input.to_str().expect("utf8"),
            "--output-dir",
            ort.to_str().expect("utf8"),
        ])
        .status()
        .expect("python3 with onnxruntime (run scripts/setup-test-deps.sh)");
    assert!(
        status.success(),
        "onnxruntime oracle failed (run scripts/setup-test-deps.sh)"
    );
    let (s1, a) = read(&ours.join("output_0.pb"));
    let (s2, b) = read(&ort.join("output_0.pb"));
    assert_eq!(s1, s2);
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert!(
            (x - y).abs() <= 1e-4 * y.abs() + 1e-5,
            "{name}: element {i}: onnxc {x} vs onnxruntime {y}"
        );
    }
}

#[test]
fn mlp_matches_onnxruntime() {
    skeleton("mlp", "onnx.Transpose");
}

#[test]
fn cnn_matches_onnxruntime() {
    skeleton("cnn", "onnx.Reshape");
}

/// `onnxc fold` writes a valid model without the folded ops whose outputs
/// onnxruntime computes as the original's.
#[test]
fn fold_round_trips_through_onnxruntime() {
    let dir = workdir("fold");
    let model = dir.join("cnn.onnx");
    let folded = dir.join("cnn.folded.onnx");
    let inputs = dir.join("in");
    let (m, f) = (
        model.to_str().expect("utf8"),
        folded.to_str().expect("utf8"),
    );
    onnxc(&[
        "zoo",
        "gen",
        "cnn",
        "-o",
        m,
        "--inputs",
        inputs.to_str().expect("utf8"),
    ]);
    onnxc(&["fold", m, "-o", f]);
    let check = Command::new(python())
        .args([
            "-c",
            "import onnx,sys; m=onnx.load(sys.argv[1]); onnx.checker.check_model(m, full_check=True); \
             ops=[n.op_type for n in m.graph.node]; assert 'Reshape' not in ops and 'Mul' not in ops, ops",
            f,
        ])
        .status()
        .expect("python3 with onnx (run scripts/setup-test-deps.sh)");
    assert!(
        check.success(),
        "the folded model is invalid or still has the weight path"
    );
    let input = inputs.join("input_0.pb");
    for (which, path) in [("orig", m), ("folded", f)] {
        let status = Command::new(python())
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/ort_oracle.py"))
            .args([
                path,
                "--input",
                input.to_str().expect("utf8"),
                "--output-dir",
            ])
            .arg(dir.join(which))
            .status()
            .expect("python3");
        assert!(status.success());
    }
    let (_, a) = read(&dir.join("orig/output_0.pb"));
    let (_, b) = read(&dir.join("folded/output_0.pb"));
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() <= 1e-5 * y.abs() + 1e-6, "{x} vs {y}");
    }
}

/// `--emit lib` builds a shared library with the C API, plus its header.
#[test]
fn emit_lib_exports_the_c_entry() {
    let dir = workdir("lib");
    let model = dir.join("mlp.onnx");
    let lib = dir.join("libmlp.so");
    onnxc(&["zoo", "gen", "mlp", "-o", model.to_str().expect("utf8")]);
    onnxc(&[
        "compile",
        model.to_str().expect("utf8"),
        "--emit",
        "lib",
        "-o",
        lib.to_str().expect("utf8"),
    ]);
    // The per-model C API of docs/ABI.md (cli/tests/lower_capi.rs runs it).
    let header = std::fs::read_to_string(dir.join("mlp.h")).expect("header written");
    assert!(header.contains("int mlp_run(const onnxc_tensor *inputs, onnxc_tensor *outputs);"));
    let bytes = std::fs::read(&lib).expect("library written");
    assert!(bytes.starts_with(b"\x7fELF"));
    assert!(bytes.windows(7).any(|w| w == b"mlp_run"));
}
