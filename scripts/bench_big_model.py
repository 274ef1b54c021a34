#!/usr/bin/env python3
"""Figures for models over 2 GiB (issue 33): fold, simplify, compile and a
Python session of a synthetic external-data model (scripts/big_model.py),
with onnx-simplifier's result and onnxruntime's outputs from the same run.

    python3 scripts/bench_big_model.py --gib 8 --work target/big

Each step runs in its own process; its wall time and peak anonymous memory
(RssAnon of the process and its children, sampled every 20 ms) are
reported. Outputs are compared with onnxruntime on the original model
(ids [1, 4]). Needs: onnx, onnxruntime, numpy, onnxsim (for its column) in
`--python`, and onnxc's Python package in `--onnxc-python`.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def children(pid):
    out = []
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{t}/children") as f:
                out += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return out + [g for c in out for g in children(c)]


def anon_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def measure(cmd, env=None, limit_gib=None):
    """(seconds, peak anonymous MiB, return code, stderr tail) of `cmd`."""
    pre = None
    if limit_gib:
        import resource

        def pre():
            b = int(limit_gib * (1 << 30))
            resource.setrlimit(resource.RLIMIT_AS, (b, b))

    start = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, preexec_fn=pre)
    peak = 0
    while p.poll() is None:
        peak = max(peak, sum(anon_kib(q) for q in [p.pid] + children(p.pid)))
        time.sleep(0.02)
    out, err = p.communicate()
    took = time.monotonic() - start
    return took, peak / 1024, p.returncode, out.strip(), " ".join(err.split())[-400:]


RUN_ORT = """
import sys, numpy as np, onnxruntime as ort
o = ort.SessionOptions(); o.log_severity_level = 3
s = ort.InferenceSession(sys.argv[1], o, providers=["CPUExecutionProvider"])
ids = (np.arange(4, dtype=np.int64) * 7919 % 32000).reshape(1, 4)
np.savez(sys.argv[2], *s.run(None, {"ids": ids}))
"""

RUN_ONNXC = """
import sys, numpy as np, onnxc
s = onnxc.InferenceSession(sys.argv[1])
ids = (np.arange(4, dtype=np.int64) * 7919 % 32000).reshape(1, 4)
np.savez(sys.argv[2], *s.run(None, {"ids": ids}))
"""

SIMPLIFY_ONNXC = """
import sys, onnxc
m, ok = onnxc.simplify(sys.argv[1], output_path=sys.argv[2])
print(ok)
"""

SIMPLIFY_ONNXSIM = """
import sys, onnx, onnxsim
m = onnx.load(sys.argv[1])
m, ok = onnxsim.simplify(m)
onnx.save(m, sys.argv[2], save_as_external_data=True, location=sys.argv[2].rsplit("/", 1)[-1] + ".data")
print(ok)
"""


def same(a, b):
    import numpy as np

    x, y = np.load(a), np.load(b)
    return all(np.allclose(x[k], y[k], rtol=1e-3, atol=1e-4) for k in x.files)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gib", type=float, default=8.0)
    ap.add_argument("--work", default=os.path.join(ROOT, "target", "big"))
    ap.add_argument("--onnxc", default=os.path.join(ROOT, "target", "release", "onnxc"))
    ap.add_argument("--python", default=sys.executable, help="python with onnx, onnxruntime, onnxsim")
    ap.add_argument("--onnxc-python", default=os.path.join(ROOT, "target", "pyenv", "bin", "python"))
    ap.add_argument("--skip-onnxsim", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the outputs (they take the model's size each)")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    w = lambda n: os.path.join(a.work, n)  # noqa: E731
    model = w(f"big{a.gib:g}.onnx")
    if not os.path.exists(model):
        subprocess.run([a.python, os.path.join(ROOT, "scripts", "big_model.py"), "--gib", str(a.gib), "-o", model],
                       check=True)
    size = os.path.getsize(model) + os.path.getsize(model + ".data")
    rows = []

    def step(name, cmd, out=None, **kw):
        t, mib, rc, stdout, err = measure(cmd, **kw)
        made = out and os.path.exists(out) and os.path.getsize(out) + (
            os.path.getsize(out + ".data") if os.path.exists(out + ".data") else 0)
        rows.append({"step": name, "seconds": round(t, 2), "peak_anon_mib": round(mib, 1), "rc": rc,
                     "output_bytes": made or None, "note": err if rc else stdout})
        print(f"{name}: {t:.2f} s, peak anon {mib:.0f} MiB, output {made or '-'} B, rc {rc} {err if rc else stdout}",
              file=sys.stderr)
        return rc == 0

    def drop(*names):
        if a.keep:
            return
        for n in names:
            for p in (w(n), w(n) + ".data"):
                if os.path.exists(p):
                    os.remove(p)

    step("onnxruntime: run the original", [a.python, "-c", RUN_ORT, model, w("ort.npz")])
    if step("onnxc fold", [a.onnxc, "fold", model, "-o", w("fold.onnx"), "--external-data-threshold", "1024"],
            w("fold.onnx")):
        step("onnxruntime: run the folded model", [a.python, "-c", RUN_ORT, w("fold.onnx"), w("fold.npz")])
        rows[-1]["matches"] = same(w("ort.npz"), w("fold.npz"))
    drop("fold.onnx")
    step("onnxc.simplify (Python, path to path)", [a.onnxc_python, "-c", SIMPLIFY_ONNXC, model, w("sim.onnx")],
         w("sim.onnx"))
    drop("sim.onnx")
    if not a.skip_onnxsim:
        step("onnx-simplifier", [a.python, "-c", SIMPLIFY_ONNXSIM, model, w("onnxsim.onnx")], w("onnxsim.onnx"),
             limit_gib=20)
        drop("onnxsim.onnx")
    step("onnxc compile --emit lib", [a.onnxc, "compile", model, "--emit", "lib", "-o", w("libbig.so")], w("libbig.so"))
    drop("libbig.so", "big.h")
    # The session's library goes to a cache of its own, removed after.
    cache = w("session-cache")
    env = dict(os.environ, ONNXC_CACHE_DIR=cache)
    if step("onnxc.InferenceSession (compile, cache, run)", [a.onnxc_python, "-c", RUN_ONNXC, model, w("onnxc.npz")],
            env=env):
        rows[-1]["matches"] = same(w("ort.npz"), w("onnxc.npz"))
    if not a.keep:
        shutil.rmtree(cache, ignore_errors=True)
    report = {"model": model, "model_bytes": size, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "steps": rows}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
