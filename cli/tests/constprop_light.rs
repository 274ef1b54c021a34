#![allow(clippy::expect_used, clippy::unwrap_used)] // test harness: setup failures abort
//! The `light_*` models of the ONNX package (weights are ConstantOfShape
//! nodes, plus BatchNormalization): after `compile --stop-after constprop`
//! every ConstantOfShape and BatchNormalization is folded and the live
//! constant bytes stay below 2× the file (splats stay splats); `onnxc fold`
//! peaks below 1.5× the model it writes, and onnxruntime gives the folded
//! model the original's outputs.

use std::path::{Path, PathBuf};
use std::process::Command;
use testsuite::node_data::{backend_data, python, repo_root};

fn onnxc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_onnxc"))
}

fn light_models() -> Vec<PathBuf> {
    let dir = backend_data().join("light");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("light models")
        .filter_map(|e| Some(e.ok()?.path().join("model.onnx")))
        .filter(|p| p.exists())
        .collect();
    v.sort();
    assert!(v.len() >= 8, "light models missing in {}", dir.display());
    v
}

/// The number before `label` in `--stats` output.
fn stat(stderr: &str, label: &str) -> u64 {
    stderr
        .lines()
        .find(|l| l.contains(label))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no '{label}' in stats:\n{stderr}"))
}

