#!/usr/bin/env python3
"""Models of the kernel families issue 29 names (recurrent cells, Einsum,
group normalization), at the sizes real ones run, for timing (not in CI):

    python3 scripts/corpus/kernel_models.py [-o DIR]   # default target/corpus-kernels
    python3 scripts/corpus/run.py --corpus target/corpus-kernels \\
        --compile-arg=--target-cpu --compile-arg=native

Written as torch.onnx and tf2onnx write them (random weights, fixed
seed; NAME.onnx / NAME.json / NAME.size{k}.npz like ci_models.py):
  rnn_gru_denoiser  batch-first spectrogram frames -> Transpose -> two GRU
                    layers (linear_before_reset, torch's form), hidden 256,
                    -> a sigmoid mask per bin; 400 frames
  rnn_bigru_tagger  embedded tokens -> a bidirectional GRU, hidden 128 ->
                    tag scores; 64 tokens, batch 1 and 16
  rnn_lstm_vad      a stateful LSTM over a window's features (silero-style:
                    h and c in and out), hidden 64; 1 and 200 windows
  rnn_bilstm        a two-layer bidirectional LSTM, hidden 256, 100 steps,
                    batch 4 (speech or text encoders)
  unet_attention    a latent-diffusion U-Net's attention as its einsum
                    form writes it: 8 heads over 32x32 latents (1024
                    tokens), Einsum 'bid,bjd->bij', Softmax, 'bij,bjd->bid'
  unet_resblock     GroupNorm(32) as torch exports it (Reshape ->
                    InstanceNormalization -> Reshape -> Mul -> Add), SiLU,
                    a 3x3 conv; 320 channels at 32x32
  gemm_*            single products at attention's shapes (8 x 1024 x
                    1024, depth 40 = a head): Einsum 'bid,bjd->bij' and
                    'bij,bjd->bid', MatMul with B transposed (Q Kt) or not,
                    and the same at depth 320; a 32 MiB output per call
"""

import argparse
import os
import sys

import numpy as np
import onnx
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ci_models import Builder, F, vi  # noqa: E402
from corpus_common import random_feeds, write_entry  # noqa: E402


def gru_layer(b, x, name, inp, hid, direction="forward"):
    dirs = 2 if direction == "bidirectional" else 1
    w = [b.w(f"{name}.W", [dirs, 3 * hid, inp]), b.w(f"{name}.R", [dirs, 3 * hid, hid]), b.w(f"{name}.B", [dirs, 6 * hid], 0.1)]
    y, _ = b.op("GRU", [x] + w, n_out=2, hidden_size=hid, linear_before_reset=1, direction=direction)
    return y


def rnn_gru_denoiser():
    b = Builder(21)
    bins, hid = 161, 256
    x = b.op("Transpose", ["spec"], perm=[1, 0, 2])  # [frames, batch, bins]
    y = gru_layer(b, x, "gru1", bins, hid)
    y = b.op("Squeeze", [y, b.const("ax1", [1])])
    y = gru_layer(b, y, "gru2", hid, hid)
    y = b.op("Squeeze", [y, b.const("ax1b", [1])])
    mask = b.op("Sigmoid", [b.op("Add", [b.op("MatMul", [y, b.w("mask.w", [hid, bins])]), b.w("mask.b", [bins], 0.1)])])
    b.op("Transpose", [mask], perm=[1, 0, 2])
    b.rename_last("mask")
    m = b.model("rnn_gru_denoiser", [vi("spec", F, ["batch", "frames", bins])], [vi("mask", F, ["batch", "frames", bins])], 14)
    return m, [{"spec": ([1, 400, bins], np.float32, "normal")}], "2-layer GRU 256 (linear_before_reset), 400 frames"


def rnn_bigru_tagger():
    b = Builder(22)
    emb, hid, tags = 100, 128, 20
    x = b.op("Transpose", ["tokens"], perm=[1, 0, 2])
    y = gru_layer(b, x, "bigru", emb, hid, "bidirectional")  # [seq, 2, batch, hid]
    y = b.op("Transpose", [y], perm=[2, 0, 1, 3])
    y = b.op("Reshape", [y, b.const("shape", [0, 0, 2 * hid])])
    b.op("MatMul", [y, b.w("tags.w", [2 * hid, tags])])
    b.rename_last("scores")
    m = b.model("rnn_bigru_tagger", [vi("tokens", F, ["batch", "seq", emb])], [vi("scores", F, ["batch", "seq", tags])], 14)
    sizes = [{"tokens": ([1, 64, emb], np.float32, "normal")}, {"tokens": ([16, 64, emb], np.float32, "normal")}]
    return m, sizes, "bidirectional GRU 128 (linear_before_reset), 64 tokens"


