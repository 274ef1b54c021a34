#!/usr/bin/env python3
"""onnxc against onnxruntime the way users meet them: through Python, with
onnxruntime in the same process, on a machine where another process keeps
a core busy, and with the library a session builds by default next to the
portable one (`target_cpu="portable"`: x86-64-v2 code with every kernel also
for x86-64-v3 and v4, picked at load time).

    python3 scripts/bench_field.py --zoo squeezenet,mobilenetv2 \\
        [--model path.onnx ...] [--rounds 3] [--calls 20] [--out table.md]

Every figure is the median time of one call (after two warm-up calls) in a
fresh Python process; the rounds alternate the settings and the table has
the median over rounds. Settings, each quiet and with one core busy (a
`python3 -c 'while True: pass'` process started before and killed after):

* onnxc: `onnxc.InferenceSession` (default: built for this machine), at
  default threads and at one (`ONNXC_NUM_THREADS=1`); `portable`: built
  with `target_cpu="portable"`, what `onnxc compile --emit lib` gives
  without `--target-cpu`;
* ort: `onnxruntime.InferenceSession` at default threads and at one;
* onnxc+ort: both sessions in one process, calls alternating (onnxc's
  time), as a user comparing them or serving two models does.

Models come from `onnxc zoo gen` (random weights) or are given as files
(inputs: random of the declared shape, dynamic dims 1). The compiled
libraries go to a cache directory of their own (compiled once, before
timing). Needs the onnxc Python package and onnxruntime importable.
"""

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile

WORKER = r"""
import json, sys, time
import numpy as np
cfg = json.loads(sys.argv[1])
import onnxruntime as ort
import onnxc

def feed_for(inputs):
    rng = np.random.default_rng(0)
    kinds = {"tensor(float)": np.float32, "tensor(int64)": np.int64, "tensor(int32)": np.int32}
    feed = {}
    for i in inputs:
        shape = [d if isinstance(d, int) and d > 0 else 1 for d in i.shape]
        dt = kinds.get(i.type, np.float32)
        feed[i.name] = (rng.standard_normal(shape) if dt == np.float32 else rng.integers(0, 4, shape)).astype(dt)
    return feed

sessions = {}
if "onnxc" in cfg["engines"]:
    sessions["onnxc"] = onnxc.InferenceSession(cfg["model"], cache_dir=cfg["cache"], target_cpu=cfg["target"])
if "ort" in cfg["engines"]:
    so = ort.SessionOptions()
    if cfg["ort_threads"]:
        so.intra_op_num_threads = cfg["ort_threads"]
    sessions["ort"] = ort.InferenceSession(cfg["model"], so, providers=["CPUExecutionProvider"])
first = next(iter(sessions.values()))
feed = feed_for(first.get_inputs())
times = {k: [] for k in sessions}
for call in range(cfg["calls"] + 2):
    for name, s in sessions.items():
        t0 = time.perf_counter()
        s.run(None, feed)
        if call >= 2:
            times[name].append((time.perf_counter() - t0) * 1e3)
print(json.dumps({k: sorted(v)[len(v) // 2] if v else None for k, v in times.items()}))
"""

# (column, engines, onnxc target, ONNXC_NUM_THREADS, ort threads, engine timed)
SETTINGS = [
    ("onnxc", ["onnxc"], "native", None, 0, "onnxc"),
    ("onnxc 1t", ["onnxc"], "native", "1", 0, "onnxc"),
    ("portable", ["onnxc"], "portable", None, 0, "onnxc"),
    ("ort", ["ort"], "native", None, 0, "ort"),
    ("ort 1t", ["ort"], "native", None, 1, "ort"),
    ("onnxc+ort", ["onnxc", "ort"], "native", None, 0, "onnxc"),
]


def run_worker(cfg, threads_env, busy):
    env = dict(os.environ)
    env.pop("ONNXC_NUM_THREADS", None)
    if threads_env:
        env["ONNXC_NUM_THREADS"] = threads_env
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
    try:
        out = subprocess.run([sys.executable, "-c", WORKER, json.dumps(cfg)], env=env,
                             capture_output=True, text=True, timeout=3600)
    finally:
        if hog:
            hog.kill()
            hog.wait()
    if out.returncode != 0:
        raise SystemExit(f"worker failed for {cfg}:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def models_from(args, work):
    models = {}
    for name in filter(None, args.zoo.split(",")):
        path = os.path.join(work, name + ".onnx")
        subprocess.run([args.onnxc, "zoo", "gen", name, "-o", path], check=True, capture_output=True)
        models[name] = path
    for path in args.model:
        models[os.path.basename(path)] = path
    return models


def table(models, times):
    loads = ["quiet", "busy"]
    cols = [s[0] for s in SETTINGS]
    lines = ["| model | load | " + " | ".join(c + " ms" for c in cols)
             + " | portable / onnxc | onnxc / ort | onnxc+ort / onnxc | onnxc / onnxc 1t |",
             "|---|---|" + "---:|" * (len(cols) + 4)]
    for model, load in itertools.product(models, loads):
        med = {c: statistics.median(times[(model, load, c)]) for c in cols}
        ratios = [med["portable"] / med["onnxc"], med["onnxc"] / med["ort"],
                  med["onnxc+ort"] / med["onnxc"], med["onnxc"] / med["onnxc 1t"]]
        lines.append(f"| {model} | {load} | " + " | ".join(f"{med[c]:.2f}" for c in cols) + " | "
                     + " | ".join(f"{r:.2f}" for r in ratios) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zoo", default="", help="comma-separated zoo models")
    ap.add_argument("--model", action="append", default=[], help="an ONNX file (repeatable)")
    ap.add_argument("--onnxc", default="target/release/onnxc", help="onnxc binary for `zoo gen`")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--out", help="also write the Markdown table here")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        models = models_from(args, work)
        cache = os.path.join(work, "cache")
        times = {}
        for model, path in models.items():
            for target in ("native", "x86-64-v2"):  # compile outside the timing
                run_worker({"model": path, "engines": ["onnxc"], "target": target, "cache": cache,
                            "ort_threads": 0, "calls": 0}, None, False)
        for r in range(args.rounds):
            for model, busy, setting in itertools.product(models, [False, True], SETTINGS):
                col, engines, target, threads_env, ort_threads, timed = setting
                cfg = {"model": models[model], "engines": engines, "target": target, "cache": cache,
                       "ort_threads": ort_threads, "calls": args.calls}
                t = run_worker(cfg, threads_env, busy)[timed]
                load = "busy" if busy else "quiet"
                times.setdefault((model, load, col), []).append(t)
                print(r, model, load, col, f"{t:.3f} ms", flush=True)
    text = table(models, times)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
