#!/usr/bin/env python3
"""Inference time of onnxc at 1 and 2 threads next to onnxruntime at 1 and
its default thread count, in the same run, alternating.

    python3 scripts/bench_threads.py --onnxc target/release/onnxc \
        [--rounds 3] [--calls 5] [--target-cpu native] [--md OUT.md] MODEL...

MODEL is `zoo:NAME` (a built-in model, `onnxc zoo gen`, on its sample
input) or a corpus model `DIR/NAME.onnx` (scripts/corpus: its first saved
size). Each model is compiled once with `--emit lib` (dynamic dims stay
dynamic) and loaded through its C API (docs/ABI.md). Every round runs one
child process per configuration, in turn: onnxc with ONNXC_NUM_THREADS=1,
then 2, onnxruntime (CPUExecutionProvider, default graph optimizations)
with intra_op_num_threads=1, then 0 (its default: one per core). A child
makes one warm-up call, then `--calls` timed ones; a configuration's
figure is the median over all rounds' calls. onnxc's outputs are checked
against onnxruntime's (largest |difference| relative to the largest
reference magnitude). `--gomp-env VAR=VALUE` sets libgomp's environment
for the onnxc children (OMP_WAIT_POLICY, GOMP_SPINCOUNT). Needs numpy,
onnx and onnxruntime.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "corpus"))

import corpus_common  # noqa: E402
import run as corpus_run  # noqa: E402

CONFIGS = [("onnxc", 1), ("onnxc", 2), ("ort", 1), ("ort", 0)]


def prepare(args, model, work):
    """Returns (onnx path, input arrays) for a MODEL argument."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    if model.startswith("zoo:"):
        name = model[4:]
        path = os.path.join(work, f"{name}.onnx")
        ind = os.path.join(work, "in")
        subprocess.run([args.onnxc, "zoo", "gen", name, "-o", path, "--inputs", ind], check=True)
        files = sorted(f for f in os.listdir(ind) if f.endswith(".pb"))
        arrays = [numpy_helper.to_array(onnx.load_tensor(os.path.join(ind, f))) for f in files]
        return path, arrays
    base = model[: -len(".onnx")]
    with open(base + ".json") as f:
        entry = json.load(f)
    ins, _ = corpus_run.load_size(np, os.path.dirname(model), entry, 0)
    return model, ins


def worker(argv):
    """Child: times one configuration; prints JSON {times, outputs?}."""
    import numpy as np

    kind, lib_or_model, prefix, npz, calls = argv[0], argv[1], argv[2], argv[3], int(argv[4])
    with np.load(npz) as z:
        arrays = [z[f"in{i}"] for i in range(len(z.files))]
    if kind == "onnxc":
        m = corpus_run.CModel(lib_or_model, prefix)
        dtypes = [corpus_common.ELEM_DTYPES.get(o["dtype"], "float32") for o in m.outputs]

        def call():
            rc, outs = m.run(np, arrays, dtypes, copy=True)
            if rc != 0:
                raise SystemExit(f"{prefix}_run returned {rc}")
            return outs
    else:
        threads = int(argv[5])
        sess = corpus_common.ort_session(lib_or_model, optimized=True, threads=threads)
        feeds = {i.name: a for i, a in zip(sess.get_inputs(), arrays)}

        def call():
            return sess.run(None, feeds)

    outs = call()
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        call()
        times.append((time.perf_counter() - t) * 1e3)
    np.savez(npz + f".{kind}.out.npz", *outs)
    print(json.dumps({"times": times}))


def rel_diff(np, got, want):
    diff = scale = 0.0
    for g, w in zip(got, want):
        g = np.asarray(g, dtype=np.float64)
        w = np.asarray(w, dtype=np.float64)
        if g.shape != w.shape:
            return float("inf")
        if g.size:
            diff = max(diff, float(np.max(np.abs(g - w))))
            scale = max(scale, float(np.max(np.abs(w))))
    return diff / scale if scale else diff


def bench(args, model):
    import numpy as np

    name = model[4:] if model.startswith("zoo:") else os.path.basename(model)[: -len(".onnx")]
    work = os.path.join(args.work_dir, name)
    os.makedirs(work, exist_ok=True)
    path, arrays = prepare(args, model, work)
    npz = os.path.join(work, "inputs.npz")
    np.savez(npz, **{f"in{i}": a for i, a in enumerate(arrays)})
    prefix = corpus_run.c_prefix(name)
    lib = os.path.join(work, f"lib{prefix}.so")
    t = time.perf_counter()
    subprocess.run(
        [args.onnxc, "compile", path, "--emit", "lib", "-o", lib, "--target-cpu", args.target_cpu],
        check=True,
    )
    compile_s = time.perf_counter() - t
    times = {c: [] for c in CONFIGS}
    for _ in range(args.rounds):
        for kind, n in CONFIGS:
            env = dict(os.environ)
            cmd = [sys.executable, __file__, "--worker", kind]
            if kind == "onnxc":
                env["ONNXC_NUM_THREADS"] = str(n)
                for kv in args.gomp_env:
                    k, _, v = kv.partition("=")
                    env[k] = v
                cmd += [lib, prefix, npz, str(args.calls)]
            else:
                cmd += [path, prefix, npz, str(args.calls), str(n)]
            out = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if out.returncode != 0:
                raise SystemExit(f"{name} {kind}/{n}: {out.stderr.strip()[-400:]}")
            times[(kind, n)] += json.loads(out.stdout.strip().splitlines()[-1])["times"]
    with np.load(npz + ".onnxc.out.npz") as a, np.load(npz + ".ort.out.npz") as b:
        got = [a[k] for k in sorted(a.files, key=lambda s: int(s.split("_")[1]))]
        want = [b[k] for k in sorted(b.files, key=lambda s: int(s.split("_")[1]))]
    med = {c: corpus_run.median(v) for c, v in times.items()}
    return {"model": name, "compile_s": compile_s, "rel_diff": rel_diff(np, got, want), "ms": med}


def table(rows):
    head = (
        "| model | onnxc 1 thr ms | onnxc 2 thr ms | ort 1 thr ms | ort default ms "
        "| onnxc/ort 1 thr | onnxc 2 / ort default | onnxc 1→2 speed-up | max rel diff |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    lines = []
    for r in rows:
        ms = r["ms"]
        o1, o2, r1, r0 = (ms[c] for c in CONFIGS)
        lines.append(
            f"| {r['model']} | {o1:.2f} | {o2:.2f} | {r1:.2f} | {r0:.2f} | {o1 / r1:.2f}x "
            f"| {o2 / r0:.2f}x | {o1 / o2:.2f}x | {r['rel_diff']:.1e} |"
        )
    return head + "\n".join(lines) + "\n"


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return worker(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--onnxc", default="target/release/onnxc")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--target-cpu", default="native")
    ap.add_argument("--work-dir", default="target/bench-threads")
    ap.add_argument("--md")
    ap.add_argument(
        "--gomp-env",
        action="append",
        default=[],
        metavar="VAR=VALUE",
        help="environment of the onnxc children, e.g. GOMP_SPINCOUNT=10000",
    )
    args = ap.parse_args()
    args.onnxc = os.path.abspath(args.onnxc)
    rows = []
    for model in args.models:
        r = bench(args, model)
        rows.append(r)
        print(table([r]).splitlines()[-1], flush=True)
    text = table(rows)
    print(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
