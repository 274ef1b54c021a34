#!/usr/bin/env python3
"""Zoo models at one thread and at two, on a quiet machine and with one core
kept busy by another process, for two onnxc builds side by side.

    python3 scripts/bench_contention.py --onnxc before=/path/to/onnxc \\
        --onnxc after=target/release/onnxc --zoo squeezenet,densenet121 \\
        [--rounds 3] [--repeat 20]

Each measurement is `onnxc run --zoo M --threads T --repeat N` (its median
time per call, compilation excluded); the busy core is a
`python3 -c 'while True: pass'` process started before and killed after
it. Builds, loads and thread counts alternate within each round; the
table has the median over rounds. Prints one line per measurement, then a
Markdown table.
"""

import argparse
import itertools
import re
import statistics
import subprocess
import tempfile

UNITS = {"ms": 1.0, "µs": 1e-3, "s": 1e3}


def measure(onnxc, model, threads, busy, repeat, out_dir):
    hog = subprocess.Popen(["python3", "-c", "while True: pass"]) if busy else None
    try:
        run = subprocess.run(
            [onnxc, "run", "--zoo", model, "--threads", str(threads), "--repeat", str(repeat),
             "--output-dir", out_dir],
            capture_output=True, text=True, timeout=1200)
    finally:
        if hog:
            hog.kill()
            hog.wait()
    m = re.search(r"median ([0-9.]+) ?(ms|µs|s)", run.stdout + run.stderr)
    if run.returncode != 0 or not m:
        raise SystemExit(f"{onnxc} run --zoo {model} failed:\n{run.stderr[-2000:]}")
    return float(m.group(1)) * UNITS[m.group(2)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--onnxc", action="append", required=True, help="LABEL=PATH (repeatable)")
    ap.add_argument("--zoo", required=True, help="comma-separated zoo models")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    builds = dict(b.split("=", 1) for b in args.onnxc)
    models = args.zoo.split(",")
    times = {}
    with tempfile.TemporaryDirectory() as out_dir:
        for r in range(args.rounds):
            for model, busy, threads, label in itertools.product(models, [True, False], [1, 2], builds):
                t = measure(builds[label], model, threads, busy, args.repeat, out_dir)
                times.setdefault((model, busy, threads, label), []).append(t)
                print(r, model, "busy" if busy else "quiet", threads, label, f"{t:.3f} ms", flush=True)
    cols = [(label, t) for label in builds for t in (1, 2)]
    print("\n| model | load | " + " | ".join(f"{l}, {t} thread{'s' if t > 1 else ''}" for l, t in cols) + " |")
    print("|---|---|" + "---:|" * len(cols))
    for model, busy in itertools.product(models, [True, False]):
        cells = [statistics.median(times[(model, busy, t, l)]) for l, t in cols]
        load = "one core busy" if busy else "quiet"
        print(f"| {model} | {load} | " + " | ".join(f"{c:.2f} ms" for c in cells) + " |")


if __name__ == "__main__":
    main()
