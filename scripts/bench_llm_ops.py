#!/usr/bin/env python3
"""MatMulNBits (int4 language models' products) against onnxruntime: decode
(one row) and prefill (many rows), one and all threads, each engine in its
own process (onnxruntime's spinning workers would distort the other's
threads), medians of rounds.

    target/pyenv/bin/python scripts/bench_llm_ops.py [--shapes 4096x4096,4096x11008] [--rows 1,128]

The model is one MatMulNBits node (4-bit codes, blocks of 32, packed zero
points) built by python/tests/test_llm_ops.py's helpers.
"""

import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import sys, time, numpy as np
sys.path.insert(0, sys.argv[1])
from test_llm_ops import matmul_nbits_model
engine, k, n, threads, rows_list = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
model = matmul_nbits_model(k, n, 4, 32, "packed", False, ["M"]).SerializeToString()
if engine == "onnxruntime":
    import onnxruntime as ort
    o = ort.SessionOptions(); o.intra_op_num_threads = threads
    s = ort.InferenceSession(model, o, providers=["CPUExecutionProvider"])
else:
    import onnxc
    o = onnxc.SessionOptions(); o.intra_op_num_threads = threads
    s = onnxc.InferenceSession(model, o)
rng = np.random.default_rng(0)
for rows in map(int, rows_list.split(",")):
    a = rng.standard_normal((rows, k)).astype(np.float32)
    for _ in range(5):
        s.run(None, {"A": a})
    times = []
    for _ in range(7):
        t = time.perf_counter()
        for _ in range(5):
            s.run(None, {"A": a})
        times.append((time.perf_counter() - t) / 5)
    print(rows, np.median(times) * 1e3)
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default="4096x4096,4096x11008")
    ap.add_argument("--rows", default="1,128")
    ap.add_argument("--threads", default="1,0", help="0: all cores")
    a = ap.parse_args()
    tests = os.path.join(ROOT, "python", "tests")
    print("| K × N | rows | threads | onnxruntime ms | onnxc ms | ratio |\n|---|---|---|---|---|---|")
    for shape in a.shapes.split(","):
        k, n = shape.split("x")
        for threads in a.threads.split(","):
            got = {}
            for engine in ("onnxruntime", "onnxc"):
                out = subprocess.run([sys.executable, "-c", CHILD, tests, engine, k, n, threads, a.rows],
                                     check=True, capture_output=True, text=True).stdout
                got[engine] = dict(line.split() for line in out.splitlines())
            for rows in a.rows.split(","):
                o, c = float(got["onnxruntime"][rows]), float(got["onnxc"][rows])
                print(f"| {k} × {n} | {rows} | {'all' if threads == '0' else threads} | {o:.3f} | {c:.3f} | {c / o:.2f} |")


if __name__ == "__main__":
    main()
