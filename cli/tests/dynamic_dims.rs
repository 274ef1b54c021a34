#![allow(clippy::expect_used, clippy::unwrap_used)] // test harness: setup failures abort
//! Kernels take runtime dims (issue 14): every model of
//! `dynamic_dims/make_models.py` declares its inputs with dim_params, is
//! compiled once with `--emit lib` and called through the C API at two
//! input sizes by `scripts/corpus/run.py`, which compares each output with
//! onnxruntime's (the onnx reference evaluator's for ops onnxruntime does
//! not run yet) at rtol 1e-3, atol 1e-4. A model may come with inputs
//! that take a branch that cannot work (`NAME.abort/`): `onnxc run` must
//! then stop with the message the script expects.

use std::path::Path;
use std::process::Command;

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".into())
}

fn run_python(args: &[&str]) -> String {
    let out = Command::new(python())
        .args(args)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "python3 {} failed (python3 + onnx + onnxruntime needed):\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Each model's problems: not compiled, or a size that did not match.
fn failures(results: &serde_json::Value) -> Vec<String> {
    let mut bad = Vec::new();
    for r in results["results"].as_array().expect("results array") {
        let name = r["model"].as_str().unwrap_or("?");
        if r["compiled"] != serde_json::Value::Bool(true) {
            bad.push(format!("{name}: {}", r["error"]));
            continue;
        }
        let sizes = r["sizes"].as_array().map_or(&[][..], Vec::as_slice);
        if sizes.len() < 2 {
            bad.push(format!("{name}: {} sizes run", sizes.len()));
        }
        for s in sizes {
            if s["status"] != "match" {
                bad.push(format!("{name} size {}: {} {}", s["size"], s["status"], s));
            }
        }
    }
    bad
}

#[test]
fn kernels_take_runtime_dims_and_match_onnxruntime_at_two_sizes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dynamic_dims");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let corpus = dir.join("models");
    let s = |p: &Path| p.to_str().expect("utf-8 path").to_string();
    let make = root.join("cli/tests/dynamic_dims/make_models.py");
    run_python(&[&s(&make), &s(&corpus)]);
    let json = dir.join("results.json");
    run_python(&[
        &s(&root.join("scripts/corpus/run.py")),
        "--corpus",
        &s(&corpus),
        "--onnxc",
        env!("CARGO_BIN_EXE_onnxc"),
        "--work",
        &s(&dir.join("work")),
        "--json",
        &s(&json),
        "--no-time",
    ]);
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let models = results["results"].as_array().map_or(0, Vec::len);
    assert!(models > 0, "no models ran");
    let bad = failures(&results);
    assert!(
        bad.is_empty(),
        "{} of {models} models failed:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
