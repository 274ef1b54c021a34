//! `onnxc fold` against onnx-simplifier on small models of the shape
//! arithmetic exporters write around dynamic dims
//! (scripts/corpus/fold_ci_models.py) and the corpus' CI models
//! (scripts/corpus/ci_models.py): onnxc must leave no more nodes than
//! onnxsim, with the inputs' dims as declared and fixed to one size, its
//! output must pass onnx.checker (full check) and match onnxruntime on
//! the original model at two sizes (scripts/corpus/fold_compare.py
//! --assert). onnxsim comes from scripts/setup-test-deps.sh.

// Test helpers outside #[test] fns panic on failure by design.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

fn python(script: &str, args: &[&str]) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scripts/corpus")
        .join(script);
    let out = Command::new("python3")
        .arg(&path)
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{script} {args:?} failed:\n{text}");
    text
}

#[test]
fn fold_leaves_no_more_nodes_than_onnxsim() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fold-vs-onnxsim");
    let _ = std::fs::remove_dir_all(&dir);
    let (models, ci, work) = (dir.join("models"), dir.join("ci"), dir.join("work"));
    let s = |p: &Path| p.to_str().unwrap().to_string();
    python("fold_ci_models.py", &["-o", &s(&models)]);
    python("ci_models.py", &["-o", &s(&ci)]);
    let report = python(
        "fold_compare.py",
        &[
            "--corpus",
            &s(&models),
            "--corpus",
            &s(&ci),
            "--onnxc",
            env!("CARGO_BIN_EXE_onnxc"),
            "--work",
            &s(&work),
            "--assert",
        ],
    );
    println!("{report}");
}
