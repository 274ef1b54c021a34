#![allow(clippy::expect_used, clippy::unwrap_used)] // test harness: setup failures abort
//! The `light_*` models shipped with the onnx Python package, end to end:
//! `onnxc run` on a random input matches onnxruntime (scripts/ort_oracle.py)
//! and on onnx's own test input matches the shipped output; their
//! memref-level IR (`--emit memref`) is accepted by upstream `mlir-opt` 19.

use ir::elements::{Elements, NumClass};
use std::path::{Path, PathBuf};
use std::process::Command;
use testsuite::node_data::{backend_data, parallel_map, python, repo_root};

const MLIR_OPT: &str = "/usr/lib/llvm-19/bin/mlir-opt";

fn models() -> Vec<(String, PathBuf)> {
    let dir = backend_data().join("light");
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| {
            let e = e.ok()?;
            Some((e.file_name().into_string().ok()?, e.path()))
        })
        .collect();
    v.sort();
    assert!(
        v.len() >= 9,
        "expected the 9 light models in {}",
        dir.display()
    );
    v
}

fn scratch(name: &str) -> PathBuf {
    let d = repo_root().join("target/bufferize-light").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn read(p: &Path) -> Elements {
    frontend::tensor_io::read_tensor_pb(p)
        .unwrap_or_else(|d| panic!("{}: {d}", p.display()))
        .1
}

/// Float outputs within rtol 1e-3 / atol 1e-5 (deep nets accumulate
/// rounding differently from onnxruntime's kernels); others exact.
fn compare(what: &str, got: &Elements, want: &Elements) -> Result<(), String> {
    if got.shape() != want.shape() || got.dtype() != want.dtype() {
        return Err(format!(
            "{what}: {:?} {:?}, expected {:?} {:?}",
            got.dtype(),
            got.shape(),
            want.dtype(),
            want.shape()
        ));
    }
    let float = want.dtype().class() == NumClass::Float;
    for (k, (g, w)) in got.iter().zip(want.iter()).enumerate() {
        let ok = if float {
            let (g, w) = (g.f64(), w.f64());
            (g - w).abs() <= 1e-5 + 1e-3 * w.abs()
        } else {
            g.u64() == w.u64()
        };
        if !ok {
            return Err(format!(
                "{what}[{k}]: got {}, expected {}",
                g.f64(),
                w.f64()
            ));
        }
    }
    Ok(())
}

fn onnxc_run(model: &Path, input: &Path, out: &Path) -> Result<(), String> {
    let r = Command::new(env!("CARGO_BIN_EXE_onnxc"))
        .arg("run")
        .arg(model)
        .arg("--input")
        .arg(input)
        .arg("--output-dir")
        .arg(out)
        .output()
        .unwrap();
    if r.status.success() {
        Ok(())
    } else {
        Err(format!(
            "onnxc run failed: {}",
            String::from_utf8_lossy(&r.stderr)
        ))
    }
}

fn check_model(name: &str, dir: &Path) -> Result<(), String> {
    let model = dir.join("model.onnx");
    let work = scratch(name);
    // onnxruntime on a deterministic random input.
    let ort = work.join("ort");
    let r = Command::new(python())
        .arg(repo_root().join("scripts/ort_oracle.py"))
        .arg(&model)
        .args(["--random-inputs", "7", "--output-dir"])
        .arg(&ort)
        .output()
        .expect("python3 with onnxruntime is needed: scripts/setup-test-deps.sh");
    if !r.status.success() {
        panic!(
            "ort_oracle.py failed (onnxruntime needed: scripts/setup-test-deps.sh): {}",
            String::from_utf8_lossy(&r.stderr)
        );
    }
    let ours = work.join("onnxc");
    onnxc_run(&model, &ort.join("input_0.pb"), &ours)?;
    compare(
        "vs onnxruntime, output 0",
        &read(&ours.join("output_0.pb")),
        &read(&ort.join("output_0.pb")),
    )?;
    // onnx's own test input and output.
    let set = dir.join("test_data_set_0");
    let ours = work.join("onnx-data");
    onnxc_run(&model, &set.join("input_0.pb"), &ours)?;
    compare(
        "vs onnx test data, output 0",
        &read(&ours.join("output_0.pb")),
        &read(&set.join("output_0.pb")),
    )?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// Run time is dominated by the big convolutions of naive loop nests
/// (vgg19, alexnet, zfnet512, densenet121 take 20-50 s each): CI runs the
/// fast ones; `cargo test -p onnxc --test bufferize_light -- --ignored`
/// runs all nine.
const FAST: &[&str] = &["inception_v1", "resnet50", "shufflenet", "squeezenet"];

#[test]
fn light_models_run_and_match_onnxruntime() {
    let models: Vec<_> = models()
        .into_iter()
        .filter(|(n, _)| FAST.contains(&n.as_str()))
        .collect();
    assert_eq!(models.len(), FAST.len());
    run_all(&models);
}

#[test]
#[ignore = "several minutes: all nine light models"]
fn all_light_models_run_and_match_onnxruntime() {
    run_all(&models());
}

fn run_all(models: &[(String, PathBuf)]) {
    let results = parallel_map(models, |(name, dir)| check_model(name, dir));
    let names: Vec<String> = models.iter().map(|(n, _)| n.clone()).collect();
    assert_all_ok(&names, results);
}

/// `onnxc ARGS` writes memref-level IR to `work/model.mlir`; mlir-opt 19
/// must accept it.
fn memref_ir_accepted(work: &Path, args: &[&std::ffi::OsStr]) -> Result<(), String> {
    let mlir = work.join("model.mlir");
    let r = Command::new(env!("CARGO_BIN_EXE_onnxc"))
        .args(args)
        .arg("-o")
        .arg(&mlir)
        .output()
        .unwrap();
    if !r.status.success() {
        return Err(format!(
            "onnxc failed: {}",
            String::from_utf8_lossy(&r.stderr)
        ));
    }
    let r = Command::new(MLIR_OPT)
        .arg(&mlir)
        .args(["-o", "/dev/null"])
        .output()
        .unwrap();
    if !r.status.success() {
        return Err(format!(
            "mlir-opt rejects it: {}",
            String::from_utf8_lossy(&r.stderr)
                .lines()
                .take(3)
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    let _ = std::fs::remove_dir_all(work);
    Ok(())
}

fn assert_all_ok(names: &[String], results: Vec<Result<(), String>>) {
    let failures: Vec<String> = names
        .iter()
        .zip(results)
        .filter_map(|(n, r)| r.err().map(|e| format!("{n}: {e}")))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn light_models_memref_ir_is_accepted_by_mlir_opt() {
    assert!(
        Path::new(MLIR_OPT).is_file(),
        "{MLIR_OPT} missing: scripts/setup-test-deps.sh"
    );
    let models = models();
    let results = parallel_map(&models, |(name, dir)| {
        let model = dir.join("model.onnx");
        let args = [
            "compile".as_ref(),
            model.as_os_str(),
            "--emit".as_ref(),
            "memref".as_ref(),
        ];
        memref_ir_accepted(&scratch(&format!("{name}-mlir")), &args)
    });
    let names: Vec<String> = models.into_iter().map(|(n, _)| n).collect();
    assert_all_ok(&names, results);
}

/// Views (Slice's `memref.subview` with static and runtime offsets, steps,
/// copies where a view must not flow) in the layouts mlir-opt infers: the
/// bufferize filetests and the backend Slice cases.
#[test]
fn views_memref_ir_is_accepted_by_mlir_opt() {
    let ft = repo_root().join("tests/filetests/bufferize");
    let mut inputs: Vec<(String, Vec<std::ffi::OsString>)> = Vec::new();
    for e in std::fs::read_dir(&ft).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        // `// NO-MLIR-OPT: why` opts a file out (types mlir-opt 19 lacks).
        if text.contains("expected-error") || text.contains("// NO-MLIR-OPT:") {
            continue;
        }
        let args = vec![
            "opt".into(),
            p.clone().into(),
            "-p".into(),
            "bufferize".into(),
        ];
        inputs.push((p.display().to_string(), args));
    }
    let node = backend_data().join("node");
    for case in [
        "test_slice",
        "test_slice_default_steps",
        "test_slice_negative_axes",
        "test_slice_neg_steps",
    ] {
        let model = node.join(case).join("model.onnx");
        let args = vec![
            "compile".into(),
            model.into(),
            "--emit".into(),
            "memref".into(),
        ];
        inputs.push((case.to_string(), args));
    }
    inputs.sort();
    let results = parallel_map(&inputs, |(name, args)| {
        let tag = Path::new(name)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        memref_ir_accepted(&scratch(&format!("{tag}-views")), &args)
    });
    let names: Vec<String> = inputs.into_iter().map(|(n, _)| n).collect();
    assert_all_ok(&names, results);
}
