#!/usr/bin/env python3
"""The built-in zoo (`onnxc zoo gen`, random weights) as a corpus for
scripts/corpus/run.py: each model with its declared dims, one size per
entry (batch 1; the transformers at 1 × 64 tokens, as many as the tiny
ones have positions). For the benchmark
tables (portable against native library, threads, load), not for CI.

    python3 scripts/corpus/zoo_models.py -o target/corpus-zoo \\
        [--onnxc target/release/onnxc] [--only resnet50v1,squeezenet]
"""

import argparse
import os
import subprocess
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus_common import random_feeds, write_entry  # noqa: E402

MODELS = ["squeezenet", "mobilenetv2", "densenet121", "resnet50v1", "bert-tiny", "gpt2-tiny", "bert-base"]
TOKENS = 64
DTYPES = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32}


def spec_of(model):
    """Every graph input at batch 1 (sequence dims at TOKENS)."""
    inits = {i.name for i in model.graph.initializer}
    spec = {}
    for i in model.graph.input:
        if i.name in inits:
            continue
        t = i.type.tensor_type
        dims = []
        for k, d in enumerate(t.shape.dim):
            dims.append(d.dim_value if d.dim_value > 0 else (1 if k == 0 else TOKENS))
        dtype = DTYPES[t.elem_type]
        kind = "normal" if dtype == np.float32 else ("int", 0, 2 if "mask" in i.name or "type" in i.name else 100)
        spec[i.name] = (dims, dtype, kind)
    return spec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--out", default="target/corpus-zoo")
    ap.add_argument("--onnxc", default=os.environ.get("ONNXC", "target/release/onnxc"))
    ap.add_argument("--only", help="comma-separated model names")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    names = args.only.split(",") if args.only else MODELS
    for name in names:
        entry = "zoo_" + name.replace("-", "_")
        path = os.path.join(args.out, entry + ".onnx")
        subprocess.run([args.onnxc, "zoo", "gen", name, "-o", path], check=True)
        model = onnx.load(path)
        spec = spec_of(model)
        write_entry(args.out, entry, path, [random_feeds(spec, seed=300)], source="onnxc zoo gen " + name,
                    exporter="onnxc zoo", exporter_version="", notes=name)
        print(f"{entry:20} {spec}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
