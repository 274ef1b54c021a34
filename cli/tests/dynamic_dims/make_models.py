#!/usr/bin/env python3
"""Models whose kernels must take runtime dims (issue 14): each op with its
inputs declared by dim_params, and two input-size sets that move them.

    python3 make_models.py OUT_DIR [--only a,b]

Writes the corpus layout of scripts/corpus (NAME.onnx, NAME.json,
NAME.size{k}.npz with onnxruntime's outputs; the onnx reference
evaluator's for ops onnxruntime does not run yet), so that
scripts/corpus/run.py compiles each model once with `--emit lib` and calls
it at both sizes. Needs onnx, onnxruntime and numpy.
"""

import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "scripts", "corpus"))
from corpus_common import random_feeds, write_entry  # noqa: E402

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def vi(name, elem, dims):
    return helper.make_tensor_value_info(name, elem, dims)


def init(name, value, dtype=np.float32):
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def model(nodes, inputs, outputs, opset, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="onnxc-dynamic-dims")
    m.ir_version = 10
    return m


def one_op(op, inputs, outputs, opset, inits=(), **attrs):
    """A model of one node from the names of `inputs`/`outputs` and `inits`."""
    names = [i.name for i in inputs] + [t.name for t in inits]
    if "_inputs" in attrs:
        names = attrs.pop("_inputs")
    node = helper.make_node(op, names, [o.name for o in outputs], name=op.lower() + "_0", **attrs)
    return model([node], inputs, outputs, opset, inits)


# ------------------------------------------------------------------ models


