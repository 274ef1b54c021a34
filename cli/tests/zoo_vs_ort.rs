//! `onnxc run` of the zoo's models against onnxruntime (scripts/ort_oracle.py)
//! on the same inputs: every small generator with its full weights, the
//! light (ConstantOfShape) variant of every generator whose light model is
//! cheap to run, and the tiny transformers (bert-base's and gpt2-small's
//! graphs at 2 layers) at other batch sizes and sequence lengths than the
//! sample's (those dims are dynamic). The large models run with full
//! weights in the benchmark (docs/BENCHMARKS.md), which checks them too.

// Test helpers outside #[test] fns panic on failure by design.
#![allow(clippy::unwrap_used)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use ir::elements::{DType, Elements, WideNum};

/// Light variants with a CNN's full compute: a test of their own, so it
/// runs next to the others.
const HEAVY_LIGHT: &[&str] = &["resnet50v1", "resnet152v1", "arcface100", "vgg19"];

/// Runs `program args`, which must succeed.
fn run_ok(program: &OsStr, args: &[&OsStr]) {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{program:?} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn onnxc(args: &[&OsStr]) {
    run_ok(OsStr::new(env!("CARGO_BIN_EXE_onnxc")), args);
}

fn oracle(model: &Path, input: &Path, out: &Path) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/ort_oracle.py");
    let args = [script.as_os_str(), model.as_os_str()];
    let rest = [OsStr::new("--input"), input.as_os_str()];
    let out = [OsStr::new("--output-dir"), out.as_os_str()];
    run_ok(OsStr::new("python3"), &[&args[..], &rest, &out].concat());
}

/// Largest |ours − onnxruntime| over all outputs, relative to the largest
/// reference magnitude (scaled so that `< TOL` passes); the outputs'
/// count, shapes and dtypes must agree.
fn compare(ours: &Path, ort: &Path, outputs: usize) -> f64 {
    let (mut max_abs, mut scale) = (0.0f64, 0.0f64);
    for k in 0..outputs {
        let name = format!("output_{k}.pb");
        let (_, want) = frontend::tensor_io::read_tensor_pb(&ort.join(&name)).unwrap();
        let (_, got) = frontend::tensor_io::read_tensor_pb(&ours.join(&name)).unwrap();
        assert_eq!(got.dtype(), want.dtype(), "{name}");
        assert_eq!(got.shape(), want.shape(), "{name}");
        for (a, b) in got.iter().zip(want.iter()) {
            let (a, b) = (a.f64(), b.f64());
            assert!(a.is_finite(), "{name}: {a}");
            max_abs = max_abs.max((a - b).abs());
            scale = scale.max(b.abs());
        }
    }
    assert!(!ours.join(format!("output_{outputs}.pb")).exists());
    // A constant-weight (light) model may compute all zeros (LayerNorm of
    // a constant row): then only rounding is left and the difference is
    // taken as absolute (gpt2-small light: 3.7e-4 after 12 residual adds).
    if scale == 0.0 {
        return max_abs * TOL / ABS_TOL;
    }
    max_abs / scale
}

/// Generates `name` (light or not), runs it through `onnxc run` and
/// onnxruntime on the zoo's sample input (or `input` when given) and
/// returns the relative difference.
fn check(dir: &Path, name: &str, light: bool, input: Option<&Elements>) -> f64 {
    let tag = format!("{name}{}", if light { "_light" } else { "" });
    let dir = dir.join(&tag);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("model.onnx");
    let mut gen: Vec<&OsStr> = ["zoo", "gen", name].map(OsStr::new).to_vec();
    if light {
        gen.push(OsStr::new("--light"));
    }
    gen.extend([
        OsStr::new("--inputs"),
        dir.as_os_str(),
        OsStr::new("-o"),
        model.as_os_str(),
    ]);
    onnxc(&gen);
    let input_pb = dir.join("input_0.pb");
    if let Some(e) = input {
        frontend::tensor_io::write_tensor_pb(&input_pb, "input_ids", e).unwrap();
    }
    // Every zoo model has a single input.
    assert!(!dir.join("input_1.pb").exists());
    let (ours, ort) = (dir.join("ours"), dir.join("ort"));
    onnxc(&[
        OsStr::new("run"),
        OsStr::new("--input"),
        input_pb.as_os_str(),
        OsStr::new("--output-dir"),
        ours.as_os_str(),
        model.as_os_str(),
    ]);
    oracle(&model, &input_pb, &ort);
    let outputs = (models::entry(name).unwrap().output_shapes)().len();
    compare(&ours, &ort, outputs)
}

fn workdir(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("zoo-vs-ort")
        .join(test);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Relative to the largest reference magnitude.
const TOL: f64 = 1e-4;
/// Absolute, when every reference output is zero.
const ABS_TOL: f64 = 1e-3;

#[test]
fn small_models_full_and_light_match_onnxruntime() {
    let dir = workdir("small");
    let mut checked = 0;
    for e in models::zoo() {
        let variants: &[bool] = match (e.large, HEAVY_LIGHT.contains(&e.name)) {
            (false, _) => &[false, true],
            (true, false) => &[true],
            (true, true) => &[],
        };
        for &light in variants {
            let rel = check(&dir, e.name, light, None);
            eprintln!("{} light={light}: {rel:.2e} of the output scale", e.name);
            assert!(rel < TOL, "{} light={light}: {rel:.3e}", e.name);
            checked += 1;
        }
    }
    // mlp, cnn, densenet121, mobilenetv2, squeezenet, bert-tiny, gpt2-tiny
    // full and light; bert-base, gpt2-small light.
    assert_eq!(checked, 16);
}

#[test]
fn transformers_with_other_batch_and_sequence_lengths() {
    let dir = workdir("dynamic");
    // Full random weights: the light variants' outputs are constant.
    for name in ["bert-tiny", "gpt2-tiny"] {
        let vocab = models::entry(name).unwrap().token_vocab.unwrap();
        for (batch, seq) in [(1, 3), (2, 13)] {
            let ids: Vec<WideNum> = (0..batch * seq)
                .map(|i| WideNum::from_i64((i * 7919 + 13) % vocab))
                .collect();
            let e = Elements::from_wide(DType::I64, vec![batch, seq], &ids).unwrap();
            let rel = check(&dir, name, false, Some(&e));
            eprintln!("{name} {batch}×{seq}: {rel:.2e} of the output scale");
            assert!(rel < TOL, "{name} {batch}×{seq}: {rel:.3e}");
        }
    }
}

/// The large CNNs' light variants: their full compute (~90 s here).
#[test]
fn large_cnns_light_match_onnxruntime() {
    let dir = workdir("large-light");
    for name in HEAVY_LIGHT {
        let rel = check(&dir, name, true, None);
        eprintln!("{name} light: {rel:.2e} of the output scale");
        assert!(rel < TOL, "{name}: {rel:.3e}");
    }
}
