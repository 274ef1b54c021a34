#![allow(clippy::expect_used, clippy::unwrap_used)] // test harness: setup failures abort
//! `onnxc fold` end to end on the canonicalizations onnxruntime checks:
//! BatchNormalization fused into Gemm (both layouts, with and without C)
//! and MatMul, constant Sub/Div chains regrouped, and a weight computed by
//! a chain of element-wise ops (Neg, Mul by a splat, Clip, Cast) that folds
//! to a lazy view packed in chunks by the streaming writer. The folded
//! model must have none of those ops left and give the original's outputs.

mod frontend_common;

use frontend_common::python;
use std::process::Command;

const GEN: &str = r#"
import sys, numpy as np, onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as TP
rng = np.random.default_rng(3)
inits = []
def const(name, a):
    inits.append(nh.from_array(np.asarray(a), name))
    return name
def bn(x, c, tag):
    return h.make_node("BatchNormalization",
        [x, const(tag + "s", rng.uniform(0.5, 2, c).astype(np.float32)),
         const(tag + "b", rng.standard_normal(c).astype(np.float32)),
         const(tag + "m", rng.standard_normal(c).astype(np.float32)),
         const(tag + "v", rng.uniform(0.5, 2, c).astype(np.float32))], [tag + "y"], epsilon=1e-3)
f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
nodes = [
    # Gemm, transB = 0, C of shape [N], beta 0.5 → BN.
    h.make_node("Gemm", ["x", const("w1", f32(64, 96)), const("c1", f32(96))], ["g1"], beta=0.5),
    bn("g1", 96, "bn1"),
    h.make_node("Relu", ["bn1y"], ["r1"]),
    # Gemm, transB = 1, no C → BN.
    h.make_node("Gemm", ["r1", const("w2", f32(80, 96))], ["g2"], transB=1),
    bn("g2", 80, "bn2"),
    # A weight computed from a constant: Cast(Clip(Neg(w) * 2, -1, 1)).
    h.make_node("Neg", [const("w3", f32(80, 128).astype(np.float64))], ["n3"]),
    h.make_node("Mul", ["n3", const("two", np.array(2.0))], ["m3"]),
    h.make_node("Clip", ["m3", const("lo", np.array(-1.0)), const("hi", np.array(1.0))], ["k3"]),
    h.make_node("Cast", ["k3"], ["w3f"], to=TP.FLOAT),
    # MatMul with a 2-D result → BN.
    h.make_node("MatMul", ["bn2y", "w3f"], ["mm"]),
    bn("mm", 128, "bn3"),
    # ((y + shift - 1) - 2) / 4 * 8 regroups to (y + (shift - 3)) / 0.5.
    h.make_node("Sub", ["bn3y", const("one", np.float32(1))], ["s1"]),
    h.make_node("Sub", ["s1", const("twof", np.float32(2))], ["s2"]),
    h.make_node("Div", ["s2", const("four", np.float32(4))], ["d1"]),
    h.make_node("Mul", ["d1", const("eight", np.float32(8))], ["out"]),
]
g = h.make_graph(nodes, "fusion",
    [h.make_tensor_value_info("x", TP.FLOAT, [4, 64])],
    [h.make_tensor_value_info("out", TP.FLOAT, [4, 128])], inits)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
onnx.checker.check_model(m, full_check=True)
onnx.save(m, sys.argv[1])
"#;

const CHECK: &str = r#"
import sys, numpy as np, onnx, onnxruntime as ort
ops = [n.op_type for n in onnx.load(sys.argv[2]).graph.node]
for gone in ["BatchNormalization", "Neg", "Clip", "Cast", "Sub"]:
    assert gone not in ops, (gone, ops)
# The MatMul's BN shift and the Subs are one Add; Div and Mul one op.
assert ops.count("Add") == 1 and ops.count("Div") + ops.count("Mul") == 1, ops
x = np.random.default_rng(5).standard_normal((4, 64)).astype(np.float32)
def run(p):
    s = ort.InferenceSession(p, providers=["CPUExecutionProvider"])
    return s.run(None, {"x": x})[0]
np.testing.assert_allclose(run(sys.argv[2]), run(sys.argv[1]), rtol=1e-3, atol=1e-3)
"#;

#[test]
fn fused_and_regrouped_models_match_onnxruntime() {
    let dir = std::env::temp_dir().join(format!("onnxc-fusion-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (model, folded) = (dir.join("m.onnx"), dir.join("f.onnx"));
    let py = |script: &str, args: &[&std::path::Path]| {
        let o = Command::new(python())
            .arg("-c")
            .arg(script)
            .args(args)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "python failed (scripts/setup-test-deps.sh):\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    py(GEN, &[&model]);
    let run = Command::new(env!("CARGO_BIN_EXE_onnxc"))
        .arg("fold")
        .arg(&model)
        .arg("-o")
        .arg(&folded)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    py(CHECK, &[&model, &folded]);
    let _ = std::fs::remove_dir_all(&dir);
}
