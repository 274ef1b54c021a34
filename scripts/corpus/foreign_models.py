#!/usr/bin/env python3
"""Models with parts onnxc does not know, folded by `onnxc fold` and run in
onnxruntime against the originals:

  contrib   onnxruntime's com.microsoft BiasGelu and FusedMatMul (no
            value_info), a Relu after them, a sequence made and read
            (SequenceConstruct/SequenceAt), foldable arithmetic around them
  strings   a string input, a string initializer and a string Constant
            concatenated, lower-cased (StringNormalizer), mapped to ids
            (ai.onnx.ml LabelEncoder), plus a folded constant
  loop_body a Loop whose body holds a com.microsoft op that reads an outer
            value computed by folded arithmetic
  captures  a SequenceMap whose body reads an outer value that folding
            merges with an equal one (the capture is renamed)

    python3 scripts/corpus/foreign_models.py --onnxc target/debug/onnxc \\
        --work target/foreign
    python3 scripts/corpus/foreign_models.py --write-only --work DIR

Checks, per model: the fold succeeds, every foreign node is kept (same
op type and domain), the foldable nodes are gone, the folded file is no
larger, no value_info claims a type for a value the model did not
declare one for, and onnxruntime gives the same outputs at batch sizes
0, 1 and 3. Exits 1 if any model fails.
"""

import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def model(nodes, inputs, outputs, inits, ml=False, value_info=()):
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)]
    if ml:
        opsets.append(helper.make_opsetid("ai.onnx.ml", 2))
    g = helper.make_graph(nodes, "g", inputs, outputs, inits, value_info=list(value_info))
    return helper.make_model(g, opset_imports=opsets, ir_version=8)


def contrib():
    rng = np.random.default_rng(1)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    nodes = [
        helper.make_node("Mul", ["c1", "c2"], ["bias"], name="fold_bias"),
        helper.make_node("BiasGelu", ["x", "bias"], ["h"], name="bias_gelu", domain=MS),
        helper.make_node("FusedMatMul", ["h", "w"], ["y"], name="fused", domain=MS, alpha=0.5),
        helper.make_node("Relu", ["y"], ["z"], name="relu"),
        helper.make_node("Neg", ["x"], ["nx"], name="neg"),
        helper.make_node("SequenceConstruct", ["x", "nx"], ["seq"], name="seq"),
        helper.make_node("Add", ["one", "zero"], ["idx"], name="fold_idx"),
        helper.make_node("SequenceAt", ["seq", "idx"], ["picked"], name="pick"),
        helper.make_node("Mul", ["picked", "two"], ["out2"], name="scale"),
    ]
    inits = [
        init("c1", f32(8)),
        init("c2", f32(8)),
        init("w", f32(8, 4)),
        init("one", np.array(1, np.int64)),
        init("zero", np.array(0, np.int64)),
        init("two", np.array(2, np.float32)),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])
    outs = [
        helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 4]),
        helper.make_tensor_value_info("out2", TensorProto.FLOAT, ["N", 8]),
    ]
    feed = lambda n: {"x": f32(n, 8)}  # noqa: E731
    return model(nodes, [x], outs, inits), feed, {"fold_bias", "fold_idx"}


def strings():
    keys = ["foo", "bar", "baz", "qux"]
    nodes = [
        helper.make_node(
            "Constant",
            [],
            ["tail"],
            name="tail",
            value=helper.make_tensor("tail", TensorProto.STRING, [1], [b"QUX"]),
        ),
        helper.make_node("Concat", ["text", "extra", "tail"], ["all"], name="concat", axis=0),
        helper.make_node(
            "StringNormalizer", ["all"], ["low"], name="lower", case_change_action="LOWER",
            locale="C"
        ),
        helper.make_node(
            "LabelEncoder",
            ["low"],
            ["ids"],
            name="encode",
            domain="ai.onnx.ml",
            keys_strings=keys,
            values_int64s=[10, 20, 30, 40],
            default_int64=-1,
        ),
        helper.make_node("Add", ["two", "three"], ["five"], name="fold_five"),
        helper.make_node("Add", ["ids", "five"], ["out"], name="shift"),
    ]
    extra = helper.make_tensor("extra", TensorProto.STRING, [2], [b"Foo", b"BAZ"])
    inits = [extra, init("two", np.array(2, np.int64)), init("three", np.array(3, np.int64))]
    text = helper.make_tensor_value_info("text", TensorProto.STRING, ["N"])
    out = helper.make_tensor_value_info("out", TensorProto.INT64, ["M"])
    words = np.array(["Bar", "nope", "FOO", "qux", "zzz"], dtype=object)
    feed = lambda n: {"text": words[np.arange(n) % len(words)]}  # noqa: E731
    return model(nodes, [text], [out], inits, ml=True), feed, {"fold_five"}


def loop_body():
    rng = np.random.default_rng(2)
    body = helper.make_graph(
        [
            helper.make_node("BiasGelu", ["acc_in", "scale"], ["acc_out"], name="inner", domain=MS),
            helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, ["N", 4]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, ["N", 4]),
        ],
    )
    nodes = [
        helper.make_node("Add", ["a", "b"], ["scale"], name="fold_scale"),
        helper.make_node("Loop", ["trips", "yes", "x"], ["y"], name="loop", body=body),
    ]
    inits = [
        init("a", rng.standard_normal(4).astype(np.float32)),
        init("b", rng.standard_normal(4).astype(np.float32)),
        init("trips", np.array(3, np.int64)),
        init("yes", np.array(True)),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])
    feed = lambda n: {"x": rng.standard_normal((n, 4)).astype(np.float32)}  # noqa: E731
    return model(nodes, [x], [y], inits), feed, {"fold_scale"}


