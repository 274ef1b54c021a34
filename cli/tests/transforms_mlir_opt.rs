#![allow(clippy::expect_used, clippy::unwrap_used)] // test harness: setup failures abort
//! What `canonicalize,cse` print is accepted by upstream `mlir-opt` 19: the
//! transforms filetests, and the executed dealloc filetests after the
//! deallocation pipeline and its lowering (memref IR as the models give it).

use std::path::{Path, PathBuf};
use std::process::Command;
use testsuite::node_data::{parallel_map, repo_root};

const MLIR_OPT: &str = "/usr/lib/llvm-19/bin/mlir-opt";

fn mlir_files(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|e| e == "mlir")
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
        })
        .collect();
    v.sort();
    v
}

fn accepted(file: &Path, pipeline: &str, tag: &str) -> Result<(), String> {
    let out = std::env::temp_dir().join(format!("onnxc-canon-{}-{tag}.mlir", std::process::id()));
    let r = Command::new(env!("CARGO_BIN_EXE_onnxc"))
        .arg("opt")
        .arg(file)
        .args(["-p", pipeline, "-o"])
        .arg(&out)
        .output()
        .unwrap();
    if !r.status.success() {
        return Err(format!("onnxc: {}", String::from_utf8_lossy(&r.stderr)));
    }
    let r = Command::new(MLIR_OPT)
        .arg(&out)
        .args(["-o", "/dev/null"])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&out);
    if !r.status.success() {
        return Err(format!(
            "mlir-opt rejects it: {}",
            String::from_utf8_lossy(&r.stderr)
        ));
    }
    Ok(())
}

#[test]
fn canonicalize_cse_output_is_accepted_by_mlir_opt() {
    assert!(
        Path::new(MLIR_OPT).is_file(),
        "{MLIR_OPT} missing: scripts/setup-test-deps.sh"
    );
    let ft = repo_root().join("tests/filetests");
    let mut jobs: Vec<(PathBuf, &str)> = mlir_files(&ft.join("transforms"), "")
        .into_iter()
        .map(|p| (p, "canonicalize,cse"))
        .collect();
    jobs.extend(
        mlir_files(&ft.join("dealloc"), "run-")
            .into_iter()
            .map(|p| (p, "dealloc-pipeline,lower-deallocations,canonicalize,cse")),
    );
    assert!(jobs.len() > 10);
    let results = parallel_map(&jobs, |(p, pipeline)| {
        let tag = p.file_stem().unwrap().to_string_lossy().to_string();
        accepted(p, pipeline, &tag).map_err(|e| format!("{}: {e}", p.display()))
    });
    let failures: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
