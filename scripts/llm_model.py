#!/usr/bin/env python3
"""A random-weight int4 Llama-style decoder written with onnx.helper in the
operators onnxruntime's model builder uses (MatMulNBits,
SimplifiedLayerNormalization, RotaryEmbedding, GatherBlockQuantized), its
past/present KV caches concatenated in the graph, and a greedy decode loop
that compares onnxc with onnxruntime token by token.

    target/pyenv/bin/python scripts/llm_model.py --config small -o target/llm/small.onnx --decode 32

Configs: `tiny` (tests, seconds), `small` (~110M parameters), `1b` (~1B).
Attention is written with MatMul/Softmax (grouped KV heads repeated by
Expand) until GroupQueryAttention is supported.
"""

import argparse
import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
from test_llm_ops import pack_codes, quantize  # noqa: E402

CONFIGS = {
    # vocab, hidden, layers, heads, kv heads, intermediate
    "tiny": (512, 64, 2, 4, 2, 128),
    "small": (32000, 768, 12, 12, 4, 2048),
    "1b": (32000, 2048, 16, 32, 8, 5632),
}
BLOCK = 32


class Builder:
    def __init__(self, seed):
        self.nodes, self.inits, self.rng, self.n = [], [], np.random.default_rng(seed), 0

    def name(self, base):
        self.n += 1
        return f"{base}_{self.n}"

    def node(self, op, inputs, domain="", **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], domain=domain, **attrs))
        return out

    def const(self, array, base="c"):
        name = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def linear(self, x, k, n):
        """MatMulNBits of a random [n, k] weight, 4-bit, asymmetric."""
        w = (self.rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32)
        codes, scales, zp = quantize(w, 4, BLOCK, "packed")
        ins = [x, self.const(codes, "q"), self.const(scales, "s"), self.const(zp, "z")]
        return self.node("MatMulNBits", ins, "com.microsoft", K=k, N=n, bits=4, block_size=BLOCK)

    def rms(self, x, d):
        return self.node("SimplifiedLayerNormalization", [x, self.const(np.ones(d, np.float32), "ln")],
                         epsilon=1e-5, axis=-1)


def build(cfg, seed=0):
    vocab, d, layers, heads, kv_heads, ffn = cfg
    hd = d // heads
    b = Builder(seed)
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
              helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["batch", "seq"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", vocab])]
    # The embedding as GatherBlockQuantized: 4-bit rows, symmetric blocks.
    emb = b.rng.standard_normal((vocab, d)).astype(np.float32)
    codes, scales, _ = quantize(emb, 4, BLOCK, "none")
    h = b.node("GatherBlockQuantized", [b.const(codes.reshape(vocab, -1), "emb"), "input_ids",
                                        b.const(scales.reshape(vocab, -1), "emb_s")],
               "com.microsoft", bits=4, block_size=BLOCK)
    inv = 1.0 / (10000 ** (np.arange(0, hd, 2) / hd))
    angles = np.outer(np.arange(4096), inv)
    cos, sin = b.const(np.cos(angles).astype(np.float32), "cos"), b.const(np.sin(angles).astype(np.float32), "sin")
    scale = b.const(np.float32(1 / np.sqrt(hd)), "scale")
    for i in range(layers):
        inputs += [helper.make_tensor_value_info(f"past_key_values.{i}.{kv}", TensorProto.FLOAT,
                                                 ["batch", kv_heads, "past", hd]) for kv in ("key", "value")]
        x = b.rms(h, d)
        q, k, v = b.linear(x, d, heads * hd), b.linear(x, d, kv_heads * hd), b.linear(x, d, kv_heads * hd)
        q = b.node("RotaryEmbedding", [q, "position_ids", cos, sin], "com.microsoft", num_heads=heads)
        k = b.node("RotaryEmbedding", [k, "position_ids", cos, sin], "com.microsoft", num_heads=kv_heads)
        split = lambda t, n: b.node("Transpose", [b.node("Reshape", [t, b.const(np.array([0, 0, n, hd]))])],  # noqa
                                    perm=[0, 2, 1, 3])
        q4, k4, v4 = split(q, heads), split(k, kv_heads), split(v, kv_heads)
        present = []
        for kind, new in (("key", k4), ("value", v4)):
            out = f"present.{i}.{kind}"
            b.nodes.append(helper.make_node("Concat", [f"past_key_values.{i}.{kind}", new], [out], axis=2))
            outputs.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, ["batch", kv_heads, "total", hd]))
            present.append(out)
        rep = heads // kv_heads

        def repeated(t):
            e = b.node("Expand", [b.node("Unsqueeze", [t, b.const(np.array([2]))]),
                                  b.const(np.array([1, 1, rep, 1, 1]))])
            return b.node("Reshape", [e, b.const(np.array([0, heads, -1, hd]))])

        kr, vr = repeated(present[0]), repeated(present[1])
        scores = b.node("Mul", [b.node("MatMul", [q4, b.node("Transpose", [kr], perm=[0, 1, 3, 2])]), scale])
        scores = b.node("Add", [scores, causal_mask(b, q4, kr)])
        attn = b.node("MatMul", [b.node("Softmax", [scores], axis=-1), vr])
        attn = b.node("Reshape", [b.node("Transpose", [attn], perm=[0, 2, 1, 3]), b.const(np.array([0, 0, d]))])
        h = b.node("Add", [h, b.linear(attn, heads * hd, d)])
        x = b.rms(h, d)
        g, u = b.linear(x, d, ffn), b.linear(x, d, ffn)
        act = b.node("Mul", [b.node("Mul", [g, b.node("Sigmoid", [g])]), u])
        h = b.node("Add", [h, b.linear(act, ffn, d)])
    logits = b.linear(b.rms(h, d), d, vocab)
    b.nodes.append(helper.make_node("Identity", [logits], ["logits"]))
    graph = helper.make_graph(b.nodes, "llama_int4", inputs, outputs, b.inits)
    return helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 21),
                                                                  helper.make_opsetid("com.microsoft", 1)])


