#!/usr/bin/env python3
"""Random-weight int4 decoders of two architectures, written with
onnx.helper in the form onnxruntime's model builder gives them, and a
greedy decode loop that compares onnxc with onnxruntime token by token.

    target/pyenv/bin/python scripts/llm_model.py --config 1b -o target/llm/1b.onnx --decode 32

- `llama` (configs tiny, small, 1b): GatherBlockQuantized embedding,
  SimplifiedLayerNormalization then SkipSimplifiedLayerNormalization,
  separate q/k/v MatMulNBits, GroupQueryAttention with grouped KV heads and
  rotary inside, SiLU-gated MLP.
- `phi` (configs tiny-phi, 1b-phi; Phi-2-like): LayerNormalization,
  attention and MLP in parallel off one norm, packed QKV MatMulNBits with
  bias, GroupQueryAttention on packed QKV with partial rotary, FastGelu.

Both take input_ids, attention_mask and past_key_values.N.key/value, and
derive seqlens_k and total_sequence_length from the mask, as the model
builder does.
"""

import argparse
import os
import sys
import time
from collections import namedtuple

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
from test_llm_ops import quantize  # noqa: E402

Config = namedtuple("Config", "arch vocab hidden layers heads kv_heads ffn rotary_dim")
CONFIGS = {
    "tiny": Config("llama", 512, 64, 2, 4, 2, 128, 16),
    "small": Config("llama", 32000, 768, 12, 12, 4, 2048, 64),
    "1b": Config("llama", 32000, 2048, 16, 32, 8, 5632, 64),
    "tiny-phi": Config("phi", 512, 128, 2, 4, 4, 256, 16),
    "1b-phi": Config("phi", 51200, 2048, 18, 32, 32, 8192, 32),
}
BLOCK = 32
MAX_LEN = 4096


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

    def linear(self, x, k, n, bias=False):
        """MatMulNBits of a random [n, k] weight, 4-bit, asymmetric."""
        w = (self.rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32)
        codes, scales, zp = quantize(w, 4, BLOCK, "packed")
        ins = [x, self.const(codes, "q"), self.const(scales, "s"), self.const(zp, "z")]
        if bias:
            ins += ["", self.const((0.1 * self.rng.standard_normal(n)).astype(np.float32), "bias")]
        return self.node("MatMulNBits", ins, "com.microsoft", K=k, N=n, bits=4, block_size=BLOCK)

    def weight(self, d, base):
        return self.const((1 + 0.1 * self.rng.standard_normal(d)).astype(np.float32), base)

    def rms(self, x, d):
        return self.node("SimplifiedLayerNormalization", [x, self.weight(d, "ln")], epsilon=1e-5, axis=-1)

    def skip_rms(self, x, residual, d):
        """(normalized x + residual, x + residual)."""
        outs = [self.name("skip_norm"), "", "", self.name("skip_sum")]
        self.nodes.append(helper.make_node("SkipSimplifiedLayerNormalization", [x, residual, self.weight(d, "ln")],
                                           outs, domain="com.microsoft", epsilon=1e-5))
        return outs[0], outs[3]

    def layer_norm(self, x, d):
        return self.node("LayerNormalization", [x, self.weight(d, "ln"), self.weight(d, "lnb")], epsilon=1e-5,
                         axis=-1)


