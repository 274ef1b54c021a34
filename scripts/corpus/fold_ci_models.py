#!/usr/bin/env python3
"""Small models of the shape arithmetic exporters write around dynamic
dims, for the `onnxc fold` vs onnx-simplifier CI test.

    python3 scripts/corpus/fold_ci_models.py [-o DIR]   # default target/fold-ci

Writes NAME.onnx / NAME.json / NAME.size{k}.npz (corpus_common.py layout,
onnxruntime's outputs at two sizes), so fold_compare.py runs them:

  static_tail      Shape(x)[1:] with only the batch dynamic, into a Reshape
  flatten_batch    Shape -> Gather -> Unsqueeze -> Concat -> Reshape
                   (torch `x.view(x.size(0), -1)`)
  lstm_zero_state  Shape -> Gather -> Concat -> Expand(0) initial states of
                   an LSTM (PyTorch, tf2onnx), tf2onnx's Cast round trip
  heads            attention heads split and merged by Reshapes built from
                   Shape(x)[0] and Shape(x)[1], dynamic batch and sequence
  head_scale       1/sqrt(head size) read from a partly dynamic shape (timm)
  transposes       a Transpose pair around an op (tf2onnx) and a Cast to the
                   same type
  dup_shapes       the same Shape/Gather/Unsqueeze written three times
                   (ShuffleNet's channel shuffle), dynamic H and W
  resize_sizes     Concat(Shape(x)[:2], Concat(H, W)) sizes of a Resize
                   (torchvision segmentation heads)
  conv_scales      a layer-scale Mul after a Conv and GELU's `* 0.5` before
                   one (ConvNeXt); dense all-ones/all-zeros affine (BERT)
  mask_expand      an attention mask expanded to [B, 1, 1, S] from Shape
                   values, with an all-true And (transformers)

Needs onnx, onnxruntime and numpy only.
"""

import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ci_models import Builder  # noqa: E402
from corpus_common import random_feeds, write_entry  # noqa: E402

F = TensorProto.FLOAT
I64 = TensorProto.INT64
OPSET = 17


def vi(name, dims, t=F):
    return helper.make_tensor_value_info(name, t, dims)


def shape_part(b, x, idx):
    """Unsqueeze(Gather(Shape(x), idx)) as exporters write it."""
    s = b.op("Shape", [x])
    g = b.op("Gather", [s, b.const(f"i{b.n}", idx)], axis=0)
    return b.op("Unsqueeze", [g, b.const(f"ax{b.n}", [0])])


def static_tail():
    b = Builder(1)
    s = b.op("Shape", ["x"])
    tail = b.op("Slice", [s, b.const("one", [1]), b.const("big", [2**62])])
    n = b.op("ReduceProd", [tail], keepdims=1)
    shape = b.op("Concat", [b.const("m1", [-1]), n], axis=0)
    b.op("Reshape", ["x", shape])
    b.rename_last("y")
    m = b.model("static_tail", [vi("x", ["N", 3, 4])], [vi("y", ["N", 12])], OPSET)
    return m, {"x": ("normal", ["N", 3, 4])}


def flatten_batch():
    b = Builder(2)
    c = b.op("Conv", ["x", b.w("cw", [4, 2, 3, 3]), b.w("cb", [4])], pads=[1, 1, 1, 1])
    r = b.op("Relu", [c])
    n = shape_part(b, r, 0)
    shape = b.op("Concat", [n, b.const("m1", [-1])], axis=0)
    flat = b.op("Reshape", [r, shape])
    mm = b.op("MatMul", [flat, b.w("fw", [4 * 6 * 6, 5])])
    b.op("Add", [mm, b.w("fb", [5])])
    b.rename_last("y")
    m = b.model("flatten_batch", [vi("x", ["N", 2, 6, 6])], [vi("y", ["N", 5])], OPSET)
    return m, {"x": ("normal", ["N", 2, 6, 6])}


