"""Writes the Loop models of runtime_checks.rs into argv[1], with an input
x and onnxruntime's outputs for it: a while loop (the condition stops it
after 5 iterations) whose trip count M is INT64_MAX (what torch writes),
2^40, or absent, carrying a sum and stacking a scan output of two rows a
step; and `fill.onnx`, ConstantOfShape of a runtime shape."""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T, helper as h, numpy_helper as nh

out = sys.argv[1]
F, I, B = T.FLOAT, T.INT64, T.BOOL


def body():
    """(i, cond, acc) -> (i < 4, acc + x, [acc * i; acc])."""
    nodes = [
        h.make_node("Constant", [], ["four"], value=nh.from_array(np.array(4, np.int64))),
        h.make_node("Less", ["i", "four"], ["go"]),
        h.make_node("Add", ["acc", "x"], ["acc2"]),
        h.make_node("Cast", ["i"], ["fi"], to=F),
        h.make_node("Mul", ["acc2", "fi"], ["scaled"]),
        h.make_node("Unsqueeze", ["scaled", "zero"], ["row0"]),
        h.make_node("Unsqueeze", ["acc2", "zero"], ["row1"]),
        h.make_node("Concat", ["row0", "row1"], ["rows"], axis=0),
    ]
    return h.make_graph(
        nodes,
        "body",
        [h.make_tensor_value_info("i", I, []), h.make_tensor_value_info("c", B, []),
         h.make_tensor_value_info("acc", F, [3])],
        [h.make_tensor_value_info("go", B, []), h.make_tensor_value_info("acc2", F, [3]),
         h.make_tensor_value_info("rows", F, [2, 3])],
    )


x = np.array([1.0, -2.0, 0.5], np.float32)
onnx.save_tensor(nh.from_array(x, "x"), os.path.join(out, "x.pb"))
for name, m in [("int64max", 2**63 - 1), ("2p40", 2**40), ("no_m", None)]:
    inits = [nh.from_array(np.array(True), "c0"), nh.from_array(np.zeros(3, np.float32), "acc0"),
             nh.from_array(np.array([0], np.int64), "zero")]
    if m is not None:
        inits.append(nh.from_array(np.array(m, np.int64), "m"))
    loop = h.make_node("Loop", ["m" if m is not None else "", "c0", "acc0"], ["sum", "stack"], body=body(), name="loop1")
    g = h.make_graph([loop], name, [h.make_tensor_value_info("x", F, [3])],
                     [h.make_tensor_value_info("sum", F, [3]), h.make_tensor_value_info("stack", F, None)], inits)
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    path = os.path.join(out, f"loop_{name}.onnx")
    onnx.save(model, path)
    got = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    for k, v in enumerate(got):
        onnx.save_tensor(nh.from_array(v), os.path.join(out, f"loop_{name}.want{k}.pb"))

fill = h.make_graph(
    [h.make_node("ConstantOfShape", ["shape"], ["y"], value=nh.from_array(np.array([2.5], np.float32)), name="fill")],
    "fill", [h.make_tensor_value_info("shape", I, [1])], [h.make_tensor_value_info("y", F, ["n"])])
model = h.make_model(fill, opset_imports=[h.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, os.path.join(out, "fill.onnx"))
