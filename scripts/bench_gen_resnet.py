#!/usr/bin/env python3
"""A ResNet-50/152 v1 with BatchNorm folded into Conv biases (random
weights), for timing: `bench_gen_resnet.py resnet50|resnet152 OUT.onnx`."""
import numpy as np, onnx, sys
from onnx import helper as h, numpy_helper as nh, TensorProto as T
rng = np.random.default_rng(0)
nodes, inits = [], []
cnt = [0]
def name(p):
    cnt[0] += 1; return f"{p}{cnt[0]}"
def conv(x, cin, cout, k, s=1, relu=True):
    w = name("w"); b = name("b"); y = name("c")
    std = (2.0 / (cin * k * k)) ** 0.5
    inits.append(nh.from_array((rng.standard_normal((cout, cin, k, k)) * std).astype(np.float32), w))
    inits.append(nh.from_array((rng.standard_normal(cout) * 0.01).astype(np.float32), b))
    nodes.append(h.make_node("Conv", [x, w, b], [y], kernel_shape=[k, k], strides=[s, s], pads=[k//2]*4))
    if relu:
        r = name("r"); nodes.append(h.make_node("Relu", [y], [r])); return r
    return y
def block(x, cin, mid, cout, s):
    y = conv(x, cin, mid, 1)
    y = conv(y, mid, mid, 3, s)
    y = conv(y, mid, cout, 1, relu=False)
    sc = conv(x, cin, cout, 1, s, relu=False) if (s != 1 or cin != cout) else x
    a = name("add"); nodes.append(h.make_node("Add", [y, sc], [a]))
    r = name("r"); nodes.append(h.make_node("Relu", [a], [r])); return r
layers = {"resnet50": [3, 4, 6, 3], "resnet152": [3, 8, 36, 3]}[sys.argv[1]]
x = conv("data", 3, 64, 7, 2)
p = name("pool"); nodes.append(h.make_node("MaxPool", [x], [p], kernel_shape=[3, 3], strides=[2, 2], pads=[1]*4)); x = p
cin = 64
for i, n in enumerate(layers):
    mid = 64 * 2**i
    for j in range(n):
        x = block(x, cin, mid, mid * 4, 2 if (j == 0 and i > 0) else 1); cin = mid * 4
g = name("gap"); nodes.append(h.make_node("GlobalAveragePool", [x], [g]))
f = name("flat"); nodes.append(h.make_node("Flatten", [g], [f]))
inits.append(nh.from_array((rng.standard_normal((1000, 2048)) * 0.02).astype(np.float32), "fcw"))
inits.append(nh.from_array(np.zeros(1000, np.float32), "fcb"))
nodes.append(h.make_node("Gemm", [f, "fcw", "fcb"], ["prob"], transB=1))
graph = h.make_graph(nodes, sys.argv[1], [h.make_tensor_value_info("data", T.FLOAT, [1, 3, 224, 224])],
                     [h.make_tensor_value_info("prob", T.FLOAT, [1, 1000])], inits)
onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8), sys.argv[2])
