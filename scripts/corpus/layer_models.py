#!/usr/bin/env python3
"""Every distinct convolution of a model as a model of its own, to see
which layers cost what against onnxruntime (for timing, not in CI):

    python3 scripts/corpus/layer_models.py MODEL.onnx [-o DIR] [--prefix P]
    python3 scripts/corpus/run.py --corpus DIR --compile-arg=--target-cpu \\
        --compile-arg=native
    python3 scripts/corpus/layer_models.py --sum DIR/../run/results.json DIR

A layer is a Conv with what onnxc fuses into it: a following activation
(Relu, Clip, ...), or an Add of another value (a residual connection)
then a Relu. A model with BatchNormalization after its convolutions is
best folded first (`onnxc fold M.onnx -o F.onnx`), as onnxc compiles it. Its input
shapes come from ONNX shape inference at the model's batch 1; its
weights are the model's own (so the compiler picks the same path: a
Winograd choice depends on constant weights). Layers equal in every
attribute and shape are written once; NAME.json's `count` says how many
times the network runs it, and `--sum` adds each side's time weighted by
it (the layers' share of the whole network, and where it is lost).
"""

import argparse
import json
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus_common import random_feeds, write_entry  # noqa: E402


ACTIVATIONS = ("Relu", "Clip", "LeakyRelu", "HardSigmoid", "HardSwish", "Sigmoid")


def consumers(graph):
    out = {}
    for n in graph.node:
        for i in n.input:
            out.setdefault(i, []).append(n)
    return out


def shapes_of(model, dims):
    """name -> static shape: the first input's dims `dims` when given,
    every other dim_param at 1."""
    for k, inp in enumerate(model.graph.input):
        shape = inp.type.tensor_type.shape.dim
        if k == 0 and dims:
            if len(dims) != len(shape):
                raise SystemExit(f"--dims has {len(dims)} dims, input '{inp.name}' {len(shape)}")
            for d, v in zip(shape, dims):
                d.Clear()
                d.dim_value = v
        for d in shape:
            if not d.HasField("dim_value"):
                d.dim_value = 1
    inferred = shape_inference.infer_shapes(model)
    out = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        dims = [d.dim_value if d.HasField("dim_value") else None for d in vi.type.tensor_type.shape.dim]
        if dims and None not in dims:
            out[vi.name] = dims
    return out


def fused_tail(conv, uses):
    """The nodes after `conv` onnxc fuses into it: [Relu] or [Add, Relu]."""
    nxt = uses.get(conv.output[0], [])
    if len(nxt) != 1:
        return []
    n = nxt[0]
    if n.op_type in ACTIVATIONS:
        return [n]
    if n.op_type == "Add":
        after = uses.get(n.output[0], [])
        return [n] + ([after[0]] if len(after) == 1 and after[0].op_type == "Relu" else [])
    return []


def layer(conv, tail, inits, shapes, opset):
    """(key, model) of one convolution and its tail, or None."""
    x, w = conv.input[0], conv.input[1]
    if w not in inits or x not in shapes or conv.output[0] not in shapes:
        return None
    ins = [("x", shapes[x])]
    nodes = [helper.make_node("Conv", ["x", "w"] + (["b"] if len(conv.input) > 2 and conv.input[2] else []),
                              ["c"], **{a.name: helper.get_attribute_value(a) for a in conv.attribute})]
    weights = [numpy_helper.from_array(numpy_helper.to_array(inits[w]), "w")]
    if len(conv.input) > 2 and conv.input[2] in inits:
        weights.append(numpy_helper.from_array(numpy_helper.to_array(inits[conv.input[2]]), "b"))
    last, tail_ops = "c", []
    for n in tail:
        if n.op_type == "Add":
            ins.append(("r", shapes[conv.output[0]]))
            nodes.append(helper.make_node("Add", [last, "r"], ["s"]))
            last = "s"
        else:
            # Clip's bounds are inputs: copied as initializers.
            extra = []
            for k, name in enumerate(n.input[1:]):
                if name and name in inits:
                    weights.append(numpy_helper.from_array(numpy_helper.to_array(inits[name]), f"bound{k}"))
                    extra.append(f"bound{k}")
                else:
                    extra.append("")
            nodes.append(helper.make_node(n.op_type, [last] + extra, ["a"],
                                          **{a.name: helper.get_attribute_value(a) for a in n.attribute}))
            last = "a"
        tail_ops.append(n.op_type)
    nodes[-1].output[0] = "y"
    out_shape = shapes[conv.output[0]]
    attrs = sorted((a.name, str(helper.get_attribute_value(a))) for a in conv.attribute)
    key = json.dumps([attrs, shapes[x], list(inits[w].dims), len(weights), tail_ops,
                      [str(numpy_helper.to_array(t).tolist()) for t in weights if t.name.startswith("bound")]])
    graph = helper.make_graph(
        nodes, "layer",
        [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, ["N"] + d[1:]) for n, d in ins],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["N"] + out_shape[1:])], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="onnxc-layers")
    model.ir_version = 8
    k = list(inits[w].dims)
    group = int(dict(attrs).get("group", "1"))
    note = (f"Conv {k[2:]} {k[1] * group}->{k[0]}{f' g{group}' if group > 1 else ''} at {shapes[x][2:]}"
            f" {dict(attrs).get('strides', '')} {'+'.join(tail_ops)}")
    return key, model, {n: (d, np.float32, "normal") for n, d in ins}, note


