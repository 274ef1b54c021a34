#!/usr/bin/env python3
"""Inference time of onnxc vs onnxruntime (single thread), median of runs.

Usage: scripts/bench_inference.py [--onnxc BIN] [--repeat N] MODEL.onnx...
For each model: random inputs of the declared shapes (dynamic dims = 1),
onnxruntime with intra_op_num_threads=1 (sequential, all graph
optimizations), and `onnxc run --repeat N` (compilation excluded). Prints a
markdown table row per model: median (min) wall ms and median thread CPU ms
of each, and the ratios. On a busy machine compare CPU times.
"""
import argparse, os, re, statistics, subprocess, sys, tempfile, time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

def inputs_of(path):
    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    rng = np.random.default_rng(0)
    feeds = {}
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        t = vi.type.tensor_type
        shape = [d.dim_value if d.dim_value > 0 else 1 for d in t.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
        feeds[vi.name] = rng.random(shape, dtype=np.float32).astype(dtype)
    return feeds

def ort_time(path, feeds, repeat):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    sess.run(None, feeds)
    times, cpu = [], []
    for _ in range(repeat):
        t, c = time.perf_counter_ns(), time.thread_time_ns()
        sess.run(None, feeds)
        cpu.append(time.thread_time_ns() - c)
        times.append(time.perf_counter_ns() - t)
    return statistics.median(times) / 1e6, min(times) / 1e6, statistics.median(cpu) / 1e6

def onnxc_time(onnxc, path, feeds, repeat):
    with tempfile.TemporaryDirectory() as d:
        args = [onnxc, "run", path, "--output-dir", d, "--repeat", str(repeat)]
        for i, (name, v) in enumerate(feeds.items()):
            p = os.path.join(d, f"in{i}.pb")
            with open(p, "wb") as f:
                f.write(numpy_helper.from_array(v, name).SerializeToString())
            args += ["--input", p]
        t = time.perf_counter()
        out = subprocess.run(args, capture_output=True, text=True)
        total = time.perf_counter() - t
        if out.returncode != 0:
            return None, out.stderr.strip().splitlines()[-1:] or ["failed"]
        m = re.search(r"median ([0-9.]+) ms, min ([0-9.]+) ms, median cpu ([0-9.]+) ms", out.stdout)
        if not m:
            return None, ["no timing line"]
        return tuple(float(g) for g in m.groups()), total

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnxc", default="target/release/onnxc")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    print("| model | onnxruntime 1 thread: median (min) ms, cpu | onnxc: median (min) ms, cpu | onnxc / ort (wall median, cpu median) |")
    print("|---|---:|---:|---:|")
    for path in a.models:
        feeds = inputs_of(path)
        o = ort_time(path, feeds, a.repeat)
        c, extra = onnxc_time(a.onnxc, path, feeds, a.repeat)
        name = os.path.basename(path)
        ort_txt = f"{o[0]:.2f} ({o[1]:.2f}), {o[2]:.2f}"
        if c is None:
            print(f"| {name} | {ort_txt} | failed: {' '.join(extra)[:80]} | - |")
        else:
            print(f"| {name} | {ort_txt} | {c[0]:.2f} ({c[1]:.2f}), {c[2]:.2f} | {c[0] / o[0]:.2f}x, {c[2] / o[2]:.2f}x |")
        sys.stdout.flush()

if __name__ == "__main__":
    main()
