//! Shared by the tests that run zoo models against onnxruntime: the
//! onnxc binary, a scratch directory per test, the zoo model with its
//! sample inputs and onnxruntime's outputs, and their difference.

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn onnxc() -> Command {
    Command::new(crate::onnxc_bin())
}

/// Runs `cmd`; its stdout, or a panic with its output.
pub fn ok(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A fresh directory `suite/name` under the test target's scratch space.
pub fn workdir(suite: &str, name: &str) -> PathBuf {
    let d = crate::target_tmp().join(suite).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Largest |a − b| relative to the largest |b| over every output (NaN
/// counts as infinitely far).
pub fn rel_diff(ours: &Path, want: &Path) -> f64 {
    let (mut diff, mut scale) = (0.0f64, 0.0f64);
    for k in 0.. {
        let name = format!("output_{k}.pb");
        if !want.join(&name).exists() {
            break;
        }
        let (_, w) = frontend::tensor_io::read_tensor_pb(&want.join(&name)).unwrap();
        let (_, g) = frontend::tensor_io::read_tensor_pb(&ours.join(&name)).unwrap();
        assert_eq!(g.shape(), w.shape(), "{name}");
        assert_eq!(g.dtype(), w.dtype(), "{name}");
        let class = w.dtype().class();
        for (a, b) in g.iter().zip(w.iter()) {
            let (a, b) = (a.to_f64(class), b.to_f64(class));
            let d = (a - b).abs();
            diff = if d.is_nan() {
                f64::INFINITY
            } else {
                diff.max(d)
            };
            scale = scale.max(b.abs());
        }
    }
    diff / scale.max(1e-30)
}

/// Zoo model `name` in `workdir(suite, name)`: the model, its sample
/// inputs (sorted) and the directory of onnxruntime's outputs for them.
pub fn zoo_with_oracle(suite: &str, name: &str) -> (PathBuf, Vec<PathBuf>, PathBuf) {
    let dir = workdir(suite, name);
    let model = dir.join("model.onnx");
    let inputs = dir.join("in");
    ok(onnxc()
        .args(["zoo", "gen", name, "-o"])
        .arg(&model)
        .arg("--inputs")
        .arg(&inputs));
    let mut ins: Vec<PathBuf> = std::fs::read_dir(&inputs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    ins.sort();
    let ort = ort_outputs(&model, &ins);
    (model, ins, ort)
}

/// onnxruntime's outputs of `model` for `ins`, in `ort/` next to it.
pub fn ort_outputs(model: &Path, ins: &[PathBuf]) -> PathBuf {
    let ort = model.with_file_name("ort");
    let script = crate::repo_root().join("scripts/ort_oracle.py");
    let mut cmd = Command::new("python3");
    cmd.arg(&script).arg(model).arg("--output-dir").arg(&ort);
    for i in ins {
        cmd.arg("--input").arg(i);
    }
    ok(&mut cmd);
    ort
}
