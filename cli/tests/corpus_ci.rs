//! The CI subset of the real-model corpus (`scripts/corpus/ci_models.py`:
//! small models written the way exporters write them, dynamic dims
//! included): each is compiled once with its declared dims (`--emit lib`)
//! and called through the C API at two input sizes by
//! `scripts/corpus/run.py`, which compares every output with onnxruntime.

// Test helpers outside #[test] fns panic on failure by design.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".into())
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run_python(args: &[&str]) {
    let out = Command::new(python())
        .args(args)
        .current_dir(repo())
        .output()
        .expect("python3 runs (scripts/setup-test-deps.sh)");
    assert!(
        out.status.success(),
        "python3 {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One model's outcome: `None` when every size matched onnxruntime, else
/// what went wrong.
fn failure(result: &serde_json::Value) -> Option<String> {
    let name = result["model"].as_str().unwrap_or("?");
    if result["compiled"] != serde_json::Value::Bool(true) {
        return Some(format!("{name}: does not compile: {}", result["error"]));
    }
    let sizes = result["sizes"].as_array()?;
    if sizes.len() < 2 {
        return Some(format!("{name}: {} sizes run, want 2", sizes.len()));
    }
    let bad: Vec<String> = sizes
        .iter()
        .filter(|s| s["status"] != "match")
        .map(|s| format!("size {}: {} {}", s["size"], s["status"], s["error"]))
        .collect();
    (!bad.is_empty()).then(|| format!("{name}: {}", bad.join("; ")))
}

/// `run.py` over `corpus` (correctness only) with `extra` arguments: the
/// per-model results.
fn run_corpus(corpus: &str, work: &Path, extra: &[&str]) -> Vec<serde_json::Value> {
    let results = work.join("results.json");
    let (work_s, results_s) = (work.to_string_lossy(), results.to_string_lossy());
    let mut args = vec![
        "scripts/corpus/run.py",
        "--corpus",
        corpus,
        "--onnxc",
        env!("CARGO_BIN_EXE_onnxc"),
        "--work",
        &work_s,
        "--json",
        &results_s,
        "--no-time",
    ];
    args.extend(extra);
    run_python(&args);
    let text = std::fs::read_to_string(&results).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["results"].as_array().expect("a results array").clone()
}

#[test]
fn ci_corpus_compiles_once_and_matches_onnxruntime_at_two_sizes() {
    let target = repo().join("target");
    let corpus = target.join("corpus-ci");
    let work = target.join("corpus-ci-run");
    let corpus_s = corpus.to_string_lossy().into_owned();
    run_python(&["scripts/corpus/ci_models.py", "-o", &corpus_s]);
    let results = run_corpus(&corpus_s, &work, &[]);
    assert!(results.len() >= 8, "{} models run", results.len());
    let failures: Vec<String> = results.iter().filter_map(failure).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Whether this machine runs code built for `flag` (a /proc/cpuinfo flag).
fn host_has(flag: &str) -> bool {
    std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|t| t.split_whitespace().any(|w| w == flag))
}

/// The int8 kernels at every vector width this machine can run: the
/// portable build above takes 128-bit vectors and widened dot products;
/// here 256 bits (AVX2), 512 bits without VNNI (x86-64-v4) and with it
/// (`vpdpbusd`, the host's own CPU).
#[test]
fn int8_kernels_match_onnxruntime_at_every_vector_width() {
    let target = repo().join("target");
    let corpus = target.join("corpus-ci-int8");
    let corpus_s = corpus.to_string_lossy().into_owned();
    run_python(&[
        "scripts/corpus/ci_models.py",
        "--only",
        "ci_int8,ci_int8_conv,ci_qdq",
        "-o",
        &corpus_s,
    ]);
    let cpus = [
        ("x86-64-v3", "avx2"),
        ("x86-64-v4", "avx512f"),
        ("native", "avx512_vnni"),
    ];
    let mut ran = 0;
    for (cpu, flag) in cpus {
        if !host_has(flag) {
            eprintln!("skipping --target-cpu {cpu}: this CPU has no {flag}");
            continue;
        }
        let work = target.join(format!("corpus-ci-int8-{cpu}"));
        let arg = format!("--compile-arg=--target-cpu={cpu}");
        let results = run_corpus(&corpus_s, &work, &[&arg]);
        assert_eq!(results.len(), 3, "{cpu}: the three int8 models run");
        let failures: Vec<String> = results.iter().filter_map(failure).collect();
        assert!(failures.is_empty(), "{cpu}: {}", failures.join("\n"));
        ran += 1;
    }
    eprintln!("int8 kernels checked at {ran} of {} widths", cpus.len());
}