def rotary_head():
    """RotaryEmbedding with a runtime head size (4-D input, position ids)."""
    m = one_op(
        "RotaryEmbedding",
        [vi("x", F, ["B", "H", "S", "D"]), vi("cos", F, ["P", "R"]), vi("sin", F, ["P", "R"]), vi("pos", I64, ["B", "S"])],
        [vi("y", F, ["B", "H", "S", "D"])],
        23,
    )

    def size(b, h, s, d, p):
        return {
            "x": ([b, h, s, d], np.float32, "normal"),
            "cos": ([p, d // 2], np.float32, "normal"),
            "sin": ([p, d // 2], np.float32, "normal"),
            "pos": ([b, s], np.int64, ("int", 0, p)),
        }

    return m, [size(1, 2, 3, 8, 5), size(2, 3, 4, 6, 7)]


def rotary_hidden():
    """RotaryEmbedding of [B, S, H·D] with num_heads and a partial rotation."""
    m = one_op(
        "RotaryEmbedding",
        [vi("x", F, ["B", "S", "HD"]), vi("cos", F, ["B", "S", 2]), vi("sin", F, ["B", "S", 2])],
        [vi("y", F, ["B", "S", "HD"])],
        23,
        num_heads=2,
        rotary_embedding_dim=4,
        interleaved=1,
    )

    def size(b, s, d):
        return {
            "x": ([b, s, 2 * d], np.float32, "normal"),
            "cos": ([b, s, 2], np.float32, "normal"),
            "sin": ([b, s, 2], np.float32, "normal"),
        }

    return m, [size(1, 3, 8), size(2, 5, 6)]


def dft_onesided():
    """DFT (opset 20) of a signal of runtime length, one-sided, axis 1."""
    m = one_op("DFT", [vi("x", F, ["B", "L", 1])], [vi("y", F, ["B", "K", 2])], 20, onesided=1,
               _inputs=["x", "", "axis"], inits=[init("axis", 1, np.int64)])
    return m, [{"x": ([2, 9, 1], np.float32, "normal")}, {"x": ([3, 16, 1], np.float32, "normal")}]


def dft_length_input():
    """DFT with a runtime dft_length (zero-padding or truncating) on complex input."""
    m = one_op("DFT", [vi("x", F, ["B", "L", 2]), vi("n", I64, [])], [vi("y", F, ["B", "K", 2])], 20,
               _inputs=["x", "n"])
    return m, [
        {"x": ([2, 6, 2], np.float32, "normal"), "n": ([], np.int64, ("const", 8))},
        {"x": ([1, 12, 2], np.float32, "normal"), "n": ([], np.int64, ("const", 5))},
    ]


def dft_irfft():
    """Inverse one-sided DFT (irfft): real output of runtime length 2(L-1)."""
    m = one_op("DFT", [vi("x", F, ["B", "L", 2])], [vi("y", F, ["B", "K", 1])], 20, inverse=1, onesided=1,
               _inputs=["x"])
    return m, [{"x": ([2, 5, 2], np.float32, "normal")}, {"x": ([1, 9, 2], np.float32, "normal")}]


def stft_signal():
    """STFT of a signal of runtime length with a runtime hop and a window."""
    m = one_op("STFT", [vi("x", F, ["B", "L", 1]), vi("hop", I64, []), vi("w", F, ["W"])],
               [vi("y", F, ["B", "T", "K", 2])], 17, _inputs=["x", "hop", "w"])
    return m, [
        {"x": ([1, 40, 1], np.float32, "normal"), "hop": ([], np.int64, ("const", 8)), "w": ([16], np.float32, "uniform")},
        {"x": ([2, 67, 1], np.float32, "normal"), "hop": ([], np.int64, ("const", 5)), "w": ([10], np.float32, "uniform")},
    ]


def max_unpool():
    """MaxUnpool of runtime N, C, H, W: unpooled extents computed at run time."""
    m = one_op("MaxUnpool", [vi("x", F, ["N", "C", "H", "W"]), vi("i", I64, ["N", "C", "H", "W"])],
               [vi("y", F, ["N", "C", "H2", "W2"])], 11, kernel_shape=[2, 2], strides=[2, 2])

    def size(n, c, h, w):
        # each index within its own image and channel, as MaxPool writes them
        return {"x": ([n, c, h, w], np.float32, "normal"), "i": distinct_indices([n, c, h, w], n * c * 4 * h * w, h + w)}

    return m, [size(1, 2, 3, 3), size(2, 1, 4, 5)]


def max_unpool_shape():
    """MaxUnpool into a larger runtime output_shape."""
    m = one_op("MaxUnpool", [vi("x", F, ["N", "C", "H", "W"]), vi("i", I64, ["N", "C", "H", "W"]), vi("s", I64, [4])],
               [vi("y", F, ["N", "C", "H2", "W2"])], 11, kernel_shape=[2, 2], strides=[2, 2])

    def size(n, c, h, w):
        total = n * c * (2 * h) * (2 * w)  # indices into the unpooled shape
        return {"x": ([n, c, h, w], np.float32, "normal"), "i": distinct_indices([n, c, h, w], total, 3),
                "s": np.array([n, c, 2 * h + 1, 2 * w + 1], dtype=np.int64)}

    return m, [size(1, 1, 2, 2), size(2, 2, 3, 4)]


def det():
    """Det of a batch of matrices of runtime size."""
    m = one_op("Det", [vi("x", F, ["B", "N", "N"])], [vi("y", F, ["B"])], 13)
    return m, [{"x": ([2, 3, 3], np.float32, "normal")}, {"x": ([3, 5, 5], np.float32, "normal")}]


def group_norm():
    """GroupNormalization (opset 21) with a runtime channel count."""
    m = one_op("GroupNormalization", [vi("x", F, ["N", "C", "H"]), vi("s", F, ["C"]), vi("b", F, ["C"])],
               [vi("y", F, ["N", "C", "H"])], 21, num_groups=2)

    def size(n, c, h):
        return {"x": ([n, c, h], np.float32, "normal"), "s": ([c], np.float32, "normal"), "b": ([c], np.float32, "normal")}

    return m, [size(1, 4, 5), size(2, 6, 3)]


def group_norm_18():
    """GroupNormalization (opset 18: scale and bias per group), runtime dims."""
    m = one_op("GroupNormalization", [vi("x", F, ["N", "C", "H", "W"])], [vi("y", F, ["N", "C", "H", "W"])], 18,
               inits=[init("s", [0.5, 2.0, -1.0]), init("b", [0.1, 0.2, 0.3])], num_groups=3)
    return m, [{"x": ([1, 6, 2, 3], np.float32, "normal")}, {"x": ([2, 9, 3, 2], np.float32, "normal")}]


def expand_shape_input():
    """Expand to a shape read at run time whose length only the declared result rank gives."""
    m = one_op("Expand", [vi("x", F, ["A", 1]), vi("s", I64, ["K"])], [vi("y", F, ["P", "Q", "R"])], 13)
    return m, [
        {"x": ([3, 1], np.float32, "normal"), "s": np.array([2, 3, 4], dtype=np.int64)},
        {"x": ([1, 1], np.float32, "normal"), "s": np.array([2, 5, 3], dtype=np.int64)},
    ]


def broadcast_either_side():
    """Sub of two inputs with unrelated dim_params: either side broadcasts at run time (a dim of 1)."""
    m = one_op("Sub", [vi("x", F, ["A", "B"]), vi("y", F, ["C", "D"])], [vi("z", F, ["E", "G"])], 17)
    return m, [
        {"x": ([1, 37], np.float32, "normal"), "y": ([3, 37], np.float32, "normal")},
        {"x": ([3, 1], np.float32, "normal"), "y": ([1, 37], np.float32, "normal")},
        {"x": ([4, 21], np.float32, "normal"), "y": ([4, 21], np.float32, "normal")},
    ]


def gather_nd():
    """GatherND whose indices' last dim is dynamic: the result rank fixes it."""
    m = one_op("GatherND", [vi("x", F, ["A", "B", "C"]), vi("i", I64, ["M", "K"])], [vi("y", F, ["M", "C2"])], 13)

    def size(a, b, c, n):
        rng = np.random.default_rng(a)
        idx = np.stack([rng.integers(-a, a, n), rng.integers(0, b, n)], axis=1).astype(np.int64)
        return {"x": ([a, b, c], np.float32, "normal"), "i": idx}

    return m, [size(3, 4, 2, 5), size(5, 2, 6, 3)]


def gather_nd_mask():
    """torch's x[x > 0]: NonZero -> Transpose -> GatherND, no declared result shape (inference gives the rank)."""
    node = helper.make_node
    nodes = [node("Greater", ["x", "zero"], ["pos"]), node("NonZero", ["pos"], ["nz"]),
             node("Transpose", ["nz"], ["idx"], perm=[1, 0]), node("GatherND", ["x", "idx"], ["y"])]
    m = model(nodes, [vi("x", F, ["A", "B"])], [vi("y", F, None)], 13, [init("zero", 0.0)])
    return m, [{"x": ([3, 4], np.float32, "normal")}, {"x": ([5, 2], np.float32, "normal")}]


def scatter_nd():
    """ScatterND whose indices' last dim is dynamic: the ranks of data and updates fix it."""
    m = one_op("ScatterND", [vi("x", F, ["A", "B", "C"]), vi("i", I64, ["M", "K"]), vi("u", F, ["M", "C"])],
               [vi("y", F, ["A", "B", "C"])], 16, reduction="add")

    def size(a, b, c, n):
        cells = np.random.default_rng(b).permutation(a * b)[:n]
        idx = np.stack([cells // b, cells % b], axis=1).astype(np.int64)
        return {"x": ([a, b, c], np.float32, "normal"), "i": idx, "u": ([n, c], np.float32, "normal")}

    return m, [size(3, 4, 2, 5), size(2, 5, 3, 7)]


def slice_entries():
    """Slice whose starts, ends, axes and steps have a runtime length."""
    m = one_op("Slice", [vi("x", F, ["A", "B", "C"]), vi("s", I64, ["K"]), vi("e", I64, ["K"]), vi("a", I64, ["K"]),
                         vi("p", I64, ["K"])], [vi("y", F, ["P", "Q", "R"])], 13)
    i64 = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    return m, [
        {"x": ([4, 5, 6], np.float32, "normal"), "s": i64(1, -1), "e": i64(100, 0), "a": i64(-1, 1), "p": i64(2, -2)},
        {"x": ([3, 7, 2], np.float32, "normal"), "s": i64(0, 1, 2), "e": i64(2, 1000, 6), "a": i64(2, 0, 1), "p": i64(1, 1, 3)},
    ]


def slice_no_axes():
    """Slice with starts and ends of runtime length, no axes or steps (a view)."""
    m = one_op("Slice", [vi("x", F, ["A", "B"]), vi("s", I64, ["K"]), vi("e", I64, ["K"])], [vi("y", F, ["P", "Q"])],
               13)
    i64 = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    return m, [
        {"x": ([4, 5], np.float32, "normal"), "s": i64(1), "e": i64(-1)},
        {"x": ([6, 3], np.float32, "normal"), "s": i64(-4, 1), "e": i64(5, 3)},
    ]


def pad_axes():
    """Pad (opset 18) with runtime axes of runtime length, reflect mode."""
    m = one_op("Pad", [vi("x", F, ["A", "B", "C"]), vi("p", I64, ["P"]), vi("a", I64, ["K"])],
               [vi("y", F, ["X", "Y", "Z"])], 18, mode="reflect", _inputs=["x", "p", "", "a"])
    i64 = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    return m, [
        {"x": ([2, 4, 5], np.float32, "normal"), "p": i64(1, 2, 2, 0), "a": i64(-1, 1)},
        {"x": ([3, 3, 4], np.float32, "normal"), "p": i64(2, 1, 0, 1, 2, 1), "a": i64(1, 0, 2)},
    ]


def squeeze_axes():
    """Squeeze with runtime axes and dynamic dims around them."""
    m = one_op("Squeeze", [vi("x", F, ["A", "B", "C", "D"]), vi("a", I64, ["K"])], [vi("y", F, ["P", "Q"])], 13)
    i64 = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    return m, [
        {"x": ([3, 1, 4, 1], np.float32, "normal"), "a": i64(-1, 1)},
        {"x": ([1, 5, 1, 2], np.float32, "normal"), "a": i64(2, 0)},
    ]


def scan_rows():
    """Scan (opset 16) whose scan output slices have runtime dims."""
    body = helper.make_graph(
        [helper.make_node("Add", ["acc", "xt"], ["acc2"]), helper.make_node("Tanh", ["acc2"], ["yt"])],
        "body",
        [vi("acc", F, ["B", "D"]), vi("xt", F, ["B", "D"])],
        [vi("acc2", F, ["B", "D"]), vi("yt", F, ["B", "D"])],
    )
    node = helper.make_node("Scan", ["init", "x"], ["last", "ys"], body=body, num_scan_inputs=1)
    m = model([node], [vi("init", F, ["B", "D"]), vi("x", F, ["T", "B", "D"])],
              [vi("last", F, ["B", "D"]), vi("ys", F, ["T", "B", "D"])], 16)

    def size(t, bb, d):
        return {"init": ([bb, d], np.float32, "normal"), "x": ([t, bb, d], np.float32, "normal")}

    return m, [size(3, 2, 4), size(5, 3, 2)]


def loop_rows():
    """Loop with a runtime trip count whose scan output rows have a runtime length."""
    i_f = helper.make_node("Cast", ["i"], ["i_f"], to=F)
    body = helper.make_graph(
        [i_f, helper.make_node("Mul", ["x", "i_f"], ["row"]), helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body",
        [vi("i", I64, []), vi("cond", TensorProto.BOOL, [])],
        [vi("cond_out", TensorProto.BOOL, []), vi("row", F, ["N"])],
    )
    node = helper.make_node("Loop", ["m", ""], ["rows"], body=body)
    m = model([node], [vi("m", I64, []), vi("x", F, ["N"])], [vi("rows", F, ["M", "N"])], 13)
    return m, [
        {"m": ([], np.int64, ("const", 3)), "x": ([4], np.float32, "normal")},
        {"m": ([], np.int64, ("const", 5)), "x": ([7], np.float32, "normal")},
    ]


def attention_4d():
    """Attention (opset 23), 4-D, every dim dynamic, an additive mask [S, L] of runtime size."""
    m = one_op("Attention", [vi("q", F, ["B", "H", "S", "D"]), vi("k", F, ["B", "H", "L", "D"]),
                             vi("v", F, ["B", "H", "L", "E"]), vi("mask", F, ["S", "L"])],
               [vi("y", F, ["B", "H", "S", "E"])], 23)

    def size(bb, h, s, l_, d, e):
        return {"q": ([bb, h, s, d], np.float32, "normal"), "k": ([bb, h, l_, d], np.float32, "normal"),
                "v": ([bb, h, l_, e], np.float32, "normal"), "mask": ([s, l_], np.float32, "normal")}

    return m, [size(1, 2, 3, 4, 8, 5), size(2, 1, 5, 2, 4, 3)]


def attention_3d_cache():
    """Attention, 3-D with grouped heads, a KV cache of runtime length and causal masking."""
    m = one_op("Attention", [vi("q", F, ["B", "S", "QD"]), vi("k", F, ["B", "L", "KD"]), vi("v", F, ["B", "L", "KD"]),
                             vi("pk", F, ["B", 2, "P", "D"]), vi("pv", F, ["B", 2, "P", "D"])],
               [vi("y", F, ["B", "S", "QD"]), vi("present_k", F, ["B", 2, "T", "D"]),
                vi("present_v", F, ["B", 2, "T", "D"])], 23,
               q_num_heads=4, kv_num_heads=2, is_causal=1, _inputs=["q", "k", "v", "", "pk", "pv"])

    def size(bb, s, p, d):
        return {"q": ([bb, s, 4 * d], np.float32, "normal"), "k": ([bb, s, 2 * d], np.float32, "normal"),
                "v": ([bb, s, 2 * d], np.float32, "normal"), "pk": ([bb, 2, p, d], np.float32, "normal"),
                "pv": ([bb, 2, p, d], np.float32, "normal")}

    return m, [size(1, 3, 2, 4), size(2, 2, 5, 6)]


def linear_attention():
    """LinearAttention (opset 27, gated delta rule): runtime batch, steps and head sizes, a past state."""
    m = one_op("LinearAttention", [vi("q", F, ["B", "T", "QD"]), vi("k", F, ["B", "T", "KD"]),
                                   vi("v", F, ["B", "T", "VD"]), vi("s0", F, ["B", 1, "DK", "DV"]),
                                   vi("decay", F, ["B", "T", "KD"]), vi("beta", F, ["B", "T", 1])],
               [vi("y", F, ["B", "T", "YD"]), vi("s1", F, ["B", 1, "DK", "DV"])], 27,
               q_num_heads=2, kv_num_heads=1, update_rule="gated_delta")

    def size(bb, t, dk, dv):
        return {"q": ([bb, t, 2 * dk], np.float32, "normal"), "k": ([bb, t, dk], np.float32, "normal"),
                "v": ([bb, t, dv], np.float32, "normal"), "s0": ([bb, 1, dk, dv], np.float32, "normal"),
                "decay": ([bb, t, dk], np.float32, ("const", -0.1)), "beta": ([bb, t, 1], np.float32, "uniform")}

    return m, [size(1, 3, 4, 2), size(2, 5, 2, 3)]


def conv_transpose():
    """ConvTranspose, runtime N/H/W: stride 2, pads, output_padding, dilation, 2 groups."""
    w = np.random.default_rng(1).standard_normal([4, 3, 3, 2]).astype(np.float32)
    m = one_op("ConvTranspose", [vi("x", F, ["N", 4, "H", "W"])], [vi("y", F, ["N", 6, "P", "Q"])], 11,
               inits=[init("w", w), init("b", [0.1, -0.2, 0.3, 0.0, 0.5, -0.5])], strides=[2, 3], pads=[1, 0, 0, 1],
               output_padding=[1, 0], dilations=[1, 2], group=2)
    return m, [{"x": ([1, 4, 3, 4], np.float32, "normal")}, {"x": ([2, 4, 5, 2], np.float32, "normal")}]


def conv_transpose_same():
    """ConvTranspose with auto_pad SAME_UPPER and runtime spatial dims (output in·stride)."""
    w = np.random.default_rng(2).standard_normal([2, 3, 3, 3]).astype(np.float32)
    m = one_op("ConvTranspose", [vi("x", F, ["N", 2, "H", "W"])], [vi("y", F, ["N", 3, "P", "Q"])], 11,
               inits=[init("w", w)], strides=[2, 2], auto_pad="SAME_UPPER")
    return m, [{"x": ([1, 2, 3, 3], np.float32, "normal")}, {"x": ([2, 2, 4, 5], np.float32, "normal")}]


def conv_transpose_weight():
    """ConvTranspose whose weight is an input with runtime kernel extents."""
    m = one_op("ConvTranspose", [vi("x", F, ["N", "C", "H"]), vi("w", F, ["C", "M", "K"])], [vi("y", F, ["N", "M", "P"])],
               11, strides=[2])

    def size(n, c, h, mm, k):
        return {"x": ([n, c, h], np.float32, "normal"), "w": ([c, mm, k], np.float32, "normal")}

    return m, [size(1, 2, 5, 3, 3), size(2, 3, 4, 2, 4)]


def conv_integer():
    """ConvInteger, runtime N/H/W: pads, strides, SAME_UPPER-free explicit window, zero points."""
    w = np.random.default_rng(3).integers(0, 255, [3, 2, 3, 3]).astype(np.uint8)
    m = one_op("ConvInteger", [vi("x", TensorProto.UINT8, ["N", 2, "H", "W"])], [vi("y", TensorProto.INT32, ["N", 3, "P", "Q"])],
               10, inits=[init("w", w, np.uint8), init("xz", 128, np.uint8), init("wz", 100, np.uint8)],
               _inputs=["x", "w", "xz", "wz"], pads=[1, 0, 2, 1], strides=[2, 1])
    return m, [{"x": ([1, 2, 5, 4], np.uint8, ("int", 0, 255))}, {"x": ([2, 2, 3, 6], np.uint8, ("int", 0, 255))}]


def conv_integer_weight():
    """ConvInteger with auto_pad SAME_LOWER and a weight input of runtime kernel extents."""
    m = one_op("ConvInteger", [vi("x", TensorProto.UINT8, ["N", "C", "H"]), vi("w", TensorProto.UINT8, ["M", "C", "K"])],
               [vi("y", TensorProto.INT32, ["N", "M", "P"])], 10, auto_pad="SAME_LOWER", strides=[2])

    def size(n, c, h, mm, k):
        return {"x": ([n, c, h], np.uint8, ("int", 0, 255)), "w": ([mm, c, k], np.uint8, ("int", 0, 255))}

    return m, [size(1, 2, 7, 3, 3), size(2, 1, 6, 2, 4)]


def lp_pool():
    """LpPool (opset 18), runtime N/C/H/W: ceil mode, pads, strides, dilations."""
    m = one_op("LpPool", [vi("x", F, ["N", "C", "H", "W"])], [vi("y", F, ["N", "C", "P", "Q"])], 18,
               kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1], dilations=[1, 2], ceil_mode=1, p=3)
    return m, [{"x": ([1, 2, 6, 7], np.float32, "normal")}, {"x": ([2, 1, 9, 6], np.float32, "normal")}]


def lp_pool_same():
    """LpPool with auto_pad SAME_UPPER and runtime spatial dims."""
    m = one_op("LpPool", [vi("x", F, ["N", "C", "H"])], [vi("y", F, ["N", "C", "P"])], 18,
               kernel_shape=[3], strides=[2], auto_pad="SAME_UPPER")
    return m, [{"x": ([1, 2, 7], np.float32, "normal")}, {"x": ([2, 3, 10], np.float32, "normal")}]


def conv_weight():
    """Conv whose weight is an input of runtime kernel extents (the direct loop nest), SAME_UPPER, 2 groups."""
    m = one_op("Conv", [vi("x", F, ["N", "C", "H", "W"]), vi("w", F, ["M", "CG", "KH", "KW"]), vi("b", F, ["M"])],
               [vi("y", F, ["N", "M", "P", "Q"])], 11, auto_pad="SAME_UPPER", strides=[2, 1], group=2)

    def size(n, c, h, w, mm, kh, kw):
        return {"x": ([n, c, h, w], np.float32, "normal"), "w": ([mm, c // 2, kh, kw], np.float32, "normal"),
                "b": ([mm], np.float32, "normal")}

    return m, [size(1, 4, 5, 6, 2, 3, 3), size(2, 2, 7, 4, 4, 2, 1)]


def conv_f16():
    """Conv of float16 (the direct loop nest), runtime N/C/H/W and output channels."""
    m = one_op("Conv", [vi("x", TensorProto.FLOAT16, ["N", "C", "H", "W"]), vi("w", TensorProto.FLOAT16, ["M", "C", 3, 3])],
               [vi("y", TensorProto.FLOAT16, ["N", "M", "P", "Q"])], 11, pads=[1, 1, 0, 0], dilations=[1, 2])

    def size(n, c, h, w, mm):
        return {"x": ([n, c, h, w], np.float16, "normal"), "w": ([mm, c, 3, 3], np.float16, "normal")}

    return m, [size(1, 2, 4, 6, 3), size(2, 3, 3, 5, 2)]


def causal_conv():
    """CausalConvWithState (opset 27, SiLU): runtime batch, channels, length and kernel, a past state."""
    m = one_op("CausalConvWithState", [vi("x", F, ["B", "C", "L"]), vi("w", F, ["C", 1, "K"]), vi("b", F, ["C"]),
                                       vi("s0", F, ["B", "C", "K1"])],
               [vi("y", F, ["B", "C", "L"]), vi("s1", F, ["B", "C", "K1"])], 27, activation="silu")

    def size(bb, c, length, k):
        return {"x": ([bb, c, length], np.float32, "normal"), "w": ([c, 1, k], np.float32, "normal"),
                "b": ([c], np.float32, "normal"), "s0": ([bb, c, k - 1], np.float32, "normal")}

    return m, [size(1, 2, 5, 3), size(2, 3, 4, 4)]


def deform_conv():
    """DeformConv (opset 19): runtime batch, spatial dims, channels and kernel extents, a mask."""
    m = one_op("DeformConv", [vi("x", F, ["N", "C", "H", "W"]), vi("w", F, ["M", "CG", "KH", "KW"]),
                              vi("off", F, ["N", "OC", "P", "Q"]), vi("b", F, ["M"]), vi("mask", F, ["N", "MC", "P", "Q"])],
               [vi("y", F, ["N", "M", "P", "Q"])], 19, pads=[1, 1, 1, 1], group=2)

    def size(n, c, h, w, mm, kh, kw):
        p, q = h + 3 - kh, w + 3 - kw
        return {"x": ([n, c, h, w], np.float32, "normal"), "w": ([mm, c // 2, kh, kw], np.float32, "normal"),
                "off": ([n, 2 * kh * kw, p, q], np.float32, "normal"), "b": ([mm], np.float32, "normal"),
                "mask": ([n, kh * kw, p, q], np.float32, "uniform")}

    return m, [size(1, 2, 4, 5, 2, 2, 3), size(2, 4, 3, 3, 4, 3, 2)]


def col2im():
    """Col2Im (opset 18) with runtime image and block shapes and batch."""
    m = one_op("Col2Im", [vi("x", F, ["N", "CK", "L"]), vi("img", I64, [2]), vi("blk", I64, [2])],
               [vi("y", F, ["N", "C", "H", "W"])], 18, strides=[1, 2], pads=[0, 1, 1, 0])

    def size(n, c, h, w, kh, kw):
        lh = (h + 1 - kh) // 1 + 1
        lw = (w + 1 - kw) // 2 + 1
        return {"x": ([n, c * kh * kw, lh * lw], np.float32, "normal"), "img": np.array([h, w], dtype=np.int64),
                "blk": np.array([kh, kw], dtype=np.int64)}

    return m, [size(1, 2, 4, 5, 2, 2), size(2, 1, 5, 4, 3, 2)]


def if_failing_branch():
    """If on a sample rate whose 8 kHz branch is ill-typed (an LSTM over a rank-4 X) once constants
    fold: it must compile and abort only if taken (onnxruntime runs only the taken branch)."""
    rng = np.random.default_rng(0)
    hd = 3
    inits = [init("W", rng.standard_normal([1, 4 * hd, 8])), init("R", rng.standard_normal([1, 4 * hd, hd])),
             init("z0", [0], np.int64), init("k16", [16000], np.int64)]
    node = helper.make_node
    then_g = helper.make_graph(
        [node("Unsqueeze", ["x", "z0"], ["x3"]), node("LSTM", ["x3", "W", "R"], ["ty", "th"], hidden_size=hd),
         node("Squeeze", ["th", "z0"], ["t_out"])], "then", [], [vi("t_out", F, None)])
    # frames regrouped by a shape whose length onnxruntime cannot see
    ones = numpy_helper.from_array(np.array([1.0], dtype=np.float32))
    twos = numpy_helper.from_array(np.array([2], dtype=np.int64))
    else_g = helper.make_graph(
        [node("ConstantOfShape", ["c3"], ["ones"], value=ones), node("ReduceSum", ["ones"], ["n3f"], keepdims=1),
         node("Cast", ["n3f"], ["n3"], to=I64), node("ConstantOfShape", ["n3"], ["twos"], value=twos),
         node("Shape", ["x"], ["sh"]), node("Gather", ["sh", "z0"], ["n"]), node("Concat", ["n", "twos"], ["s"], axis=0),
         node("Reshape", ["x", "s"], ["x4"]), node("LSTM", ["x4", "W", "R"], ["ey", "eh"], hidden_size=hd, name="lstm8k"),
         node("Squeeze", ["eh", "z0"], ["e_out"])], "else", [], [vi("e_out", F, None)], [init("c3", [3], np.int64)])
    nodes = [node("Equal", ["sr", "k16"], ["c1"]), node("Squeeze", ["c1", "z0"], ["c"]),
             node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g, name="vad_if")]
    m = model(nodes, [vi("x", F, ["N", 8]), vi("sr", I64, [1])], [vi("y", F, ["N", hd])], 14, inits)
    k16 = ([1], np.int64, ("const", 16000))
    return m, [{"x": ([2, 8], np.float32, "normal"), "sr": k16}, {"x": ([5, 8], np.float32, "normal"), "sr": k16}]


def matmul_transposed():
    """Transposes folded into MatMul: A with its last dim moved (packed
    through strides), B transposed with a broadcast batch, a 4-D A
    permuted across batch and matrix dims, and a result written through
    the strides of the Transpose that follows it."""
    h = helper
    nodes = [
        h.make_node("Transpose", ["a"], ["at"], name="ta", perm=[0, 2, 1]),
        h.make_node("Transpose", ["b"], ["bt"], name="tb", perm=[0, 2, 1]),
        h.make_node("MatMul", ["at", "bt"], ["y1"], name="mm1"),
        h.make_node("Transpose", ["c"], ["ct"], name="tc", perm=[2, 0, 3, 1]),
        h.make_node("MatMul", ["ct", "d"], ["y2"], name="mm2"),
        # The product written through the strides of the Transpose after it.
        h.make_node("MatMul", ["ct", "d"], ["p3"], name="mm3"),
        h.make_node("Transpose", ["p3"], ["y3"], name="t3", perm=[2, 0, 1, 3]),
    ]
    m = model(
        nodes,
        [vi("a", F, ["B", "K", "M"]), vi("b", F, [1, "N", "K"]), vi("c", F, ["M", "B", 3, "K"]), vi("d", F, ["B", "N"])],
        [vi("y1", F, ["B", "M", "N"]), vi("y2", F, [3, "M", "K", "N"]), vi("y3", F, ["K", 3, "M", "N"])],
        17,
    )

    def size(bb, k, mm, n):
        return {
            "a": ([bb, k, mm], np.float32, "normal"),
            "b": ([1, n, k], np.float32, "normal"),
            "c": ([mm, bb, 3, k], np.float32, "normal"),
            "d": ([bb, n], np.float32, "normal"),
        }

    return m, [size(1, 13, 7, 9), size(3, 40, 29, 33)]


def matmul_empty_depth():
    """MatMul and Gemm whose inner dim is 0 at run time: zeros and the bias, whatever the output buffer held
    (a dead buffer of the same shape comes first)."""
    nodes = [
        helper.make_node("Exp", ["c"], ["e"]),
        helper.make_node("ReduceSum", ["e", "axes"], ["s"], keepdims=1),
        helper.make_node("MatMul", ["a", "b"], ["z"]),
        helper.make_node("Add", ["z", "s"], ["y"]),
        helper.make_node("Gemm", ["a", "b", "bias"], ["g"], beta=0.5),
    ]
    ins = [vi("a", F, ["M", "K"]), vi("b", F, ["K", "N"]), vi("c", F, ["M", "N"]), vi("bias", F, ["N"])]
    outs = [vi("y", F, ["M", "N"]), vi("g", F, ["M", "N"])]
    m = model(nodes, ins, outs, 13, [init("axes", [1], np.int64)])

    def size(mm, k, n):
        return {"a": ([mm, k], np.float32, "normal"), "b": ([k, n], np.float32, "normal"),
                "c": ([mm, n], np.float32, "normal"), "bias": ([n], np.float32, "normal")}

    return m, [size(3, 0, 37), size(20, 0, 5), size(4, 2, 17)]


def einsum_contractions():
    """Einsum equations as diffusers, transformers and tract-style exports write them (runtime sizes): batched
    products whose operands and output are read through strides, a transposed output, dot products, an
    ellipsis that broadcasts, and forms that stay loops (a label summed in one input, three operands)."""
    eqs = [
        ("bid,bjd->bij", ["x", "y"]),        # attention scores
        ("bij,bjd->bid", ["p", "y"]),        # attention values
        ("bhid,bhjd->bhij", ["q", "k"]),
        ("ik,jk->ij", ["m", "w"]),           # B stored transposed
        ("ik,kj->ji", ["m", "v"]),           # the output's last label is a row: A and B swap
        ("bi,bi->b", ["u", "u"]),            # a dot per row
        ("i,i->", ["d", "d"]),               # a scalar
        ("bi,j->bij", ["u", "d"]),           # an outer product (no summed label)
        ("...ij,...jk->...ik", ["e", "f"]),  # a batch dim of 1 broadcasts
        ("ij,kj->ikj", ["m", "w"]),          # the last label is a batch label: a nest
        ("bn,anm,bm->ba", ["g", "t", "g"]),  # three operands: a nest
        ("ij->i", ["m"]),                    # a label summed in one input: a nest
    ]
    nodes = [helper.make_node("Einsum", ins, [f"o{i}"], equation=eq) for i, (eq, ins) in enumerate(eqs)]
    ins = [vi("x", F, ["B", "I", "D"]), vi("y", F, ["B", "J", "D"]), vi("p", F, ["B", "I", "J"]),
           vi("q", F, ["B", "H", "I", "D"]), vi("k", F, ["B", "H", "J", "D"]), vi("m", F, ["I", "K"]),
           vi("w", F, ["J", "K"]), vi("v", F, ["K", "J"]), vi("u", F, ["B", "I"]), vi("d", F, ["I"]),
           vi("e", F, ["E", 1, "I", "J"]), vi("f", F, ["E", "H", "J", "K"]), vi("g", F, ["B", "N"]),
           vi("t", F, ["A", "N", "N"])]
    outs = [vi(f"o{i}", F, None) for i in range(len(eqs))]
    m = model(nodes, ins, outs, 12)

    def size(bb, i, j, d, h, kk, e, n, a):
        dims = {"x": [bb, i, d], "y": [bb, j, d], "p": [bb, i, j], "q": [bb, h, i, d], "k": [bb, h, j, d],
                "m": [i, kk], "w": [j, kk], "v": [kk, j], "u": [bb, i], "d": [i], "e": [e, 1, i, j],
                "f": [e, h, j, kk], "g": [bb, n], "t": [a, n, n]}
        return {name: (shape, np.float32, "normal") for name, shape in dims.items()}

    return m, [size(1, 1, 1, 1, 1, 1, 1, 1, 1), size(2, 7, 5, 16, 3, 9, 2, 4, 3), size(3, 33, 40, 8, 2, 17, 1, 5, 2)]


MODELS = [rotary_head, rotary_hidden, dft_onesided, dft_length_input, dft_irfft, stft_signal,
          max_unpool, max_unpool_shape, det, group_norm,
          group_norm_18, expand_shape_input, broadcast_either_side,
          gather_nd, gather_nd_mask, scatter_nd, slice_entries, slice_no_axes, pad_axes, squeeze_axes, scan_rows,
          loop_rows, attention_4d, attention_3d_cache,
          linear_attention, conv_transpose, conv_transpose_same, conv_transpose_weight,
          conv_integer, conv_integer_weight, lp_pool, lp_pool_same,
          conv_weight, conv_f16, causal_conv, deform_conv, col2im,
          if_failing_branch, matmul_transposed, matmul_empty_depth, einsum_contractions]

# Inputs that take a branch that fails at compile time: the run must stop
# with this message (cli/tests/dynamic_dims.rs runs them through `onnxc run`).
ABORTS = {
    "if_failing_branch": (
        {"x": ([3, 8], np.float32, "normal"), "sr": ([1], np.int64, ("const", 8000))},
        "onnx.If at node 'vad_if': the else branch fails: onnx.LSTM at node 'lstm8k': X must have rank 3, got 4",
    ),
}

# The onnx reference evaluator is the oracle for ops onnxruntime does not
# run yet, and for MaxUnpool with output_shape, where onnxruntime reads the
# indices in the output shape but the reference (and the backend node test)
# in the unpooled one, placed at the output's top-left corner.
# onnxruntime 1.31's Gemm drops beta when K is 0 (it returns C itself).
REFERENCE = {"max_unpool_shape", "linear_attention", "causal_conv", "matmul_empty_depth"}


def make_feeds(spec, seed):
    """random_feeds for (shape, dtype, kind) entries; arrays pass as they are."""
    arrays = {k: v for k, v in spec.items() if isinstance(v, np.ndarray)}
    feeds = random_feeds({k: v for k, v in spec.items() if k not in arrays}, seed)
    feeds.update(arrays)
    return feeds


def distinct_indices(shape, total, seed):
    """int64 indices in [0, total), all different (so no write order matters)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return rng.permutation(total)[:n].reshape(shape).astype(np.int64)


def write_abort(out, name, m, spec, message):
    """NAME.abort/: input_{i}.pb in graph-input order and message.txt."""
    d = os.path.join(out, name + ".abort")
    os.makedirs(d, exist_ok=True)
    feeds = make_feeds(spec, seed=99)
    inits = {t.name for t in m.graph.initializer}
    names = [i.name for i in m.graph.input if i.name not in inits]
    for i, n in enumerate(names):
        with open(os.path.join(d, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(feeds[n], n).SerializeToString())
    with open(os.path.join(d, "message.txt"), "w") as f:
        f.write(message)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--only", help="comma-separated model names")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    only = set(args.only.split(",")) if args.only else None
    failed = 0
    for fn in MODELS:
        name = fn.__name__
        if only and name not in only:
            continue
        try:
            m, specs = fn()
            path = os.path.join(args.out, name + ".onnx")
            with open(path, "wb") as f:
                f.write(m.SerializeToString())
            oracle = None
            if name in REFERENCE:
                from onnx.reference import ReferenceEvaluator

                ref = ReferenceEvaluator(m)
                oracle = lambda feeds, ref=ref: ref.run(None, feeds)  # noqa: E731
            feeds = [make_feeds(spec, seed=10 + k) for k, spec in enumerate(specs)]
            write_entry(args.out, name, path, feeds, source="dynamic dims", exporter="make_models.py",
                        notes=(fn.__doc__ or "").strip(), oracle=oracle)
            if name in ABORTS:
                write_abort(args.out, name, m, *ABORTS[name])
            print(f"{name}: {len(feeds)} sizes")
        except Exception as ex:  # report every model that fails, then exit 1
            failed += 1
            print(f"{name}: FAILED: {type(ex).__name__}: {ex}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
