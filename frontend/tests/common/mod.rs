//! Test helpers: generate ONNX models with the Python `onnx` package, load
//! and import them, and inspect the imported function.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use frontend::{import_model, load_model, LoadedModel};
use ir::{Module, OpId, Type};
use std::path::{Path, PathBuf};
use std::process::Command;

const PRELUDE: &str = "
import sys, os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
out = sys.argv[1]
def save(model, name='model.onnx', **kw):
    onnx.save(model, os.path.join(out, name), **kw)
";

/// A fresh, empty scratch directory for test `name`.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("frontend-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `script` (after a prelude defining `out`, `save`, `np`, `helper`...)
/// with `out` set to `dir`. Fails the test when Python or onnx is missing.
pub fn python(dir: &Path, script: &str) {
    let code = format!("{PRELUDE}\n{script}");
    let py = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let output = Command::new(&py).arg("-c").arg(&code).arg(dir).output().unwrap_or_else(|e| {
        panic!("cannot run {py} ({e}): the frontend tests generate models with python3 + onnx; run scripts/setup-test-deps.sh")
    });
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.contains("No module named") {
        panic!("python3 lacks a module the tests need ({stderr}); run scripts/setup-test-deps.sh");
    }
    assert!(
        output.status.success(),
        "python script failed:\n{stderr}\n--- script ---\n{code}"
    );
}

/// Generates `model.onnx` in a scratch dir with `script`; returns its path.
pub fn gen_model(name: &str, script: &str) -> PathBuf {
    let dir = scratch(name);
    python(&dir, script);
    dir.join("model.onnx")
}

pub fn load(path: &Path) -> LoadedModel {
    load_model(path).unwrap_or_else(|d| panic!("load failed: {d}"))
}

pub fn import(model: &LoadedModel) -> Module {
    let m = import_model(model).unwrap_or_else(|d| panic!("import failed: {d}"));
    ir::verify(&m).unwrap_or_else(|d| panic!("imported module does not verify: {d}"));
    m
}

/// The `@main_graph` function.
pub fn main_func(m: &Module) -> OpId {
    m.lookup_symbol("main_graph").expect("no @main_graph")
}

/// Ops of the main function body, in order.
pub fn body_ops(m: &Module) -> Vec<OpId> {
    let f = main_func(m);
    let entry = m.entry_block(m.region(f, 0).unwrap()).unwrap();
    m.block_ops(entry).collect()
}

/// (op name, result types) of every op of the main function, in order.
pub fn op_summary(m: &Module) -> Vec<(String, Vec<String>)> {
    body_ops(m)
        .into_iter()
        .map(|op| {
            let tys = m
                .results(op)
                .iter()
                .map(|&r| m.value_type(r).to_string())
                .collect();
            (m.name(op).as_str().to_string(), tys)
        })
        .collect()
}

/// The single result type of the first op named `name`.
pub fn result_of(m: &Module, name: &str) -> String {
    let op = body_ops(m)
        .into_iter()
        .find(|&o| m.is(o, name))
        .unwrap_or_else(|| panic!("no {name} op"));
    m.value_type(m.result(op, 0).unwrap()).to_string()
}

pub fn func_type(m: &Module) -> Type {
    m.attr(main_func(m), "function_type")
        .unwrap()
        .as_type()
        .unwrap()
        .clone()
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Exports `m` next to `original` as `exported.onnx` (optionally with
/// external data) and checks with scripts/ort_compare.py that onnxruntime
/// gives the same outputs on `original`'s test_data_set_0 inputs.
pub fn assert_round_trip(m: &Module, original: &Path, threshold: Option<usize>) -> PathBuf {
    round_trip_within(m, original, threshold, 0.0)
}

/// Like [`assert_round_trip`] for models import rewrites: floats may differ
/// by `atol` on top of the relative 1e-6.
pub fn round_trip_within(
    m: &Module,
    original: &Path,
    threshold: Option<usize>,
    atol: f64,
) -> PathBuf {
    let dir = original.parent().unwrap();
    let exported = dir.join("exported.onnx");
    frontend::export::write_model(m, &exported, threshold)
        .unwrap_or_else(|d| panic!("export failed: {d}"));
    let list = dir.join("pairs.tsv");
    std::fs::write(
        &list,
        format!(
            "case\t{}\t{}\t{}\n",
            original.display(),
            exported.display(),
            dir.join("test_data_set_0").display()
        ),
    )
    .unwrap();
    let py = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(py)
        .arg(repo_root().join("scripts").join("ort_compare.py"))
        .arg(&list)
        .env("ORT_COMPARE_ATOL", atol.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("\tpass\t"),
        "round trip of {} does not match:\n{stdout}{}",
        original.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    exported
}

/// Prelude helper for scripts: `inputs(name=array, ...)` writes
/// test_data_set_0/input_K.pb in the given order.
pub const WRITE_INPUTS: &str = "
def inputs(*pairs):
    d = os.path.join(out, 'test_data_set_0')
    os.makedirs(d, exist_ok=True)
    for k, (name, a) in enumerate(pairs):
        with open(os.path.join(d, f'input_{k}.pb'), 'wb') as f:
            f.write(numpy_helper.from_array(a, name).SerializeToString())
";

/// Every op under the main function, regions included, by name.
pub fn all_op_names(m: &Module) -> Vec<String> {
    m.collect_ops(main_func(m))
        .into_iter()
        .map(|op| m.name(op).as_str().to_string())
        .collect()
}