def build(cfg, seed=0):
    b = Builder(seed)
    hd = cfg.hidden // cfg.heads
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "total"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", cfg.vocab])]
    # seqlens_k and total_sequence_length from the mask, as the builder does.
    lengths = b.node("ReduceSum", ["attention_mask", b.const(np.array([1]))], keepdims=0)
    seqlens = b.node("Cast", [b.node("Sub", [lengths, b.const(np.array(1))])], to=TensorProto.INT32)
    total = b.node("Cast", [b.node("Gather", [b.node("Shape", ["attention_mask"]), b.const(np.array(1))])],
                   to=TensorProto.INT32)
    inv = 1.0 / (10000 ** (np.arange(0, cfg.rotary_dim, 2) / cfg.rotary_dim))
    angles = np.outer(np.arange(MAX_LEN), inv)
    rot = (b.const(np.cos(angles).astype(np.float32), "cos"), b.const(np.sin(angles).astype(np.float32), "sin"))
    h = embedding(b, cfg)
    block = llama_block if cfg.arch == "llama" else phi_block
    residual = None
    for i in range(cfg.layers):
        for kv in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kv}", TensorProto.FLOAT,
                                                        ["batch", cfg.kv_heads, "past", hd]))
            outputs.append(helper.make_tensor_value_info(f"present.{i}.{kv}", TensorProto.FLOAT,
                                                         ["batch", cfg.kv_heads, "total", hd]))
        h, residual = block(b, cfg, i, h, residual, (seqlens, total) + rot)
    if cfg.arch == "llama":
        x, _ = b.skip_rms(h, residual, cfg.hidden)
        logits = b.linear(x, cfg.hidden, cfg.vocab)
    else:
        logits = b.linear(b.layer_norm(h, cfg.hidden), cfg.hidden, cfg.vocab, bias=True)
    b.nodes.append(helper.make_node("Identity", [logits], ["logits"]))
    graph = helper.make_graph(b.nodes, f"{cfg.arch}_int4", inputs, outputs, b.inits)
    return helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 21),
                                                                  helper.make_opsetid("com.microsoft", 1)])


def embedding(b, cfg):
    """GatherBlockQuantized of 4-bit rows in symmetric blocks."""
    emb = b.rng.standard_normal((cfg.vocab, cfg.hidden)).astype(np.float32)
    codes, scales, _ = quantize(emb, 4, BLOCK, "none")
    return b.node("GatherBlockQuantized", [b.const(codes.reshape(cfg.vocab, -1), "emb"), "input_ids",
                                           b.const(scales.reshape(cfg.vocab, -1), "emb_s")],
                  "com.microsoft", bits=4, block_size=BLOCK)


def attention(b, cfg, i, qkv, cache_inputs):
    """GroupQueryAttention over q, k, v (or one packed input), rotary inside;
    returns its output."""
    seqlens, total, cos, sin = cache_inputs
    past = [f"past_key_values.{i}.{kv}" for kv in ("key", "value")]
    present = [f"present.{i}.{kv}" for kv in ("key", "value")]
    y = b.name("gqa")
    b.nodes.append(helper.make_node("GroupQueryAttention", qkv + past + [seqlens, total, cos, sin], [y] + present,
                                    domain="com.microsoft", num_heads=cfg.heads, kv_num_heads=cfg.kv_heads,
                                    do_rotary=1, local_window_size=-1))
    return y


def llama_block(b, cfg, i, h, residual, cache_inputs):
    """Pre-norm attention then SiLU-gated MLP; the residual sum is carried
    by SkipSimplifiedLayerNormalization. Returns (output, residual)."""
    d, hd = cfg.hidden, cfg.hidden // cfg.heads
    x, residual = (b.rms(h, d), h) if residual is None else b.skip_rms(h, residual, d)
    qkv = [b.linear(x, d, cfg.heads * hd), b.linear(x, d, cfg.kv_heads * hd), b.linear(x, d, cfg.kv_heads * hd)]
    attn = b.linear(attention(b, cfg, i, qkv, cache_inputs), cfg.heads * hd, d)
    x, residual = b.skip_rms(attn, residual, d)
    g, u = b.linear(x, d, cfg.ffn), b.linear(x, d, cfg.ffn)
    act = b.node("Mul", [b.node("Mul", [g, b.node("Sigmoid", [g])]), u])
    return b.linear(act, cfg.ffn, d), residual


def phi_block(b, cfg, i, h, residual, cache_inputs):
    """Attention and MLP in parallel off one LayerNormalization:
    h + attn(x) + mlp(x). Returns (output, None)."""
    d = cfg.hidden
    x = b.layer_norm(h, d)
    qkv = b.linear(x, d, 3 * d, bias=True)
    attn = b.linear(attention(b, cfg, i, [qkv, "", ""], cache_inputs), d, d, bias=True)
    mlp = b.node("FastGelu", [b.linear(x, d, cfg.ffn, bias=True)], "com.microsoft")
    mlp = b.linear(mlp, cfg.ffn, d, bias=True)
    return b.node("Add", [h, b.node("Add", [attn, mlp])]), None


