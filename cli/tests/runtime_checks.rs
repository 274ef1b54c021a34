#![allow(clippy::expect_used, clippy::unwrap_used)] // test harness: setup failures abort
//! Runtime contract checks, executed: a model with dynamic dims (distinct
//! dim_params, so `onnxc run`'s own input checks cannot catch a mismatch)
//! run with inputs that break Add's broadcasting, MatMul's inner dim and
//! Gather's index range must stop with the op's message and a non-zero
//! exit (one case under valgrind: no invalid access before the abort);
//! good inputs must match onnxruntime. The model and the expected outputs
//! come from `runtime_checks/make_model.py` (python3 + onnx + onnxruntime).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".into())
}

fn make_model(dir: &Path) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/runtime_checks/make_model.py");
    let out = Command::new(python())
        .arg(&script)
        .arg(dir)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "{} failed (python3 + onnx + onnxruntime needed):\n{}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn run(dir: &Path, set: &str, valgrind: bool) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_onnxc"));
    cmd.arg("run").arg(dir.join("model.onnx"));
    for i in 0..5 {
        cmd.arg("--input")
            .arg(dir.join(set).join(format!("input_{i}.pb")));
    }
    if valgrind {
        cmd.arg("--valgrind");
    }
    cmd.arg("--output-dir").arg(dir.join(set).join("out"));
    cmd.output().expect("run onnxc")
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("onnxc-runtime-checks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn expect_abort(dir: &Path, set: &str, valgrind: bool, message: &str) {
    let out = run(dir, set, valgrind);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{set}: the run succeeded");
    assert!(
        stderr.contains(&format!("assertion failed: {message}")),
        "{set}: stderr lacks the check's message:\n{stderr}"
    );
    for bad in ["Invalid read", "Invalid write", "uninitialised"] {
        assert!(!stderr.contains(bad), "{set}: valgrind: {stderr}");
    }
}

fn close(got: &Path, want: &Path) {
    let (_, g) = frontend::tensor_io::read_tensor_pb(got).unwrap();
    let (_, w) = frontend::tensor_io::read_tensor_pb(want).unwrap();
    assert_eq!(g.shape(), w.shape(), "{}", got.display());
    for (k, (g, w)) in g.iter().zip(w.iter()).enumerate() {
        let (g, w) = (g.f64(), w.f64());
        assert!(
            (g - w).abs() <= 1e-5 + 1e-4 * w.abs(),
            "{}[{k}]: got {g}, expected {w}",
            got.display()
        );
    }
}

#[test]
fn contract_checks_stop_bad_inputs_and_pass_good_ones() {
    let dir = scratch();
    make_model(&dir);

    let out = run(&dir, "good", false);
    assert!(
        out.status.success(),
        "good inputs failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for i in 0..2 {
        let got = dir.join("good/out").join(format!("output_{i}.pb"));
        close(&got, &dir.join("good").join(format!("expected_{i}.pb")));
    }

    let add = "onnx.Add at node 'add1': input 1 dim 0 is not 1 and differs from the output's";
    expect_abort(&dir, "bad_add", false, add);
    let mm = "onnx.MatMul at node 'mm1': the inner dims of A and B differ";
    expect_abort(&dir, "bad_matmul", false, mm);
    let gather = "onnx.Gather at node 'gather1': an index is out of range of data dim 0";
    expect_abort(&dir, "bad_gather_neg", false, gather);
    expect_abort(&dir, "bad_gather", true, gather);
    let _ = std::fs::remove_dir_all(&dir);
}