def captures():
    # `shift2` repeats `shift`: once merged, the body's capture is renamed.
    rng = np.random.default_rng(3)
    body = helper.make_graph(
        [helper.make_node("Add", ["e", "shift2"], ["o"], name="shifted")],
        "body",
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("o", TensorProto.FLOAT, ["N", 4])],
    )
    nodes = [
        helper.make_node("Add", ["a", "b"], ["shift"], name="fold_shift"),
        helper.make_node("Add", ["a", "b"], ["shift2"], name="fold_shift2"),
        helper.make_node("Mul", ["x", "shift"], ["y2"], name="scaled"),
        helper.make_node("Neg", ["x"], ["nx"], name="neg"),
        helper.make_node("SequenceConstruct", ["x", "nx"], ["seq"], name="seq"),
        helper.make_node("SequenceMap", ["seq"], ["mapped"], name="map", body=body),
        helper.make_node("ConcatFromSequence", ["mapped"], ["y"], name="join", axis=0),
    ]
    inits = [
        init("a", rng.standard_normal(4).astype(np.float32)),
        init("b", rng.standard_normal(4).astype(np.float32)),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    outs = [
        helper.make_tensor_value_info("y", TensorProto.FLOAT, ["M", 4]),
        helper.make_tensor_value_info("y2", TensorProto.FLOAT, ["N", 4]),
    ]
    feed = lambda n: {"x": rng.standard_normal((n, 4)).astype(np.float32)}  # noqa: E731
    return model(nodes, [x], outs, inits), feed, {"fold_shift", "fold_shift2"}


# Nodes a fold must keep: foreign ones and those reading foreign values.
KEPT = {"BiasGelu", "FusedMatMul", "SequenceConstruct", "SequenceAt", "SequenceMap",
        "ConcatFromSequence", "Concat", "StringNormalizer", "LabelEncoder", "Loop", "Relu",
        "Constant"}


def kept_nodes(g):
    """(domain, op_type) of the nodes a fold must keep, subgraphs included."""
    out = []
    for n in g.node:
        if n.op_type in KEPT:
            out.append((n.domain, n.op_type))
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                out += kept_nodes(a.g)
    return sorted(out)


def declared_names(g):
    return {v.name for v in list(g.value_info) + list(g.input) + list(g.output)}


def check(name, build, onnxc, work):
    m, feed, folded_away = build()
    src = os.path.join(work, f"{name}.onnx")
    dst = os.path.join(work, f"{name}.folded.onnx")
    onnx.save(m, src)
    onnx.checker.check_model(m, full_check=False)
    run = subprocess.run([onnxc, "fold", src, "-o", dst], capture_output=True, text=True)
    if run.returncode != 0:
        raise AssertionError(f"{name}: onnxc fold failed:\n{run.stderr}")
    f = onnx.load(dst)
    onnx.checker.check_model(f, full_check=False)
    if kept_nodes(f.graph) != kept_nodes(m.graph):
        raise AssertionError(f"{name}: nodes {kept_nodes(m.graph)} became {kept_nodes(f.graph)}")
    left = {n.name for n in f.graph.node} & folded_away
    if left:
        raise AssertionError(f"{name}: not folded: {sorted(left)}")
    if os.path.getsize(dst) > os.path.getsize(src):
        raise AssertionError(
            f"{name}: folded file grew {os.path.getsize(src)} -> {os.path.getsize(dst)} bytes"
        )
    # A value the original declares no type for may get one only from
    # inference; those downstream of foreign nodes cannot have one.
    undeclared = {"h", "y", "z", "seq", "picked", "all", "low", "ids", "mapped"} - declared_names(m.graph)
    claimed = undeclared & {v.name for v in f.graph.value_info}
    if claimed:
        raise AssertionError(f"{name}: value_info for unknowable values {sorted(claimed)}")
    so = ort.SessionOptions()
    so.log_severity_level = 3
    a = ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
    b = ort.InferenceSession(dst, so, providers=["CPUExecutionProvider"])
    for n in (0, 1, 3):
        inputs = feed(n)
        for x, y in zip(a.run(None, inputs), b.run(None, inputs)):
            if x.shape != y.shape or not np.allclose(x, y, rtol=1e-5, atol=1e-6):
                raise AssertionError(f"{name}: outputs differ at N={n}: {x} vs {y}")
    print(f"{name}: ok ({len(m.graph.node)} -> {len(f.graph.node)} nodes)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--onnxc")
    ap.add_argument("--work", required=True)
    ap.add_argument("--write-only", action="store_true", help="write the models, check nothing")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    failed = 0
    models = [
        ("contrib", contrib),
        ("strings", strings),
        ("loop_body", loop_body),
        ("captures", captures),
    ]
    for name, build in models:
        if args.write_only:
            onnx.save(build()[0], os.path.join(args.work, f"{name}.onnx"))
            continue
        try:
            check(name, build, args.onnxc, args.work)
        except AssertionError as e:
            print(f"FAIL {e}")
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