def decode(session, cfg, prompt, steps):
    """Greedy tokens after `prompt`, and seconds of the prefill and per step."""
    hd = cfg.hidden // cfg.heads
    past = {f"past_key_values.{i}.{kv}": np.zeros((1, cfg.kv_heads, 0, hd), np.float32)
            for i in range(cfg.layers) for kv in ("key", "value")}
    ids, tokens, times = np.array([prompt]), [], []
    total = 0
    for _ in range(steps):
        total += ids.shape[1]
        feed = {"input_ids": ids, "attention_mask": np.ones((1, total), np.int64), **past}
        t = time.perf_counter()
        out = session.run(None, feed)
        times.append(time.perf_counter() - t)
        token = int(np.argmax(out[0][0, -1]))
        tokens.append(token)
        for i in range(cfg.layers):
            past[f"past_key_values.{i}.key"], past[f"past_key_values.{i}.value"] = out[1 + 2 * i], out[2 + 2 * i]
        ids = np.array([[token]])
    return tokens, times[0], float(np.median(times[1:])) if len(times) > 1 else 0.0


def open_session(engine, path, threads):
    if engine == "onnxruntime":
        import onnxruntime as ort

        o = ort.SessionOptions()
        o.intra_op_num_threads = threads
        return ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])
    import onnxc

    c = onnxc.SessionOptions()
    c.intra_op_num_threads = threads
    return onnxc.InferenceSession(path, c)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="small", choices=sorted(CONFIGS))
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--decode", type=int, default=0, help="greedy tokens to compare with onnxruntime")
    ap.add_argument("--prompt", type=int, default=16)
    ap.add_argument("--threads", type=int, default=1, help="0: each engine's default")
    ap.add_argument("--engines", default="onnxruntime,onnxc",
                    help="comma-separated; one engine alone gives its own peak RSS")
    ap.add_argument("--rounds", type=int, default=3, help="prompt-and-decode runs per engine, alternating")
    a = ap.parse_args()
    cfg = CONFIGS[a.config]
    if not os.path.exists(a.output):
        os.makedirs(os.path.dirname(os.path.abspath(a.output)), exist_ok=True)
        onnx.save(build(cfg), a.output, save_as_external_data=True, location=os.path.basename(a.output) + ".data")
    model_bytes = os.path.getsize(a.output) + os.path.getsize(a.output + ".data")
    print(f"{a.output}: {model_bytes / 1e6:.0f} MB")
    if not a.decode:
        return
    import resource

    prompt = list(np.random.default_rng(1).integers(0, cfg.vocab, a.prompt))
    engines = {name: open_session(name, a.output, a.threads) for name in a.engines.split(",")}
    for s in engines.values():
        decode(s, cfg, prompt, 2)  # pages the mapped weights in
    runs = {name: [] for name in engines}
    for _ in range(a.rounds):
        for name, s in engines.items():
            runs[name].append(decode(s, cfg, prompt, a.decode))
    for name, rs in runs.items():
        prefill = [r[1] * 1e3 for r in rs]
        steps = [1 / r[2] for r in rs]
        print(f"{name}: prefill {a.prompt} tokens {np.median(prefill):.1f} ms ({min(prefill):.1f}-{max(prefill):.1f}), "
              f"decode {np.median(steps):.1f} tokens/s ({min(steps):.1f}-{max(steps):.1f})")
    tokens = {name: rs[0][0] for name, rs in runs.items()}
    if len(tokens) == 2:
        same = tokens["onnxc"] == tokens["onnxruntime"]
        print("same tokens" if same else f"tokens differ: {tokens['onnxc']} vs {tokens['onnxruntime']}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"peak RSS {peak / 1e6:.0f} MB = {peak / model_bytes:.2f} × the model file")


if __name__ == "__main__":
    main()
