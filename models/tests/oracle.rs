//! Cross-checks with the python reference tools: onnx's checker (with shape
//! inference) must accept every zoo model, and onnxruntime must run it
//! through scripts/ort_oracle.py.

// Test helpers outside #[test] fns panic on failure by design.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use bytes::Bytes;
use frontend::proto::TensorProto;
use models::graph::tensor_f32;
use models::{default_input, encode, generate, zoo, GenOptions, ZooEntry};
use prost::Message;

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string())
}

fn require_python_deps() {
    let ok = Command::new(python())
        .args(["-c", "import onnx, onnxruntime, numpy"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        ok,
        "python3 with onnx, onnxruntime and numpy is required; run scripts/setup-test-deps.sh"
    );
}

fn workdir(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("models-oracle")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn oracle_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/ort_oracle.py")
}

fn run_ok(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn check_model(path: &Path) {
    let code = "import sys, onnx; onnx.checker.check_model(sys.argv[1], full_check=True)";
    run_ok(
        Command::new(python()).args(["-c", code]).arg(path),
        &format!("onnx checker on {}", path.display()),
    );
}

fn read_tensor(path: &Path) -> TensorProto {
    TensorProto::decode(Bytes::from(std::fs::read(path).unwrap())).unwrap()
}

#[test]
fn checker_accepts_every_model() {
    require_python_deps();
    let dir = workdir("checker");
    for entry in zoo() {
        for light in variants(entry) {
            let model = generate(entry.name, &GenOptions { seed: 11, light }).unwrap();
            let path = dir.join(format!(
                "{}{}.onnx",
                entry.name,
                if light { "_light" } else { "" }
            ));
            std::fs::write(&path, encode(&model)).unwrap();
            check_model(&path);
        }
    }
}

#[test]
fn onnxruntime_runs_every_model() {
    require_python_deps();
    for entry in zoo() {
        for light in variants(entry) {
            ort_run(entry, light);
        }
    }
}

/// The full-weight large models through the checker and onnxruntime (about
/// a minute): `cargo test -p models --test oracle -- --ignored`.
#[test]
#[ignore]
fn large_models_full_weights() {
    require_python_deps();
    let dir = workdir("checker-large");
    for entry in zoo().iter().filter(|e| e.large) {
        let path = dir.join(format!("{}.onnx", entry.name));
        let model = generate(
            entry.name,
            &GenOptions {
                seed: 11,
                light: false,
            },
        )
        .unwrap();
        std::fs::write(&path, encode(&model)).unwrap();
        check_model(&path);
        std::fs::remove_file(&path).unwrap();
        ort_run(entry, false);
    }
}

/// Full weights for the small models; light variants for all, since their
/// graphs are the same as the full ones'.
fn variants(entry: &ZooEntry) -> Vec<bool> {
    if entry.large {
        vec![true]
    } else {
        vec![false, true]
    }
}

/// Runs a generated model in onnxruntime and checks the outputs' names,
/// shapes and finiteness.
fn ort_run(entry: &ZooEntry, light: bool) {
    let tag = format!("{}{}", entry.name, if light { "_light" } else { "" });
    let dir = workdir(&format!("ort-{tag}"));
    let model_path = dir.join("model.onnx");
    let model = generate(entry.name, &GenOptions { seed: 5, light }).unwrap();
    std::fs::write(&model_path, encode(&model)).unwrap();
    // The zoo's own sample inputs: their shapes fix the dynamic dims that
    // output_shapes assumes (the oracle's random inputs would use 1).
    let mut cmd = Command::new(python());
    cmd.arg(oracle_script()).arg(&model_path);
    for (k, (name, shape, values)) in default_input(entry.name, 3)
        .unwrap()
        .into_iter()
        .enumerate()
    {
        let t = match entry.token_vocab {
            Some(_) => {
                let ids: Vec<i64> = values.iter().map(|&v| v as i64).collect();
                models::graph::tensor_i64(&name, &shape, &ids)
            }
            None => tensor_f32(&name, &shape, &values),
        };
        let path = dir.join(format!("input_{k}.pb"));
        std::fs::write(&path, t.encode_to_vec()).unwrap();
        cmd.arg("--input").arg(path);
    }
    cmd.args(["--threads", "1", "--output-dir"]).arg(&dir);
    let stdout = run_ok(&mut cmd, &format!("ort_oracle on {tag}"));
    let outputs = (entry.output_shapes)();
    assert_eq!(stdout.lines().count(), outputs.len(), "{stdout}");
    for (k, (name, shape)) in outputs.iter().enumerate() {
        let t = read_tensor(&dir.join(format!("output_{k}.pb")));
        assert_eq!(&t.name, name);
        assert_eq!(&t.dims, shape);
        assert_eq!(t.data_type, 1);
        let n = shape.iter().product::<i64>() as usize;
        assert_eq!(t.raw_data.len(), 4 * n);
        let xs: Vec<f32> = t
            .raw_data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        // Untrained but sane: finite, bounded, not constant. Light weights
        // are all 0.02, so deep light models may be constant and huge.
        assert!(xs.iter().all(|x| x.is_finite()), "{tag}: {xs:?}");
        assert!(light || xs.iter().all(|x| x.abs() < 1e4), "{tag}: {xs:?}");
        if xs.len() > 1 && !light {
            assert!(xs.iter().any(|&x| x != xs[0]), "{tag}: constant output");
        }
    }
}

#[test]
fn oracle_reads_given_inputs() {
    require_python_deps();
    let dir = workdir("given-inputs");
    let model_path = dir.join("mlp.onnx");
    std::fs::write(
        &model_path,
        encode(&generate("mlp", &GenOptions::default()).unwrap()),
    )
    .unwrap();
    let mut cmd = Command::new(python());
    cmd.arg(oracle_script()).arg(&model_path);
    for (k, (name, shape, values)) in default_input("mlp", 1).unwrap().into_iter().enumerate() {
        let path = dir.join(format!("in_{k}.pb"));
        std::fs::write(&path, tensor_f32(&name, &shape, &values).encode_to_vec()).unwrap();
        cmd.arg("--input").arg(path);
    }
    let out_dir = dir.join("out");
    cmd.arg("--output-dir").arg(&out_dir);
    let stdout = run_ok(&mut cmd, "ort_oracle with --input");
    assert!(stdout.starts_with("y [1, 10] float32"), "{stdout}");
    let t = read_tensor(&out_dir.join("output_0.pb"));
    assert_eq!(t.dims, vec![1, 10]);

    // Wrong arity is a clean error, exit code 1.
    let out = Command::new(python())
        .arg(oracle_script())
        .arg(&model_path)
        .arg("--output-dir")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ort_oracle: error"));
}

#[test]
fn transformers_take_any_sequence_length() {
    require_python_deps();
    for name in ["bert-base", "gpt2-small"] {
        let dir = workdir(&format!("dynamic-{name}"));
        let model_path = dir.join("model.onnx");
        let model = generate(
            name,
            &GenOptions {
                seed: 2,
                light: true,
            },
        )
        .unwrap();
        std::fs::write(&model_path, encode(&model)).unwrap();
        // Random inputs set every dynamic dim to 1: a sequence of length 1.
        run_ok(
            Command::new(python())
                .arg(oracle_script())
                .arg(&model_path)
                .args(["--random-inputs", "1", "--output-dir"])
                .arg(&dir),
            name,
        );
        let t = read_tensor(&dir.join("output_0.pb"));
        assert_eq!(&t.dims[..2], &[1, 1], "{name}");
    }
}
