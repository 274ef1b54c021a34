#!/usr/bin/env python3
"""Benchmark `onnxc fold` against its peers on the same files, in one run.

    bench_fold.py ONNXC_BINARY MODEL.onnx [MODEL.onnx ...]

For each model: plain `cp` (the floor for reading and writing the file),
`onnxc fold`, onnxruntime's offline optimization (ORT_ENABLE_EXTENDED and
ORT_ENABLE_BASIC with optimized_model_filepath) and onnx-simplifier. Each is
a whole process timed by /usr/bin/time (wall seconds and peak RSS), median
of 3 with min and max (cp and onnxc fold, which take well under a second,
median of 7), plus the CPU seconds (user + system, median): on a shared
machine the wall time of short runs swings with the load, CPU time much
less. The tools run interleaved (one run of each in turn) so they share the
machine's load; the load average is printed per model.
The folded model must give the original's outputs under onnxruntime.
Prints a Markdown table.
"""

import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort

ORT_SCRIPT = """
import sys, onnxruntime as ort
o = ort.SessionOptions()
o.graph_optimization_level = getattr(ort.GraphOptimizationLevel, sys.argv[3])
o.optimized_model_filepath = sys.argv[2]
ort.InferenceSession(sys.argv[1], o, providers=["CPUExecutionProvider"])
"""


def timed(cmd):
    """Wall seconds, peak RSS bytes and CPU seconds of one run of `cmd`."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as f:
        subprocess.run(
            ["/usr/bin/time", "-f", "%e %M %U %S", "-o", f.name, *cmd],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wall, kib, user, system = f.read().split()[-4:]
    return float(wall), int(kib) * 1024, float(user) + float(system)


def load_average():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def outputs(model, feed):
    s = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    return s.run(None, feed)


def random_feed(model):
    s = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feed = {}
    for i in s.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        feed[i.name] = rng.standard_normal(shape).astype(np.float32)
    return feed


def main():
    onnxc, models = sys.argv[1], sys.argv[2:]
    py = sys.executable
    print("| model | file MB | tool | wall s median (min-max) | CPU s | peak RSS MB | time / cp | RSS / file |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            name = os.path.basename(model)
            size = os.path.getsize(model)
            out = os.path.join(tmp, "out.onnx")
            tools = [
                ("cp", ["cp", model, out]),
                ("onnxc fold", [onnxc, "fold", model, "-o", out]),
                ("onnxruntime EXTENDED", [py, "-c", ORT_SCRIPT, model, out, "ORT_ENABLE_EXTENDED"]),
                ("onnxruntime BASIC", [py, "-c", ORT_SCRIPT, model, out, "ORT_ENABLE_BASIC"]),
                ("onnxsim", [py, "-m", "onnxsim", model, out]),
            ]
            runs = {tool: [] for tool, _ in tools}
            loads = [load_average()]
            for i in range(7):
                for tool, cmd in tools:
                    if i < 3 or tool in ("cp", "onnxc fold"):
                        runs[tool].append(timed(cmd))
                if i < 3:
                    loads.append(load_average())
            cp_time = statistics.median(w for w, _, _ in runs["cp"])
            for tool, _ in tools:
                walls = [w for w, _, _ in runs[tool]]
                wall = statistics.median(walls)
                rss = statistics.median(r for _, r, _ in runs[tool])
                cpu = statistics.median(c for _, _, c in runs[tool])
                print(
                    f"| {name} | {size / 1e6:.0f} | {tool} | {wall:.2f} ({min(walls):.2f}-{max(walls):.2f}) "
                    f"| {cpu:.2f} | {rss / 1e6:.0f} | {wall / cp_time:.2f} | {rss / size:.2f} |",
                    flush=True,
                )
            print(f"<!-- {name}: load average during the runs {' '.join(loads)} -->")
            # Numerical equivalence of onnxc's result.
            subprocess.run([onnxc, "fold", model, "-o", out], check=True)
            feed = random_feed(model)
            want, got = outputs(model, feed), outputs(out, feed)
            for a, b in zip(want, got):
                np.testing.assert_allclose(b, a, rtol=1e-3, atol=1e-4)
            print(f"<!-- {name}: onnxc fold output matches the original under onnxruntime -->")


if __name__ == "__main__":
    main()