def lstm_zero_state():
    b = Builder(3)
    s = b.op("Shape", ["x"])
    s32 = b.op("Cast", [s], to=TensorProto.INT32)
    batch = b.op("Slice", [s32, b.const("one", [1]), b.const("two", [2]), b.const("zero", [0])])
    shape32 = b.op("Concat", [b.const("nd", [1], np.int32), batch, b.const("hid", [6], np.int32)], axis=0)
    shape = b.op("Cast", [shape32], to=TensorProto.INT64)
    h0 = b.op("Expand", [b.const("zf", 0.0, np.float32), shape])
    c0 = b.op("Expand", [b.const("zf2", 0.0, np.float32), shape])
    y, _, _ = b.op(
        "LSTM",
        ["x", b.w("W", [1, 24, 4]), b.w("R", [1, 24, 6]), b.w("B", [1, 48]), "", h0, c0],
        n_out=3,
        hidden_size=6,
    )
    sq = b.op("Squeeze", [y, b.const("ax1", [1])])
    t1 = b.op("Transpose", [sq], perm=[1, 0, 2])
    b.op("Transpose", [t1], perm=[1, 0, 2])
    b.rename_last("y")
    m = b.model("lstm_zero_state", [vi("x", ["S", "N", 4])], [vi("y", ["S", "N", 6])], OPSET)
    return m, {"x": ("normal", ["S", "N", 4])}


def heads():
    b = Builder(4)
    q = b.op("Add", [b.op("MatMul", ["x", b.w("wq", [16, 16])]), b.w("bq", [16])])
    nb, ns = shape_part(b, "x", 0), shape_part(b, "x", 1)
    split = b.op("Concat", [nb, ns, b.const("h", [2]), b.const("d", [8])], axis=0)
    t = b.op("Transpose", [b.op("Reshape", [q, split])], perm=[0, 2, 1, 3])
    a = b.op("Softmax", [b.op("MatMul", [t, b.op("Transpose", [t], perm=[0, 1, 3, 2])])], axis=-1)
    o = b.op("Transpose", [b.op("MatMul", [a, t])], perm=[0, 2, 1, 3])
    nb2, ns2 = shape_part(b, "x", 0), shape_part(b, "x", 1)
    merge = b.op("Concat", [nb2, ns2, b.const("e", [16])], axis=0)
    b.op("Reshape", [o, merge])
    b.rename_last("y")
    m = b.model("heads", [vi("x", ["B", "S", 16])], [vi("y", ["B", "S", 16])], OPSET)
    return m, {"x": ("normal", ["B", "S", 16])}


def head_scale():
    b = Builder(5)
    s = b.op("Shape", ["x"])
    d = b.op("Slice", [s, b.const("m1", [-1]), b.const("big", [2**62])])
    f = b.op("Cast", [d], to=F)
    k = b.op("Div", [b.const("onef", [1.0], np.float32), b.op("Sqrt", [f])])
    b.op("Mul", ["x", k])
    b.rename_last("y")
    m = b.model("head_scale", [vi("x", ["B", 2, "S", 8])], [vi("y", ["B", 2, "S", 8])], OPSET)
    return m, {"x": ("normal", ["B", 2, "S", 8])}


def transposes():
    b = Builder(6)
    t = b.op("Transpose", ["x"], perm=[1, 0, 2])
    t2 = b.op("Transpose", [t], perm=[1, 0, 2])
    c = b.op("Cast", [t2], to=F)
    b.op("Relu", [c])
    b.rename_last("y")
    m = b.model("transposes", [vi("x", ["S", "N", 5])], [vi("y", ["S", "N", 5])], OPSET)
    return m, {"x": ("normal", ["S", "N", 5])}


def dup_shapes():
    b = Builder(7)
    x = b.op("Relu", ["x"])
    parts = [shape_part(b, x, i) for i in (0, 2, 3)]
    split = b.op("Concat", [parts[0], b.const("g", [2]), b.const("c", [2]), parts[1], parts[2]], axis=0)
    t = b.op("Transpose", [b.op("Reshape", [x, split])], perm=[0, 2, 1, 3, 4])
    parts2 = [shape_part(b, x, i) for i in (0, 2, 3)]
    merge = b.op("Concat", [parts2[0], b.const("c4", [4]), parts2[1], parts2[2]], axis=0)
    b.op("Reshape", [t, merge])
    b.rename_last("y")
    m = b.model("dup_shapes", [vi("x", ["N", 4, "H", "W"])], [vi("y", ["N", 4, "H", "W"])], OPSET)
    return m, {"x": ("normal", ["N", 4, "H", "W"])}


