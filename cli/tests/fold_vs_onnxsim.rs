//! `onnxc fold` against onnx-simplifier on small models of the shape
//! arithmetic exporters write around dynamic dims
//! (scripts/corpus/fold_ci_models.py) and the corpus' CI models
//! (scripts/corpus/ci_models.py): onnxc must leave no more nodes than
//! onnxsim, with the inputs' dims as declared and fixed to one size, its
//! output must pass onnx.checker (full check) and match onnxruntime on
//! the original model at two sizes (scripts/corpus/fold_compare.py
//! --assert). onnxsim comes from scripts/setup-test-deps.sh.

// Test helpers outside #[test] fns panic on failure by design.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

fn python(script: &str, args: &[&str]) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scripts/corpus")
        .join(script);
    let out = Command::new("python3")
        .arg(&path)
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{script} {args:?} failed:\n{text}");
    text
}

#[test]
fn fold_leaves_no_more_nodes_than_onnxsim() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fold-vs-onnxsim");
    let _ = std::fs::remove_dir_all(&dir);
    let (models, ci, work) = (dir.join("models"), dir.join("ci"), dir.join("work"));
    let s = |p: &Path| p.to_str().unwrap().to_string();
    python("fold_ci_models.py", &["-o", &s(&models)]);
    python("ci_models.py", &["-o", &s(&ci)]);
    let report = python(
        "fold_compare.py",
        &[
            "--corpus",
            &s(&models),
            "--corpus",
            &s(&ci),
            "--onnxc",
            env!("CARGO_BIN_EXE_onnxc"),
            "--work",
            &s(&work),
            "--assert",
        ],
    );
    println!("{report}");
}

/// Python comparing a model (argv[1]) with its fold (argv[2]): prints the
/// count of DequantizeLinear nodes over weights (initializers) of each
/// and the bytes of their constants
/// (initializers and tensor attributes), and checks onnxruntime gives the
/// same outputs at the sizes saved next to the model (argv[3], the
/// corpus entry).
const QDQ_CHECK: &str = r#"import json, sys, numpy as np, onnx, onnxruntime as ort
def stats(p):
    g = onnx.load(p).graph
    inits = {t.name for t in g.initializer}
    dq = sum(n.op_type == "DequantizeLinear" and n.input[0] in inits for n in g.node)
    size = sum(t.ByteSize() for t in g.initializer) + sum(
        a.t.ByteSize() for n in g.node for a in n.attribute if a.type == onnx.AttributeProto.TENSOR)
    return dq, size
entry = json.load(open(sys.argv[3]))
so = ort.SessionOptions(); so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
a, b = (ort.InferenceSession(p, so, providers=["CPUExecutionProvider"]) for p in sys.argv[1:3])
for k in range(len(entry["sizes"])):
    z = np.load(sys.argv[3].replace(".json", f".size{k}.npz"))
    feed = {i["name"]: z[f"in{j}"] for j, i in enumerate(entry["inputs"])}
    for x, y in zip(a.run(None, feed), b.run(None, feed)):
        assert np.allclose(x, y, rtol=1e-4, atol=1e-5), (k, np.abs(x - y).max())
print(*stats(sys.argv[1]), *stats(sys.argv[2]))"#;

/// Folding keeps a quantized model quantized and no larger (a QDQ
/// ResNet-50 folded to float weights grew from 28 to 98 MB, and
/// onnxruntime then no longer fused its QDQ groups): every
/// DequantizeLinear of weights stays (those of activations may merge when
/// equal), the constants take no more bytes, and the
/// outputs are onnxruntime's at every saved size.
#[test]
fn fold_keeps_qdq_models_quantized_and_small() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fold-qdq");
    let _ = std::fs::remove_dir_all(&dir);
    let s = |p: &Path| p.to_str().unwrap().to_string();
    python("ci_models.py", &["-o", &s(&dir)]);
    for name in ["ci_qdq", "ci_int8_conv", "ci_int8"] {
        let (model, folded) = (
            dir.join(format!("{name}.onnx")),
            dir.join(format!("{name}.fold.onnx")),
        );
        let run = Command::new(env!("CARGO_BIN_EXE_onnxc"))
            .args(["fold", &s(&model), "-o", &s(&folded)])
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let out = Command::new("python3")
            .args(["-c", QDQ_CHECK, &s(&model), &s(&folded)])
            .arg(dir.join(format!("{name}.json")))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Vec<u64> = text
            .split_whitespace()
            .map(|w| w.parse().unwrap())
            .collect();
        assert_eq!(
            v[0], v[2],
            "{name}: DequantizeLinear nodes {} -> {}",
            v[0], v[2]
        );
        assert!(v[3] <= v[1], "{name}: constant bytes {} -> {}", v[1], v[3]);
    }
}

/// What onnxc does not know passes through a fold: onnxruntime's contrib
/// ops, sequences, string tensors (input, initializer, Constant) and a
/// contrib op inside a Loop body, a SequenceMap body reading an outer
/// value that folding renames; the folded
/// models run in onnxruntime with the originals' outputs at sizes 0, 1, 3
/// (scripts/corpus/foreign_models.py).
#[test]
fn fold_carries_unknown_ops_and_strings_through() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fold-foreign");
    let _ = std::fs::remove_dir_all(&dir);
    let report = python(
        "foreign_models.py",
        &[
            "--onnxc",
            env!("CARGO_BIN_EXE_onnxc"),
            "--work",
            dir.to_str().unwrap(),
        ],
    );
    println!("{report}");
    assert_eq!(report.matches(": ok").count(), 4, "{report}");
}

/// A compile takes the contrib ops (BiasGelu, FusedMatMul) and refuses
/// what it does not import, naming the node: here the sequence.
#[test]
fn compile_refuses_an_unknown_op_by_name() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compile-foreign");
    let _ = std::fs::remove_dir_all(&dir);
    python(
        "foreign_models.py",
        &["--write-only", "--work", dir.to_str().unwrap()],
    );
    let out = Command::new(env!("CARGO_BIN_EXE_onnxc"))
        .arg("compile")
        .arg(dir.join("contrib.onnx"))
        .args(["--emit", "onnx-ir", "-o", "-"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("node 'seq'") && err.contains("'SequenceConstruct'"),
        "{err}"
    );
}
