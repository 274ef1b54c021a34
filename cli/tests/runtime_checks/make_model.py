"""Writes the runtime-checks model, its input sets and onnxruntime's
outputs for the good set into the directory given as argv[1].

Inputs a[n,4] + b[m,4] -> Gather(rows idx[k]) and x[2,p] @ w[q,3]; the
dims have distinct dim_params so only the compiled checks can catch a
mismatch."""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
F, I = TensorProto.FLOAT, TensorProto.INT64
graph = helper.make_graph(
    [
        helper.make_node("Add", ["a", "b"], ["s"], name="add1"),
        helper.make_node("Gather", ["s", "idx"], ["g"], axis=0, name="gather1"),
        helper.make_node("MatMul", ["x", "w"], ["y"], name="mm1"),
    ],
    "checks",
    [
        helper.make_tensor_value_info("a", F, ["n", 4]),
        helper.make_tensor_value_info("b", F, ["m", 4]),
        helper.make_tensor_value_info("idx", I, ["k"]),
        helper.make_tensor_value_info("x", F, [2, "p"]),
        helper.make_tensor_value_info("w", F, ["q", 3]),
    ],
    [
        helper.make_tensor_value_info("g", F, ["k", 4]),
        helper.make_tensor_value_info("y", F, [2, 3]),
    ],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out, "model.onnx"))

rng = np.random.default_rng(7)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


good = {
    "a": f32(3, 4),
    "b": f32(1, 4),
    "idx": np.array([2, -1, 0, 1], dtype=np.int64),
    "x": f32(2, 5),
    "w": f32(5, 3),
}
sets = {
    "good": good,
    "bad_add": dict(good, b=f32(2, 4)),
    "bad_gather": dict(good, idx=np.array([0, 3], dtype=np.int64)),
    "bad_gather_neg": dict(good, idx=np.array([-4], dtype=np.int64)),
    "bad_matmul": dict(good, w=f32(4, 3)),
}
for name, inputs in sets.items():
    os.makedirs(os.path.join(out, name), exist_ok=True)
    for i, key in enumerate(["a", "b", "idx", "x", "w"]):
        t = numpy_helper.from_array(inputs[key], key)
        with open(os.path.join(out, name, f"input_{i}.pb"), "wb") as f:
            f.write(t.SerializeToString())

ort.set_default_logger_severity(4)
sess = ort.InferenceSession(
    model.SerializeToString(), providers=["CPUExecutionProvider"]
)
for i, v in enumerate(sess.run(None, good)):
    t = numpy_helper.from_array(v, f"out{i}")
    with open(os.path.join(out, "good", f"expected_{i}.pb"), "wb") as f:
        f.write(t.SerializeToString())
# onnxruntime rejects every bad set too: the checks match its contract.
for name in sets:
    if name != "good":
        try:
            sess.run(None, sets[name])
            print(f"onnxruntime accepted {name}", file=sys.stderr)
            sys.exit(1)
        except Exception:  # noqa: BLE001 - any runtime error is the point
            pass