fn name(p: &Path) -> String {
    p.parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[test]
fn light_models_fold_weights_and_batchnorm_compactly() {
    let tmp = tempdir("compile");
    for model in light_models() {
        let size = std::fs::metadata(&model).unwrap().len();
        let out = tmp.join(format!("{}.mlir", name(&model)));
        let run = onnxc()
            .arg("compile")
            .arg(&model)
            .args(["--stop-after", "constprop", "--stats", "-o"])
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{}: {stderr}", model.display());
        let ir = std::fs::read_to_string(&out).unwrap();
        for op in ["onnx.ConstantOfShape", "onnx.BatchNormalization"] {
            assert!(
                !ir.contains(op),
                "{}: {op} left after constprop",
                name(&model)
            );
        }
        let live = stat(&stderr, "live constant bytes after constprop");
        assert!(
            live < 2 * size,
            "{}: {live} live constant bytes for a {size}-byte file",
            name(&model)
        );
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Python printing the constant bytes of the models argv[1:], in order:
/// initializers and node tensor attributes (Constant, ConstantOfShape).
const CONSTANT_BYTES: &str = "import sys, onnx
def size(p):
    g = onnx.load(p).graph
    return sum(t.ByteSize() for t in g.initializer) + sum(
        a.t.ByteSize() for n in g.node for a in n.attribute if a.type == onnx.AttributeProto.TENSOR)
print(*[size(p) for p in sys.argv[1:]])";

#[test]
fn fold_streams_light_models_and_ort_agrees() {
    let tmp = tempdir("fold");
    let oracle = repo_root().join("scripts").join("ort_oracle.py");
    for model in light_models() {
        let n = name(&model);
        let out = tmp.join(format!("{n}.onnx"));
        let run = onnxc()
            .arg("fold")
            .arg(&model)
            .arg("-o")
            .arg(&out)
            .arg("--stats")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{n}: {stderr}");
        let written = std::fs::metadata(&out).unwrap().len();
        let read = std::fs::metadata(&model).unwrap().len();
        // The constants grow by the fold's budget at most (the rule allows
        // 1 KiB more per folded node; these models stay within the budget
        // itself): initializers and tensor attributes, in bytes of their
        // TensorProtos.
        let constants = Command::new(python())
            .args(["-c", CONSTANT_BYTES])
            .args([&model, &out])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&constants.stdout);
        let (before, after) = text.trim().split_once(' ').unwrap();
        let (before, after): (u64, u64) = (before.parse().unwrap(), after.parse().unwrap());
        let budget = constprop::hybrid::growth_budget(before as usize) as u64;
        assert!(
            after <= before + budget,
            "{n}: {after} bytes of constants from {before}"
        );
        let peak = stat(&stderr, "peak RSS bytes of onnxc fold");
        // The process itself (a debug build holding densenet121's IR) needs
        // up to about 27 MiB whatever the weights.
        assert!(
            peak < written.max(read) * 3 / 2 + (32 << 20),
            "{n}: peak {peak} bytes writing {written}"
        );
        // Same outputs as the original under onnxruntime (two small nets).
        if n != "squeezenet" && n != "shufflenet" {
            continue;
        }
        let want = tmp.join(format!("{n}.want"));
        let got = tmp.join(format!("{n}.got"));
        let ort = |m: &Path, dir: &Path, inputs: &[PathBuf]| {
            let mut c = Command::new(python());
            c.arg(&oracle).arg(m).arg("--output-dir").arg(dir);
            if inputs.is_empty() {
                c.args(["--random-inputs", "7"]);
            }
            for i in inputs {
                c.arg("--input").arg(i);
            }
            let o = c.output().unwrap();
            assert!(
                o.status.success(),
                "ort_oracle on {} failed (scripts/setup-test-deps.sh): {}",
                m.display(),
                String::from_utf8_lossy(&o.stderr)
            );
        };
        ort(&model, &want, &[]);
        ort(&out, &got, &[want.join("input_0.pb")]);
        let cmp = Command::new(python())
            .arg("-c")
            .arg(
                "import sys, numpy as np, onnx\n\
                 from onnx import numpy_helper as nh\n\
                 a = nh.to_array(onnx.load_tensor(sys.argv[1]))\n\
                 b = nh.to_array(onnx.load_tensor(sys.argv[2]))\n\
                 assert a.shape == b.shape, (a.shape, b.shape)\n\
                 np.testing.assert_allclose(b, a, rtol=1e-3, atol=1e-5)\n",
            )
            .arg(want.join("output_0.pb"))
            .arg(got.join("output_0.pb"))
            .output()
            .unwrap();
        assert!(
            cmp.status.success(),
            "{n}: folded model disagrees with the original:\n{}",
            String::from_utf8_lossy(&cmp.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Dense (non-splat) BatchNormalization weights: fused into the Conv as lazy
/// per-channel views, expanded while streaming; onnxruntime agrees.
#[test]
fn fold_fuses_dense_batchnorm_and_ort_agrees() {
    let tmp = tempdir("zoo");
    let model = tmp.join("mobilenetv2.onnx");
    let inputs = tmp.join("inputs");
    let gen = onnxc()
        .args(["zoo", "gen", "mobilenetv2", "-o"])
        .arg(&model)
        .arg("--inputs")
        .arg(&inputs)
        .output()
        .unwrap();
    assert!(
        gen.status.success(),
        "{}",
        String::from_utf8_lossy(&gen.stderr)
    );
    let out = tmp.join("folded.onnx");
    let run = onnxc()
        .arg("fold")
        .arg(&model)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let check = Command::new(python())
        .arg("-c")
        .arg(
            "import sys, numpy as np, onnx, onnxruntime as ort\n\
             from onnx import numpy_helper as nh\n\
             ops = [n.op_type for n in onnx.load(sys.argv[2]).graph.node]\n\
             assert 'BatchNormalization' not in ops, ops\n\
             x = nh.to_array(onnx.load_tensor(sys.argv[3]))\n\
             def run(p):\n\
             \x20   s = ort.InferenceSession(p, providers=['CPUExecutionProvider'])\n\
             \x20   return s.run(None, {s.get_inputs()[0].name: x})[0]\n\
             np.testing.assert_allclose(run(sys.argv[2]), run(sys.argv[1]), rtol=1e-3, atol=1e-4)\n",
        )
        .arg(&model)
        .arg(&out)
        .arg(inputs.join("input_0.pb"))
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "folded mobilenetv2 disagrees with the original (scripts/setup-test-deps.sh):\n{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("onnxc-light-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