def rnn_lstm_vad():
    b = Builder(23)
    feat, hid = 64, 64
    y, hn, cn = b.op("LSTM", ["x", b.w("W", [1, 4 * hid, feat]), b.w("R", [1, 4 * hid, hid]), b.w("B", [1, 8 * hid], 0.1), "", "h", "c"],
                     n_out=3, hidden_size=hid)
    y = b.op("Squeeze", [y, b.const("ax1", [1])])
    b.op("Sigmoid", [b.op("MatMul", [y, b.w("out.w", [hid, 1])])])
    b.rename_last("prob")
    b.op("Identity", [hn])
    b.rename_last("hn")
    b.op("Identity", [cn])
    b.rename_last("cn")
    ins = [vi("x", F, ["windows", 1, feat]), vi("h", F, [1, 1, hid]), vi("c", F, [1, 1, hid])]
    outs = [vi("prob", F, ["windows", 1, 1]), vi("hn", F, [1, 1, hid]), vi("cn", F, [1, 1, hid])]
    m = b.model("rnn_lstm_vad", ins, outs, 14)
    state = ([1, 1, hid], np.float32, "normal")
    sizes = [{"x": ([n, 1, feat], np.float32, "normal"), "h": state, "c": state} for n in (1, 200)]
    return m, sizes, "stateful LSTM 64, 1 and 200 windows"


def rnn_bilstm():
    b = Builder(24)
    feat, hid = 80, 256
    x = "x"  # [seq, batch, feat]
    for i, inp in enumerate([feat, 2 * hid]):
        w = [b.w(f"l{i}.W", [2, 4 * hid, inp]), b.w(f"l{i}.R", [2, 4 * hid, hid]), b.w(f"l{i}.B", [2, 8 * hid], 0.1)]
        y = b.op("LSTM", [x] + w, hidden_size=hid, direction="bidirectional")
        y = b.op("Transpose", [y], perm=[0, 2, 1, 3])
        x = b.op("Reshape", [y, b.const(f"shape{i}", [0, 0, 2 * hid])])
    b.op("Identity", [x])
    b.rename_last("features")
    m = b.model("rnn_bilstm", [vi("x", F, ["seq", "batch", feat])], [vi("features", F, ["seq", "batch", 2 * hid])], 14)
    return m, [{"x": ([100, 4, feat], np.float32, "normal")}], "2-layer bidirectional LSTM 256, 100 steps, batch 4"


def unet_attention():
    b = Builder(25)
    ch, heads = 320, 8
    d = ch // heads
    x = "x"  # [batch, tokens, ch]
    q, k, v = (b.op("MatMul", [x, b.w(f"{n}.w", [ch, ch])]) for n in "qkv")
    heads_shape = b.const("heads", [0, -1, heads, d])
    tokens = b.op("Gather", [b.op("Shape", [x]), b.const("one", [1])], axis=0)
    merged = b.op("Concat", [b.const("minus1", [-1]), tokens, b.const("d", [d])], axis=0)  # [batch*heads, tokens, d]

    def split(t):
        t = b.op("Reshape", [t, heads_shape])
        t = b.op("Transpose", [t], perm=[0, 2, 1, 3])
        return b.op("Reshape", [t, merged])  # [batch*heads, tokens, d]

    q, k, v = split(q), split(k), split(v)
    s = b.op("Mul", [b.op("Einsum", [q, k], equation="bid,bjd->bij"), b.const("scale", d ** -0.5, np.float32)])
    p = b.op("Softmax", [s], axis=-1)
    o = b.op("Einsum", [p, v], equation="bij,bjd->bid")
    unmerge = b.op("Concat", [b.const("bh", [-1, heads]), tokens, b.const("d2", [d])], axis=0)
    o = b.op("Reshape", [o, unmerge])
    o = b.op("Transpose", [o], perm=[0, 2, 1, 3])
    o = b.op("Reshape", [o, b.const("tokens", [0, 0, ch])])
    b.op("MatMul", [o, b.w("out.w", [ch, ch])])
    b.rename_last("y")
    m = b.model("unet_attention", [vi("x", F, ["batch", "tokens", ch])], [vi("y", F, ["batch", "tokens", ch])], 14)
    return m, [{"x": ([1, 1024, ch], np.float32, "normal")}], "8-head einsum attention, 1024 tokens"


