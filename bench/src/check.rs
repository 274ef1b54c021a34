//! The compiled model's outputs against onnxruntime's on the same inputs
//! (scripts/ort_oracle.py, embedded), so a benchmarked model is also a
//! checked one.

use super::Status;
use ir::elements::{DType, Elements, NumClass};
use std::path::Path;
use std::process::Command;

const ORACLE_PY: &str = include_str!("../../scripts/ort_oracle.py");

/// Largest output difference, absolute and relative to the reference's
/// largest magnitude; `ok` when the latter is below [`TOLERANCE`].
#[derive(Clone, Debug)]
pub struct Accuracy {
    pub status: Status,
    pub max_abs: f64,
    pub rel_to_scale: f64,
}

pub const TOLERANCE: f64 = 1e-3;

fn failed(msg: String) -> Accuracy {
    Accuracy {
        status: Status::Failed(msg),
        max_abs: f64::NAN,
        rel_to_scale: f64::NAN,
    }
}

/// Runs onnxruntime on `model` with the child's `input_N.pb` and compares
/// with the driver's `out_N.bin`.
pub fn against_onnxruntime(
    python: &str,
    model: &Path,
    dir: &Path,
    inputs: usize,
    outputs: usize,
) -> Accuracy {
    let ort_dir = dir.join("ort");
    let mut cmd = Command::new(python);
    cmd.arg("-c").arg(ORACLE_PY).arg(model);
    for i in 0..inputs {
        cmd.arg("--input").arg(dir.join(format!("input_{i}.pb")));
    }
    cmd.arg("--output-dir").arg(&ort_dir);
    let out = match cmd.output() {
        Ok(o) => o,
        Err(e) => {
            return Accuracy {
                status: Status::Missing(format!("cannot run {python}: {e}")),
                ..failed(String::new())
            }
        }
    };
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let line = err
            .lines()
            .last()
            .unwrap_or("onnxruntime failed")
            .to_string();
        if line.contains("No module named") {
            return Accuracy {
                status: Status::Missing(line),
                ..failed(String::new())
            };
        }
        return failed(line);
    }
    let (mut max_abs, mut scale) = (0.0f64, 0.0f64);
    for k in 0..outputs {
        let want =
            match frontend::tensor_io::read_tensor_pb(&ort_dir.join(format!("output_{k}.pb"))) {
                Ok((_, e)) => e,
                Err(d) => return failed(d.to_string()),
            };
        let got = match read_driver_output(&dir.join(format!("out_{k}.bin")), want.dtype()) {
            Some(e) => e,
            None => return failed(format!("cannot read output {k} of the compiled model")),
        };
        if got.shape() != want.shape() {
            return failed(format!(
                "output {k}: shape {:?}, onnxruntime {:?}",
                got.shape(),
                want.shape()
            ));
        }
        let as_f64 = |v: ir::elements::WideNum, d: DType| match d.class() {
            NumClass::Float => v.f64(),
            NumClass::Signed => v.i64() as f64,
            NumClass::Unsigned => v.u64() as f64,
        };
        for (a, b) in got.iter().zip(want.iter()) {
            let (a, b) = (as_f64(a, got.dtype()), as_f64(b, want.dtype()));
            max_abs = max_abs.max(if a == b { 0.0 } else { (a - b).abs() });
            scale = scale.max(b.abs());
        }
    }
    let rel = max_abs / scale.max(1e-12);
    Accuracy {
        status: if rel <= TOLERANCE {
            Status::Ok
        } else {
            Status::Failed(format!("outputs differ: max |Δ| {max_abs:.3e}"))
        },
        max_abs,
        rel_to_scale: rel,
    }
}

/// The C driver's output file: i64 rank, i64 dims, packed elements.
fn read_driver_output(path: &Path, dtype: DType) -> Option<Elements> {
    let bytes = std::fs::read(path).ok()?;
    let word = |i: usize| -> Option<i64> {
        Some(i64::from_le_bytes(
            bytes.get(i * 8..i * 8 + 8)?.try_into().ok()?,
        ))
    };
    let rank = usize::try_from(word(0)?).ok().filter(|&r| r <= 64)?;
    let shape: Vec<i64> = (0..rank).map(|i| word(1 + i)).collect::<Option<_>>()?;
    let data = bytes::Bytes::from(bytes).slice((1 + rank) * 8..);
    Elements::from_bytes(dtype, shape, data).ok()
}
