//! The shape fuzzer (`scripts/shape_fuzz.py`) in its CI mode over the CI
//! corpus (`scripts/corpus/ci_models.py`): every model compiled once with
//! its declared dynamic dims and folded once, then run at seeded random
//! sizes of every dynamic dim (1s, a 0, sizes around the saved ones)
//! against onnxruntime: the compiled library through its C API, the folded
//! model and its value_info (one size per dim_param), and the small sizes
//! under valgrind.

// Test helpers outside #[test] fns panic on failure by design.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".into())
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run_python(args: &[&str]) -> Output {
    Command::new(python())
        .args(args)
        .current_dir(repo())
        .output()
        .expect("python3 runs (scripts/setup-test-deps.sh)")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn ci_corpus_matches_onnxruntime_at_random_sizes() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("shape-fuzz");
    let _ = std::fs::remove_dir_all(&dir);
    let corpus = dir.join("corpus");
    let work = dir.join("work");
    let results = dir.join("results.json");
    let corpus_s = corpus.to_string_lossy().into_owned();
    let work_s = work.to_string_lossy().into_owned();
    let results_s = results.to_string_lossy().into_owned();

    let generated = run_python(&["scripts/corpus/ci_models.py", "-o", &corpus_s]);
    assert!(
        generated.status.success(),
        "ci_models.py: {}",
        text(&generated)
    );

    let out = run_python(&[
        "scripts/shape_fuzz.py",
        "--mode",
        "ci",
        "--seed",
        "0",
        "--corpus",
        &corpus_s,
        "--onnxc",
        env!("CARGO_BIN_EXE_onnxc"),
        "--work",
        &work_s,
        "--json",
        &results_s,
    ]);
    assert!(
        out.status.success(),
        "shape_fuzz.py ({}): {}",
        out.status,
        text(&out)
    );

    // The fuzzer ran something: a broken oracle would skip every case.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    let cases = doc["summary"]["cases"].as_u64().unwrap_or(0);
    assert!(cases >= 40, "only {cases} cases run: {}", text(&out));
}