def unet_resblock():
    b = Builder(26)
    ch, groups = 320, 32
    g = b.op("Reshape", ["x", b.const("grouped", [0, groups, -1])])
    g = b.op("InstanceNormalization", [g, b.const("ones", np.ones(groups), np.float32),
                                       b.const("zeros", np.zeros(groups), np.float32)], epsilon=1e-5)
    g = b.op("Reshape", [g, b.op("Shape", ["x"])])
    g = b.op("Add", [b.op("Mul", [g, b.w("gamma", [ch, 1, 1], 1.0)]), b.w("beta", [ch, 1, 1], 0.1)])
    g = b.op("Mul", [g, b.op("Sigmoid", [g])])
    b.op("Conv", [g, b.w("conv.w", [ch, ch, 3, 3]), b.w("conv.b", [ch], 0.1)], pads=[1, 1, 1, 1])
    b.rename_last("y")
    m = b.model("unet_resblock", [vi("x", F, ["batch", ch, "h", "w"])], [vi("y", F, ["batch", ch, "h", "w"])], 14)
    return m, [{"x": ([1, ch, 32, 32], np.float32, "normal")}], "GroupNorm(32) via InstanceNormalization, SiLU, 3x3 conv"


def one_node(name, nodes, ins, shapes, notes, out=("B", "I", "J")):
    m = helper.make_graph(nodes, name, [vi(n, F, d) for n, d in ins], [vi("y", F, list(out))])
    model = helper.make_model(m, opset_imports=[helper.make_opsetid("", 14)], producer_name="onnxc-corpus-ci")
    model.ir_version = 8
    return model, [{n: (shape, np.float32, "normal") for n, shape in shapes.items()}], notes


def gemm_einsum_scores():
    return one_node("gemm_einsum_scores", [helper.make_node("Einsum", ["q", "k"], ["y"], equation="bid,bjd->bij")],
                    [("q", ["B", "I", 40]), ("k", ["B", "J", 40])], {"q": [8, 1024, 40], "k": [8, 1024, 40]},
                    "Einsum bid,bjd->bij, depth 40")


def gemm_einsum_values():
    return one_node("gemm_einsum_values", [helper.make_node("Einsum", ["p", "v"], ["y"], equation="bij,bjd->bid")],
                    [("p", ["B", "I", "J"]), ("v", ["B", "J", 40])], {"p": [8, 1024, 1024], "v": [8, 1024, 40]},
                    "Einsum bij,bjd->bid, depth 1024", out=("B", "I", 40))


def gemm_matmul_scores():
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]), helper.make_node("MatMul", ["q", "kt"], ["y"])]
    return one_node("gemm_matmul_scores", nodes, [("q", ["B", "I", 40]), ("k", ["B", "J", 40])],
                    {"q": [8, 1024, 40], "k": [8, 1024, 40]}, "MatMul(Q, Transpose(K)), depth 40")


def gemm_matmul_depth(depth):
    def make():
        return one_node(f"gemm_matmul_depth{depth}", [helper.make_node("MatMul", ["a", "b"], ["y"])],
                        [("a", ["B", "I", depth]), ("b", ["B", depth, "J"])],
                        {"a": [8, 1024, depth], "b": [8, depth, 1024]}, f"MatMul, depth {depth}")
    make.__name__ = f"gemm_matmul_depth{depth}"
    return make


MODELS = [rnn_gru_denoiser, rnn_bigru_tagger, rnn_lstm_vad, rnn_bilstm, unet_attention, unet_resblock,
          gemm_einsum_scores, gemm_einsum_values, gemm_matmul_scores, gemm_matmul_depth(40), gemm_matmul_depth(320)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--out", default="target/corpus-kernels")
    ap.add_argument("--only", help="comma-separated model names")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for fn in MODELS:
        if args.only and fn.__name__ not in args.only.split(","):
            continue
        model, specs, notes = fn()
        onnx.checker.check_model(model)
        path = os.path.join(args.out, fn.__name__ + ".onnx")
        onnx.save(model, path)
        feeds = [random_feeds(spec, seed=200 + k) for k, spec in enumerate(specs)]
        write_entry(args.out, fn.__name__, path, feeds, source="kernel_models.py (onnx.helper)",
                    exporter="kernel_models.py", exporter_version=onnx.__version__, notes=notes)
        print(f"{fn.__name__:18} {len(specs)} sizes  {notes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
