#!/usr/bin/env python3
"""A synthetic decoder-shaped model of a given size with its weights in
external data, written in constant memory (weights streamed to the file):
the model for the fold and streaming figures of models over 2 GiB.

    python3 scripts/big_model.py --gib 8 -o target/big/big8.onnx

Graph (float32, `ids` int64 [batch, seq]): an embedding Gather, then
`layers` blocks h = Tanh(MatMul(h, W_i) + b_i), then logits = MatMul(h,
lm_head). It carries what folding meets in exported LLMs: `lm_head` is a
[D, vocab] weight stored twice (tied weights written twice: `lm_head`
and a byte-identical `lm_head_copy`, both used), the
first block's weight comes from a Constant node, and the sequence length
goes through a Shape/Gather/Concat/Reshape chain that folds. Logits are
[batch * seq, vocab]. Weights are
random normal scaled by 1/sqrt(D), so Tanh keeps activations bounded.
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

VOCAB = 32000


def external(name, shape, location, offset, length):
    t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=shape)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


class DataFile:
    """The external data file: each tensor appended at a 64-byte offset."""

    def __init__(self, path):
        self.f = open(path, "wb")
        self.location = os.path.basename(path)

    def add(self, name, array):
        pad = -self.f.tell() % 64
        self.f.write(b"\0" * pad)
        at = self.f.tell()
        array.tofile(self.f)
        return external(name, list(array.shape), self.location, at, array.nbytes)

    def add_rows(self, name, rows, cols, rng, scale):
        """A [rows, cols] weight written a slab at a time."""
        pad = -self.f.tell() % 64
        self.f.write(b"\0" * pad)
        at = self.f.tell()
        step = max(1, (64 << 20) // (cols * 4))
        for r in range(0, rows, step):
            n = min(step, rows - r)
            (rng.standard_normal((n, cols), dtype=np.float32) * scale).tofile(self.f)
        return external(name, [rows, cols], self.location, at, rows * cols * 4)

    def copy_of(self, name, tensor):
        """`tensor`'s bytes again, under `name` (a tied weight stored twice)."""
        src = {e.key: e.value for e in tensor.external_data}
        pad = -self.f.tell() % 64
        self.f.write(b"\0" * pad)
        at = self.f.tell()
        self.f.flush()
        with open(self.f.name, "rb") as r:
            r.seek(int(src["offset"]))
            left = int(src["length"])
            while left:
                chunk = r.read(min(left, 64 << 20))
                self.f.write(chunk)
                left -= len(chunk)
        return external(name, list(tensor.dims), self.location, at, int(src["length"]))


def layers_for(gib, d):
    weights = gib * (1 << 30) - 3 * VOCAB * d * 4
    return max(1, int(weights // (d * d * 4 + d * 4)))


def build(path, gib, d, layers, seed):
    rng = np.random.default_rng(seed)
    data = DataFile(path + ".data")
    scale = np.float32(1.0 / np.sqrt(d))
    inits = [data.add_rows("embed", VOCAB, d, rng, 1.0)]
    head = data.add_rows("lm_head", d, VOCAB, rng, scale)
    inits += [head, data.copy_of("lm_head_copy", head)]
    nodes = [
        helper.make_node("Gather", ["embed", "ids"], ["h0"]),
        # [-1, D] from the embedding's shape: a chain that folds away.
        helper.make_node("Shape", ["h0"], ["h0_shape"]),
        helper.make_node("Gather", ["h0_shape", "two"], ["dim"], axis=0),
        helper.make_node("Concat", ["minus_one", "dim"], ["flat_shape"], axis=0),
    ]
    small = [
        helper.make_tensor("two", TensorProto.INT64, [1], [2]),
        helper.make_tensor("minus_one", TensorProto.INT64, [1], [-1]),
    ]
    h = "h0"
    for i in range(layers):
        w = data.add_rows(f"w{i}", d, d, rng, scale)
        b = data.add(f"b{i}", rng.standard_normal(d, dtype=np.float32) * np.float32(0.1))
        if i == 0:
            # A weight from a Constant node, as tf2onnx and older exporters write.
            nodes.append(helper.make_node("Constant", [], ["w0"], value=w))
        else:
            inits.append(w)
        inits.append(b)
        nodes += [
            helper.make_node("MatMul", [h, f"w{i}"], [f"m{i}"]),
            helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"]),
            helper.make_node("Tanh", [f"a{i}"], [f"h{i + 1}"]),
        ]
        h = f"h{i + 1}"
    nodes += [
        helper.make_node("Reshape", [h, "flat_shape"], ["flat"]),
        helper.make_node("MatMul", ["flat", "lm_head"], ["logits"]),
        helper.make_node("MatMul", ["flat", "lm_head_copy"], ["logits_tied"]),
    ]
    data.f.close()
    graph = helper.make_graph(
        nodes,
        f"big{gib}",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "seq"])],
        [
            helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["rows", VOCAB]),
            helper.make_tensor_value_info("logits_tied", TensorProto.FLOAT, ["rows", VOCAB]),
        ],
        small + inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="big_model.py")
    model.ir_version = 8
    onnx.save(model, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gib", type=float, default=8.0, help="about this many GiB of weights")
    ap.add_argument("--dim", type=int, default=4096, help="hidden size D")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    os.makedirs(os.path.dirname(os.path.abspath(a.output)), exist_ok=True)
    layers = layers_for(a.gib, a.dim)
    build(a.output, a.gib, a.dim, layers, a.seed)
    size = os.path.getsize(a.output + ".data")
    print(f"{a.output}: {layers} layers of {a.dim}, {size / (1 << 30):.2f} GiB of external data")


if __name__ == "__main__":
    main()