def causal_mask(b, q4, k4):
    """[S, T] of 0 where key j <= past + i, else -inf (past = T - S)."""
    dim = lambda t, a: b.node("Shape", [t], start=a, end=a + 1)  # noqa: E731
    s, t = dim(q4, 2), dim(k4, 2)
    past = b.node("Sub", [t, s])
    zero, one = b.const(np.array(0)), b.const(np.array(1))
    rows = b.node("Add", [b.node("Range", [zero, b.node("Squeeze", [s]), one]), past])
    cols = b.node("Range", [zero, b.node("Squeeze", [t]), one])
    later = b.node("Greater", [b.node("Unsqueeze", [cols, b.const(np.array([0]))]),
                               b.node("Unsqueeze", [rows, b.const(np.array([1]))])])
    return b.node("Where", [later, b.const(np.float32(-np.inf)), b.const(np.float32(0))])


def decode(session, cfg, prompt, steps):
    """Greedy tokens after `prompt`, and seconds of the prefill and per step."""
    vocab, d, layers, heads, kv_heads, ffn = cfg
    hd = d // heads
    past = {f"past_key_values.{i}.{kv}": np.zeros((1, kv_heads, 0, hd), np.float32)
            for i in range(layers) for kv in ("key", "value")}
    ids, tokens, times = np.array([prompt]), [], []
    at = 0
    for _ in range(steps):
        feed = {"input_ids": ids, "position_ids": np.arange(at, at + ids.shape[1])[None], **past}
        t = time.perf_counter()
        out = session.run(None, feed)
        times.append(time.perf_counter() - t)
        at += ids.shape[1]
        token = int(np.argmax(out[0][0, -1]))
        tokens.append(token)
        for i in range(layers):
            past[f"past_key_values.{i}.key"], past[f"past_key_values.{i}.value"] = out[1 + 2 * i], out[2 + 2 * i]
        ids = np.array([[token]])
    return tokens, times[0], float(np.median(times[1:])) if len(times) > 1 else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="small", choices=sorted(CONFIGS))
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--decode", type=int, default=0, help="greedy tokens to compare with onnxruntime")
    ap.add_argument("--prompt", type=int, default=16)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    cfg = CONFIGS[a.config]
    if not os.path.exists(a.output):
        os.makedirs(os.path.dirname(os.path.abspath(a.output)), exist_ok=True)
        onnx.save(build(cfg), a.output, save_as_external_data=True, location=os.path.basename(a.output) + ".data")
    print(f"{a.output}: {os.path.getsize(a.output + '.data') / 1e6:.0f} MB of weights")
    if not a.decode:
        return
    import onnxruntime as ort

    import onnxc

    prompt = list(np.random.default_rng(1).integers(0, cfg[0], a.prompt))
    o = ort.SessionOptions()
    o.intra_op_num_threads = a.threads
    engines = {"onnxruntime": ort.InferenceSession(a.output, o, providers=["CPUExecutionProvider"])}
    c = onnxc.SessionOptions()
    c.intra_op_num_threads = a.threads
    engines["onnxc"] = onnxc.InferenceSession(a.output, c)
    # A first short run warms each engine (mapped weights paged in).
    results = {name: (decode(s, cfg, prompt, 2), decode(s, cfg, prompt, a.decode))[1] for name, s in engines.items()}
    for name, (tokens, prefill, step) in results.items():
        print(f"{name}: prefill {a.prompt} tokens {prefill * 1e3:.1f} ms, decode {1 / step:.1f} tokens/s")
    same = results["onnxc"][0] == results["onnxruntime"][0]
    print("same tokens" if same else f"tokens differ: {results['onnxc'][0]} vs {results['onnxruntime'][0]}")


if __name__ == "__main__":
    main()