def extract(path, out, prefix, dims):
    model = onnx.load(path)
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=13)
    opset = max(opset, 11)
    shapes = shapes_of(model, dims)
    inits = {i.name: i for i in model.graph.initializer}
    for n in model.graph.node:  # Constant-node weights
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
            inits[n.output[0]] = n.attribute[0].t
    uses = consumers(model.graph)
    seen = {}
    for conv in model.graph.node:
        if conv.op_type != "Conv":
            continue
        got = layer(conv, fused_tail(conv, uses), inits, shapes, opset)
        if got is None:
            print(f"skipped {conv.name or conv.output[0]}: no static shape or constant weights")
            continue
        key, m, spec, note = got
        if key in seen:
            seen[key][1] += 1
            continue
        seen[key] = [(m, spec, note), 1]
    os.makedirs(out, exist_ok=True)
    for i, ((m, spec, note), count) in enumerate(seen.values()):
        name = f"{prefix}_{i:02d}"
        p = os.path.join(out, name + ".onnx")
        onnx.save(m, p)
        write_entry(out, name, p, [random_feeds(spec, seed=300 + i)], source=os.path.basename(path),
                    exporter="layer_models.py", exporter_version=onnx.__version__, notes=note,
                    extra={"count": count})
        print(f"{name} x{count}  {note}")


def summarize(results, corpus):
    """Each side's time weighted by the layer's count, worst loss first."""
    rows, tot = [], [0.0, 0.0]
    for r in json.load(open(results))["results"]:
        meta = json.load(open(os.path.join(corpus, r["model"] + ".json")))
        size = (r.get("sizes") or [{}])[0]
        ox, ort = size.get("onnxc_ms"), size.get("ort_ms")
        if ox is None or ort is None:
            continue
        c = meta.get("count", 1)
        tot[0] += c * ox
        tot[1] += c * ort
        rows.append((c * (ox - ort), r["model"], c, ox, ort, meta.get("notes", "")))
    for loss, name, c, ox, ort, note in sorted(rows, reverse=True):
        print(f"{name:14} x{c:<3} onnxc {ox:8.3f}  ort {ort:8.3f}  lost {loss:7.3f} ms  {note}")
    print(f"weighted total: onnxc {tot[0]:.2f} ms, onnxruntime {tot[1]:.2f} ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", nargs="?")
    ap.add_argument("-o", "--out", default="target/corpus-layers")
    ap.add_argument("--prefix", help="model name prefix (default: the file's stem)")
    ap.add_argument("--dims", help="the first input's dims, e.g. 1x3x224x224 (default: its own, dynamic ones 1)")
    ap.add_argument("--sum", metavar="RESULTS_JSON", help="summarize a run.py results file over the corpus MODEL")
    args = ap.parse_args()
    if args.sum:
        summarize(args.sum, args.model or args.out)
        return 0
    if not args.model:
        ap.error("a model is required")
    prefix = args.prefix or os.path.splitext(os.path.basename(args.model))[0].replace("-", "_")
    dims = [int(d) for d in args.dims.split("x")] if args.dims else None
    extract(args.model, args.out, prefix, dims)
    return 0


if __name__ == "__main__":
    sys.exit(main())
