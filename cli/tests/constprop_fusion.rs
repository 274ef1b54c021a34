#![allow(clippy::expect_used, clippy::unwrap_used)] // test harness: setup failures abort
//! `onnxc fold` end to end on the canonicalizations onnxruntime checks:
//! BatchNormalization fused into Gemm (both layouts, with and without C)
//! and MatMul (then with its shift a Gemm), constant Sub/Div chains regrouped, and a weight computed by
//! a chain of element-wise ops (Neg, Mul by a splat, Clip, Cast) that folds
//! to a lazy view packed in chunks by the streaming writer. The folded
//! model must have none of those ops left and give the original's outputs.

use std::process::Command;
use testsuite::node_data::python;

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
for gone in ["BatchNormalization", "Neg", "Clip", "Cast", "Sub", "Add", "MatMul", "Identity"]:
    assert gone not in ops, (gone, ops)
# The MatMul's BN shift and the Subs are one bias of a Gemm; Div and Mul
# one op, which computes the output under its name (no Identity).
assert ops.count("Gemm") == 3 and ops.count("Div") + ops.count("Mul") == 1, ops
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

const GEN_SIDES: &str = r#"
import sys, numpy as np, onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as TP
inits = []
def const(name, a):
    inits.append(nh.from_array(np.asarray(a), name))
    return name
nodes = [
    # f32: 0.5 * x * 2, then 1 - (that - 3), then 6 / (2 / that).
    h.make_node("Mul", [const("half", np.float32(0.5)), "x"], ["f1"]),
    h.make_node("Mul", ["f1", const("two", np.float32(2))], ["f2"]),
    h.make_node("Sub", ["f2", const("three", np.float32(3))], ["f3"]),
    h.make_node("Sub", [const("one", np.float32(1)), "f3"], ["f4"]),
    h.make_node("Div", [const("twof", np.float32(2)), "f4"], ["f5"]),
    h.make_node("Div", [const("six", np.float32(6)), "f5"], ["fo"]),
    # int32: (c1 + n) + c2 with a sum past 2^31, c2 - (c1 - n).
    h.make_node("Add", [const("big", np.int32(2**30 + 5)), "n"], ["i1"]),
    h.make_node("Add", ["i1", const("big2", np.int32(2**30 + 7))], ["i2"]),
    h.make_node("Sub", [const("k1", np.int32(9)), "i2"], ["i3"]),
    h.make_node("Sub", [const("k2", np.int32(-4)), "i3"], ["io"]),
    # uint8: 200 - (u - 100), wrapping modulo 256.
    h.make_node("Sub", ["u", const("h", np.uint8(100))], ["u1"]),
    h.make_node("Sub", [const("t", np.uint8(200)), "u1"], ["uo"]),
]
g = h.make_graph(nodes, "sides",
    [h.make_tensor_value_info("x", TP.FLOAT, [64]),
     h.make_tensor_value_info("n", TP.INT32, [64]),
     h.make_tensor_value_info("u", TP.UINT8, [64])],
    [h.make_tensor_value_info("fo", TP.FLOAT, [64]),
     h.make_tensor_value_info("io", TP.INT32, [64]),
     h.make_tensor_value_info("uo", TP.UINT8, [64])], inits)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
onnx.checker.check_model(m, full_check=True)
onnx.save(m, sys.argv[1])
"#;

const CHECK_SIDES: &str = r#"
import sys, numpy as np, onnx, onnxruntime as ort
ops = [n.op_type for n in onnx.load(sys.argv[2]).graph.node if n.op_type != "Identity"]
# f32: 4 - x and (4 - x) * 3; int32: n + c; uint8: 44 - u.
assert sorted(ops) == ["Add", "Mul", "Sub", "Sub"], ops
rng = np.random.default_rng(7)
feed = {"x": rng.uniform(0.5, 4, 64).astype(np.float32),
        "n": rng.integers(-2**31, 2**31 - 1, 64, dtype=np.int64).astype(np.int32),
        "u": rng.integers(0, 256, 64).astype(np.uint8)}
def run(p):
    s = ort.InferenceSession(p, providers=["CPUExecutionProvider"])
    return s.run(None, feed)
want, got = run(sys.argv[1]), run(sys.argv[2])
np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
np.testing.assert_array_equal(got[1], want[1])
np.testing.assert_array_equal(got[2], want[2])
"#;

/// Constants regrouped on both sides (constants normalised to the right
/// first): float chains stay within rounding of the original, integer ones
/// (wrapping past 2^31 and modulo 256) give exactly onnxruntime's values.
#[test]
fn constants_regrouped_on_both_sides_match_onnxruntime() {
    let dir = std::env::temp_dir().join(format!("onnxc-sides-{}", std::process::id()));
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
            "python failed:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    py(GEN_SIDES, &[&model]);
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
    py(CHECK_SIDES, &[&model, &folded]);
    let _ = std::fs::remove_dir_all(&dir);
}
