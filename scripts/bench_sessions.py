#!/usr/bin/env python3
"""onnxc.InferenceSession against onnxruntime.InferenceSession at one
thread (`intra_op_num_threads=1` on both, onnxruntime's default graph
optimizations), on the exporter corpus (target/corpus: NAME.onnx with
NAME.size{k}.npz inputs), alternating calls, median of rounds per size;
prints a Markdown table and the geomean of the time ratios.

    target/pyenv/bin/python scripts/bench_sessions.py [--corpus DIR] [--filter RE]
        [--rounds 5] [--calls 5] [--target native|x86-64-v2] [--cache DIR]

Each model is compiled once with its dynamic dims (the session cache), as
a user's first `InferenceSession` does; what is timed is `run`."""

import argparse
import glob
import json
import math
import os
import re
import statistics
import time

import numpy as np
import onnxruntime as ort

import onnxc


def feeds(model):
    """(size label, {input: array}) of each saved size."""
    for npz in sorted(glob.glob(model[:-5] + ".size*.npz")):
        z = np.load(npz, allow_pickle=True)
        names = [i.name for i in ort_session(model).get_inputs()]
        yield npz.rsplit(".", 2)[-2], {n: z[f"in{k}"] for k, n in enumerate(names)}


_ort = {}


def ort_session(model):
    if model not in _ort:
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.log_severity_level = 3
        _ort[model] = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    return _ort[model]


def timed(sess, feed, calls):
    t = time.perf_counter()
    for _ in range(calls):
        sess.run(None, feed)
    return (time.perf_counter() - t) / calls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="target/corpus")
    ap.add_argument("--filter")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--target", default=None, help="target_cpu of the sessions (default: native)")
    ap.add_argument("--cache", default="target/bench-sessions-cache")
    ap.add_argument("--json")
    a = ap.parse_args()
    so = onnxc.SessionOptions()
    so.intra_op_num_threads = 1
    rows, ratios = [], []
    print("| model | size | onnxruntime ms | onnxc ms | onnxc / ort |\n|---|---|---|---|---|")
    for model in sorted(glob.glob(os.path.join(a.corpus, "*.onnx"))):
        name = os.path.basename(model)[:-5]
        if a.filter and not re.search(a.filter, name):
            continue
        try:
            ours = onnxc.InferenceSession(model, so, cache_dir=a.cache, target_cpu=a.target)
        except Exception as e:  # a model that does not compile is a row, not the end
            print(f"| {name} | - | - | - | {type(e).__name__}: {str(e).splitlines()[0][:80]} |")
            continue
        theirs = ort_session(model)
        for size, feed in feeds(model):
            for s in (ours, theirs):  # warm up: first-call allocations, caches
                s.run(None, feed)
            t_ort, t_ours = [], []
            for _ in range(a.rounds):
                t_ort.append(timed(theirs, feed, a.calls))
                t_ours.append(timed(ours, feed, a.calls))
            o, c = statistics.median(t_ort) * 1e3, statistics.median(t_ours) * 1e3
            ratios.append(c / o)
            rows.append({"model": name, "size": size, "ort_ms": o, "onnxc_ms": c})
            print(f"| {name} | {size} | {o:.3f} | {c:.3f} | {c / o:.2f} |", flush=True)
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float("nan")
    print(f"\n{len(ratios)} model sizes; geomean onnxc / onnxruntime at one thread: {geo:.3f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": rows, "geomean": geo}, f, indent=1)


if __name__ == "__main__":
    main()