def resize_sizes():
    b = Builder(8)
    small = b.op("MaxPool", ["x"], kernel_shape=[2, 2], strides=[2, 2])
    s = b.op("Shape", [small])
    nc = b.op("Slice", [s, b.const("z", [0]), b.const("two", [2]), b.const("z2", [0])])
    hw = b.op("Concat", [shape_part(b, "x", 2), shape_part(b, "x", 3)], axis=0)
    sizes = b.op("Concat", [nc, hw], axis=0)
    b.op("Resize", [small, "", "", sizes], mode="nearest")
    b.rename_last("y")
    m = b.model("resize_sizes", [vi("x", ["N", 3, "H", "W"])], [vi("y", ["N", 3, "H", "W"])], OPSET)
    return m, {"x": ("normal", ["N", 3, "H", "W"])}


def conv_scales():
    b = Builder(9)
    h = b.op("Conv", ["x", b.w("w1", [8, 4, 1, 1]), b.w("b1", [8])])
    g = b.op("Mul", [b.op("Mul", [h, b.op("Sigmoid", [h])]), b.const("half", 0.5, np.float32)])
    y = b.op("Conv", [g, b.w("w2", [4, 8, 1, 1]), b.w("b2", [4])])
    y = b.op("Mul", [y, b.w("gamma", [4, 1, 1])])
    y = b.op("Add", [y, "x"])
    y = b.op("Mul", [y, b.const("ones", np.ones([4, 1, 1]), np.float32)])
    b.op("Add", [y, b.const("zeros", np.zeros([4, 1, 1]), np.float32)])
    b.rename_last("y")
    m = b.model("conv_scales", [vi("x", ["N", 4, "H", "W"])], [vi("y", ["N", 4, "H", "W"])], OPSET)
    return m, {"x": ("normal", ["N", 4, "H", "W"])}


def mask_expand():
    b = Builder(10)
    nb, ns = shape_part(b, "mask", 0), shape_part(b, "mask", 1)
    target = b.op("Concat", [nb, b.const("one", [1]), b.const("one2", [1]), ns], axis=0)
    m4 = b.op("Unsqueeze", [b.op("Unsqueeze", ["mask", b.const("a1", [1])]), b.const("a2", [2])])
    e = b.op("Expand", [m4, target])
    cond = b.op("And", [b.op("Cast", [e], to=TensorProto.BOOL), b.const("t", [True], np.bool_)])
    b.op("Where", [cond, b.const("z", 0.0, np.float32), b.const("neg", -1e9, np.float32)])
    b.rename_last("y")
    m = b.model("mask_expand", [vi("mask", ["B", "S"], I64)], [vi("y", ["B", 1, 1, "S"])], OPSET)
    return m, {"mask": (("int", 0, 2), ["B", "S"])}


MODELS = [
    static_tail,
    flatten_batch,
    lstm_zero_state,
    heads,
    head_scale,
    transposes,
    dup_shapes,
    resize_sizes,
    conv_scales,
    mask_expand,
]

# Two sizes per model: every symbolic dim takes one value per size.
SIZES = [
    {"N": 2, "B": 2, "S": 5, "H": 8, "W": 6},
    {"N": 3, "B": 1, "S": 3, "H": 4, "W": 10},
]


def feeds(spec, dims, seed):
    inputs = {}
    for name, (kind, shape) in spec.items():
        concrete = [dims.get(d, d) if isinstance(d, str) else d for d in shape]
        dtype = np.int64 if isinstance(kind, tuple) else np.float32
        inputs[name] = (concrete, dtype, kind)
    return random_feeds(inputs, seed)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("-o", "--out", default=os.path.join(root, "target", "fold-ci"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    import onnx

    for make in MODELS:
        model, spec = make()
        onnx.checker.check_model(model, full_check=True)
        name = model.graph.name
        path = os.path.join(args.out, f"{name}.onnx")
        onnx.save(model, path)
        sizes = [feeds(spec, dims, k) for k, dims in enumerate(SIZES)]
        write_entry(args.out, name, path, sizes, "onnx.helper", "fold_ci_models.py")
        print(f"{name}: {len(model.graph.node)} nodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
