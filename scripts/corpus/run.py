#!/usr/bin/env python3
"""Run the real-model corpus through onnxc and compare with onnxruntime.

    python3 scripts/corpus/run.py [--corpus DIR ...] [--onnxc PATH]
                                  [--emit lib|run] [--filter REGEX]
                                  [--json OUT.json] [--md OUT.md]

Corpus directories (default $ONNXC_CORPUS or target/corpus) hold NAME.onnx,
NAME.json and NAME.size{k}.npz as written by generate.py / ci_models.py.

--emit lib (default), per model:
  1. `onnxc compile NAME.onnx --emit lib -o WORK/libNAME.so`, once, with the
     model's declared (dynamic) dims;
  2. per saved size, in a child process (so a segfault or abort is recorded,
     not fatal): load the library with ctypes through the C API of
     docs/ABI.md, call NAME_run, compare every output with onnxruntime's
     saved one (rtol 1e-3, atol 1e-4), then time onnxc and onnxruntime
     (1 thread, default graph optimizations) alternately, median of a few
     calls each.
--emit run: per size, `onnxc run NAME.onnx --input ... --output-dir ...
  --repeat N` instead (compiles per call; time is the driver's median), and
  onnxruntime timed in a child process.

Prints a table; --json writes every result (model, compiled?, first error
line, per size: status, max abs diff, times); --md writes the Markdown
tables STATUS.md is made of. Needs only numpy, onnx and onnxruntime.
The exit status is 0 whatever the models do (the results are the product);
2 for a usage error.
"""

import argparse
import ctypes
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import forkrun  # noqa: E402
from corpus_common import ATOL, ELEM_DTYPES, RTOL, ort_session  # noqa: E402

WORKER_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def worker_threads():
    """Threads of both sides in a worker (`--threads`, through the env)."""
    return int(os.environ.get("ONNXC_CORPUS_THREADS", "1"))


# ---------------------------------------------------------------- helpers


def first_error_line(text, rc=None):
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    for ln in lines:
        if ln.lower().startswith("error") or "panicked at" in ln:
            return ln
    for ln in lines:
        if not ln.lower().startswith(("warning", "note", "timing")):
            return ln
    if rc is not None:
        return describe_rc(rc)
    return lines[0] if lines else ""


def describe_rc(rc):
    if rc is None:
        return "timeout"
    if rc < 0:
        try:
            return f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit code {rc}"


def c_prefix(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def compare(np, got, want, atol=ATOL):
    """(ok, max_abs_diff, note) for one output; ATOL unless the model's
    entry sets its own (quantized models: see generate.py)."""
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        return False, None, f"shape {list(got.shape)} != {list(want.shape)}"
    if want.size == 0:
        return True, 0.0, ""
    if want.dtype.kind in "fc":
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        both_nan = np.isnan(g) & np.isnan(w)
        diff = np.where(both_nan, 0.0, np.abs(g - w))
        mad = float(np.nanmax(diff)) if diff.size else 0.0
        ok = bool(np.all(both_nan | (np.abs(g - w) <= atol + RTOL * np.abs(w))))
        if np.isnan(mad):
            mad = float("nan")
        return ok, mad, ""
    eq = got.astype(want.dtype) == want
    mad = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
    return bool(np.all(eq)), mad, ""


# A paired sample lasts at least this long (batches of calls of µs models).
PAIR_SAMPLE_MS = 5.0


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if not n:
        return None
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def load_size(np, corpus_dir, entry, k):
    size = entry["sizes"][k]
    with np.load(os.path.join(corpus_dir, size["npz"])) as z:
        ins = [z[f"in{i}"] for i in range(len(entry["inputs"]))]
        outs = [z[f"out{i}"] for i in range(len(entry["outputs"]))]
    return ins, outs


# ---------------------------------------------------------------- worker


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("shape", ctypes.POINTER(ctypes.c_int64)), ("rank", ctypes.c_int64)]


class CModel:
    """A compiled model loaded through its C API (docs/ABI.md)."""

    def __init__(self, lib_path, prefix):
        self.lib = ctypes.CDLL(os.path.abspath(lib_path), mode=ctypes.RTLD_LOCAL)
        p = prefix

        def fn(suffix, restype, *argtypes):
            f = getattr(self.lib, f"{p}_{suffix}")
            f.restype = restype
            f.argtypes = list(argtypes)
            return f

        self._run = fn("run", ctypes.c_int, ctypes.POINTER(Tensor), ctypes.POINTER(Tensor))
        self._free = fn("free_outputs", None, ctypes.POINTER(Tensor))
        n_in = fn("num_inputs", ctypes.c_int)()
        n_out = fn("num_outputs", ctypes.c_int)()
        q = {}
        for side in ("input", "output"):
            q[side + "_name"] = fn(side + "_name", ctypes.c_char_p, ctypes.c_int)
            q[side + "_dtype"] = fn(side + "_dtype", ctypes.c_int, ctypes.c_int)
            q[side + "_rank"] = fn(side + "_rank", ctypes.c_int, ctypes.c_int)
            q[side + "_shape"] = fn(side + "_shape", ctypes.POINTER(ctypes.c_int64), ctypes.c_int)

        def sig(side, i):
            rank = q[side + "_rank"](i)
            shp = q[side + "_shape"](i)
            return {
                "name": (q[side + "_name"](i) or b"").decode(),
                "dtype": q[side + "_dtype"](i),
                "rank": rank,
                "shape": [shp[d] for d in range(rank)] if shp and rank > 0 else [],
            }

        self.inputs = [sig("input", i) for i in range(n_in)]
        self.outputs = [sig("output", i) for i in range(n_out)]

    def run(self, np, arrays, out_dtypes, copy=True):
        """Call NAME_run; returns (rc, [arrays]) (arrays only when copy)."""
        n_in = len(self.inputs)
        ins = (Tensor * max(n_in, 1))()
        keep = []
        for i, a in enumerate(arrays):
            a = np.asarray(a, order="C")  # keeps a 0-d array 0-d
            shp = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
            keep.append((a, shp))
            ins[i].data = a.ctypes.data if a.size else a.ctypes.data or None
            ins[i].shape = ctypes.cast(shp, ctypes.POINTER(ctypes.c_int64))
            ins[i].rank = a.ndim
        outs = (Tensor * max(len(self.outputs), 1))()
        rc = self._run(ins, outs)
        if rc != 0:
            return rc, None
        result = None
        if copy:
            result = []
            for i, dt in enumerate(out_dtypes):
                t = outs[i]
                shape = tuple(t.shape[d] for d in range(t.rank)) if t.rank > 0 else ()
                dtype = np.dtype(dt)
                count = int(np.prod(shape, dtype=np.int64)) if shape else 1
                nbytes = count * dtype.itemsize
                if nbytes and t.data:
                    buf = ctypes.string_at(t.data, nbytes)
                    result.append(np.frombuffer(buf, dtype=dtype).reshape(shape).copy())
                else:
                    result.append(np.zeros(shape, dtype=dtype))
        self._free(outs)
        return 0, result


def worker_lib(args):
    """Child process: one model, one size, through the C API. Prints JSON."""
    import numpy as np

    entry = json.load(open(args.json))
    corpus_dir = os.path.dirname(os.path.abspath(args.json))
    k = args.size
    res = {"size": k, "status": "error"}
    ins, wants = load_size(np, corpus_dir, entry, k)
    m = CModel(args.lib, args.prefix)
    names = [i["name"] for i in entry["inputs"]]
    lib_names = [i["name"] for i in m.inputs]
    if lib_names != names:
        if sorted(lib_names) == sorted(names):
            ins = [ins[names.index(n)] for n in lib_names]
        else:
            res["error"] = f"library inputs {lib_names} != graph inputs {names}"
            print(json.dumps(res))
            return
    out_dtypes = []
    for o, w in zip(m.outputs, wants):
        declared = ELEM_DTYPES.get(o["dtype"])
        out_dtypes.append(declared or w.dtype.name)
    sys.stdout.flush()
    t0 = time.perf_counter()
    rc, got = m.run(np, ins, out_dtypes)
    first_ms = (time.perf_counter() - t0) * 1e3
    if rc != 0:
        res["error"] = f"run returned {rc}: input {rc - 1} ('{lib_names[rc - 1] if rc - 1 < len(lib_names) else '?'}') rejected"
        print(json.dumps(res))
        return
    per_out = []
    all_ok = True
    worst = 0.0
    for o, g, w in zip(entry["outputs"], got, wants):
        ok, mad, note = compare(np, g, w, entry.get("atol", ATOL))
        all_ok &= ok
        if mad is not None and not math.isnan(worst):
            worst = mad if math.isnan(mad) else max(worst, mad)
        per_out.append({"name": o["name"], "ok": ok, "max_abs_diff": mad, "note": note})
    if len(got) != len(wants):
        all_ok = False
    res.update(status="match" if all_ok else "mismatch", max_abs_diff=worst, outputs=per_out, first_call_ms=round(first_ms, 3))
    if args.time:
        sess = ort_session(args.model, optimized=True, threads=worker_threads()) if worker_threads() == 1 else None
        feeds = dict(zip(names, load_size(np, corpus_dir, entry, k)[0]))
        if sess:
            sess.run(None, feeds)  # warm-up
        t_ox, t_ort = [], []
        # With threads, onnxruntime is timed in a process of its own.
        alone = worker_threads() > 1
        deadline = time.perf_counter() + args.budget
        while len(t_ox) < args.min_reps or (time.perf_counter() < deadline and len(t_ox) < args.max_reps):
            t0 = time.perf_counter()
            m.run(np, ins, out_dtypes, copy=False)
            t_ox.append((time.perf_counter() - t0) * 1e3)
            if not alone:
                t0 = time.perf_counter()
                sess.run(None, feeds)
                t_ort.append((time.perf_counter() - t0) * 1e3)
        res.update(onnxc_ms=round(median(t_ox), 4), ort_ms=round(median(t_ort), 4) if t_ort else None, reps=len(t_ox))
    print(json.dumps(res))


def worker_pair(args):
    """Child process: the dynamic-dims library (--lib) against the one
    specialized to this size (--lib2), called alternately in one process so
    that both see the same machine; each sample is a batch of calls of at
    least PAIR_SAMPLE_MS. Prints JSON: medians per call and the median of
    the per-round ratios."""
    import numpy as np

    entry = json.load(open(args.json))
    corpus_dir = os.path.dirname(os.path.abspath(args.json))
    ins, wants = load_size(np, corpus_dir, entry, args.size)
    sides = [CModel(args.lib, args.prefix), CModel(args.lib2, args.prefix2)]
    names = [i["name"] for i in entry["inputs"]]
    feeds = []
    for m in sides:
        lib_names = [i["name"] for i in m.inputs]
        feeds.append([ins[names.index(n)] for n in lib_names] if sorted(lib_names) == sorted(names) else ins)
    out_dtypes = [w.dtype.name for w in wants]

    def batch(i, calls):
        t0 = time.perf_counter()
        for _ in range(calls):
            sides[i].run(np, feeds[i], out_dtypes, copy=False)
        return (time.perf_counter() - t0) * 1e3 / calls

    first = max(min(batch(0, 1), batch(1, 1)), 1e-3)
    calls = max(1, min(1000, math.ceil(PAIR_SAMPLE_MS / first)))
    dyn, st, ratios = [], [], []
    deadline = time.perf_counter() + 2 * args.budget
    while len(ratios) < max(args.min_reps, 5) or (time.perf_counter() < deadline and len(ratios) < 4 * args.max_reps):
        d = batch(0, calls)
        s = batch(1, calls)
        dyn.append(d)
        st.append(s)
        ratios.append(d / s)
    print(json.dumps({"dynamic_ms": round(median(dyn), 4), "static_ms": round(median(st), 4),
                      "ratio": round(median(ratios), 3), "rounds": len(ratios), "calls_per_sample": calls}))


def worker_ort(args):
    """Child process: time onnxruntime alone at one size (for --emit run)."""
    import numpy as np

    entry = json.load(open(args.json))
    corpus_dir = os.path.dirname(os.path.abspath(args.json))
    ins, _ = load_size(np, corpus_dir, entry, args.size)
    names = [i["name"] for i in entry["inputs"]]
    sess = ort_session(args.model, optimized=True, threads=worker_threads())
    feeds = dict(zip(names, ins))
    sess.run(None, feeds)
    ts = []
    deadline = time.perf_counter() + args.budget
    while len(ts) < args.min_reps or (time.perf_counter() < deadline and len(ts) < args.max_reps):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        ts.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"ort_ms": round(median(ts), 4), "reps": len(ts)}))


# ---------------------------------------------------------------- driver


def run_child(cmd, timeout, env=None):
    """(exit status, stdout, stderr) of CMD; negative for a signal, None
    on a timeout. A Python script of ours forks from a server that has
    imported numpy, onnx and onnxruntime once (forkrun.py; ONNXC_FORKRUN=0:
    a fresh interpreter each time)."""
    worker_env = dict(WORKER_ENV, **(env or {}))
    forked = os.environ.get("ONNXC_FORKRUN", "1") != "0"
    if forked and len(cmd) > 1 and cmd[0] == sys.executable and cmd[1].endswith(".py"):
        return forkrun.run_script(cmd[1], cmd[2:], worker_env, timeout, WORKER_ENV)
    e = dict(os.environ)
    e.update(worker_env)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as ex:
        out = ex.stdout.decode() if isinstance(ex.stdout, bytes) else (ex.stdout or "")
        err = ex.stderr.decode() if isinstance(ex.stderr, bytes) else (ex.stderr or "")
        return None, out, err


def last_json(text):
    for ln in reversed((text or "").splitlines()):
        ln = ln.strip()
        if ln.startswith("{"):
            try:
                return json.loads(ln)
            except ValueError:
                pass
    return None


def crash_result(k, rc, err):
    tail = [ln for ln in (err or "").splitlines() if ln.strip()]
    msg = describe_rc(rc)
    if tail:
        msg += ": " + tail[-1].strip()[:300]
    status = "timeout" if rc is None else "crash" if rc < 0 else "error"
    return {"size": k, "status": status, "error": msg}


def common_worker_args(args, entry_path, model_path, k):
    return [
        "--json", entry_path, "--model", model_path, "--size", str(k),
        "--budget", str(args.budget), "--min-reps", str(args.min_reps), "--max-reps", str(args.max_reps),
    ]


def specialize(model_path, entry, k, out_path):
    """Write MODEL with its graph inputs' dims fixed to size k's shapes."""
    import onnx

    m = onnx.load(model_path)
    shapes = entry["sizes"][k]["shapes"]
    for vi in m.graph.input:
        if vi.name not in shapes:
            continue
        dims = vi.type.tensor_type.shape.dim
        want = shapes[vi.name]
        if len(dims) != len(want):
            del dims[:]
            for _ in want:
                dims.add()
        for d, n in zip(dims, want):
            d.Clear()
            d.dim_value = int(n)
    onnx.save(m, out_path)


def run_static(args, corpus_dir, entry, work, k):
    """Compile size k with its input dims fixed, call it once and time it."""
    name = entry["name"]
    model_path = os.path.join(corpus_dir, entry["file"])
    entry_path = os.path.join(corpus_dir, f"{name}.json")
    sname = f"{name}_s{k}"
    spath = os.path.join(work, sname + ".onnx")
    lib = os.path.join(work, f"lib{sname}.so")
    if os.path.exists(lib):
        os.remove(lib)
    specialize(model_path, entry, k, spath)
    t0 = time.perf_counter()
    rc, out, err = run_child([args.onnxc, "compile", spath, "--emit", "lib", "-o", lib] + args.compile_arg, args.compile_timeout)
    res = {"compile_s": round(time.perf_counter() - t0, 2)}
    if rc != 0 or not os.path.exists(lib):
        res.update(compiled=False, status="no-compile", error=first_error_line(err + out, rc) if rc is not None else "compile timeout")
        return res
    res["compiled"] = True
    wcmd = [sys.executable, os.path.abspath(__file__), "--worker", "lib", "--lib", lib, "--prefix", c_prefix(sname)]
    wcmd += common_worker_args(args, entry_path, model_path, k)
    if args.no_time:
        wcmd.append("--no-time")
    rc, out, err = run_child(wcmd, args.call_timeout)
    w = last_json(out)
    if rc != 0 or w is None:
        w = crash_result(k, rc, err)
    w.pop("size", None)
    res.update(w)
    dyn_lib = os.path.join(work, f"lib{name}.so")
    if args.time and args.threads <= 1 and res.get("status") == "match" and os.path.exists(dyn_lib):
        pcmd = [sys.executable, os.path.abspath(__file__), "--worker", "pair", "--lib", dyn_lib, "--prefix", c_prefix(name),
                "--lib2", lib, "--prefix2", c_prefix(sname)] + common_worker_args(args, entry_path, model_path, k)
        rc, out, err = run_child(pcmd, args.call_timeout)
        res["paired"] = last_json(out) if rc == 0 else {"error": (err or "").strip()[-300:]}
    if not args.keep:
        for p in (spath, lib, os.path.join(work, sname + ".h")):
            if os.path.exists(p):
                os.remove(p)
    return res


def run_model_lib(args, corpus_dir, entry, work):
    name = entry["name"]
    model_path = os.path.join(corpus_dir, entry["file"])
    entry_path = os.path.join(corpus_dir, f"{name}.json")
    lib = os.path.join(work, f"lib{name}.so")
    for stale in (lib, os.path.join(work, f"{name}.h")):
        if os.path.exists(stale):
            os.remove(stale)
    cmd = [args.onnxc, "compile", model_path, "--emit", "lib", "-o", lib] + args.compile_arg
    t0 = time.perf_counter()
    rc, out, err = run_child(cmd, args.compile_timeout)
    r = {"compile_s": round(time.perf_counter() - t0, 2), "compile_cmd": " ".join(cmd)}
    if rc != 0 or not os.path.exists(lib):
        r.update(compiled=False, error=first_error_line(err + out, rc) if rc is not None else f"compile timeout after {args.compile_timeout} s", sizes=[])
        r["compile_stderr_tail"] = (err or "")[-2000:]
        return r
    r["compiled"] = True
    warn = [ln for ln in err.splitlines() if ln.lower().startswith("warning")]
    if warn:
        r["warnings"] = warn[:20]
    r["sizes"] = []
    for k in range(len(entry["sizes"])):
        wcmd = [sys.executable, os.path.abspath(__file__), "--worker", "lib", "--lib", lib, "--prefix", c_prefix(name)]
        wcmd += common_worker_args(args, entry_path, model_path, k)
        if args.no_time:
            wcmd.append("--no-time")
        rc, out, err = run_child(wcmd, args.call_timeout)
        res = last_json(out)
        if rc != 0 or res is None:
            res = crash_result(k, rc, err)
        elif args.time and args.threads > 1:
            # With threads each side runs in a process of its own: one's
            # spinning workers would slow the other's calls.
            wcmd = [sys.executable, os.path.abspath(__file__), "--worker", "ort"] + common_worker_args(args, entry_path, model_path, k)
            t = last_json(run_child(wcmd, args.call_timeout)[1])
            res["ort_ms"] = t["ort_ms"] if t else None
        r["sizes"].append(res)
    return r


def with_versus(args, corpus_dir, entry, work, r):
    """--versus-arg / --versus-onnxc: the model compiled again with those
    arguments instead of --compile-arg (e.g. the native build against the
    portable default), or by another onnxc binary (a branch against main),
    checked at every size and, where both match, timed against the first
    library alternately in one process (`versus` per size: its result, its
    time and the median per-round ratio first / versus)."""
    name = entry["name"]
    model_path = os.path.join(corpus_dir, entry["file"])
    entry_path = os.path.join(corpus_dir, f"{name}.json")
    vname = f"{name}_vs"
    lib = os.path.join(work, f"lib{vname}.so")
    vpath = os.path.join(work, vname + ".onnx")
    if os.path.lexists(vpath):
        os.remove(vpath)
    os.symlink(os.path.abspath(model_path), vpath)
    vargs = args.versus_arg if args.versus_arg else args.compile_arg
    rc, out, err = run_child([args.versus_onnxc or args.onnxc, "compile", vpath, "--emit", "lib", "-o", lib] + vargs, args.compile_timeout)
    for k, size in enumerate(r["sizes"]):
        if rc != 0 or not os.path.exists(lib):
            size["versus"] = {"status": "no-compile", "error": first_error_line(err + out, rc)}
            continue
        wcmd = [sys.executable, os.path.abspath(__file__), "--worker", "lib", "--lib", lib, "--prefix", c_prefix(vname),
                "--no-time"] + common_worker_args(args, entry_path, model_path, k)
        w = last_json(run_child(wcmd, args.call_timeout)[1]) or {"status": "crash"}
        res = {"status": w.get("status")}
        if args.time and args.threads <= 1 and res["status"] == "match" and size.get("status") == "match":
            pcmd = [sys.executable, os.path.abspath(__file__), "--worker", "pair", "--lib", os.path.join(work, f"lib{name}.so"),
                    "--prefix", c_prefix(name), "--lib2", lib, "--prefix2", c_prefix(vname)] + common_worker_args(args, entry_path, model_path, k)
            p = last_json(run_child(pcmd, args.call_timeout)[1]) or {}
            res.update(main_ms=p.get("dynamic_ms"), versus_ms=p.get("static_ms"), ratio=p.get("ratio"))
        size["versus"] = res
    return r


def with_static(args, corpus_dir, entry, work, r):
    """--static: add each size's specialized compile to the result."""
    for k in range(len(entry["sizes"])):
        st = run_static(args, corpus_dir, entry, work, k)
        if k < len(r["sizes"]):
            r["sizes"][k]["static"] = st
        else:
            r["sizes"].append({"size": k, "status": "no-compile", "static": st})
    return r


def write_pb(path, array, name):
    from onnx import numpy_helper

    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def run_model_run(args, corpus_dir, entry, work):
    import numpy as np
    from onnx import numpy_helper

    name = entry["name"]
    model_path = os.path.join(corpus_dir, entry["file"])
    entry_path = os.path.join(corpus_dir, f"{name}.json")
    r = {"compiled": True, "sizes": [], "compile_s": None}
    errors = []
    for k in range(len(entry["sizes"])):
        d = os.path.join(work, f"{name}.run{k}")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "out"))
        ins, wants = load_size(np, corpus_dir, entry, k)
        cmd = [args.onnxc, "run", model_path]
        for i, (spec, a) in enumerate(zip(entry["inputs"], ins)):
            p = os.path.join(d, f"input_{i}.pb")
            write_pb(p, a, spec["name"])
            cmd += ["--input", p]
        cmd += ["--output-dir", os.path.join(d, "out")]
        if not args.no_time:
            cmd += ["--repeat", str(args.run_repeat)]
        t0 = time.perf_counter()
        rc, out, err = run_child(cmd, args.compile_timeout + args.call_timeout)
        wall = time.perf_counter() - t0
        res = {"size": k, "wall_s": round(wall, 2)}
        if rc != 0:
            res.update(status="crash" if rc is not None and rc < 0 else "error", error=first_error_line(err + out, rc))
            errors.append(res["error"])
            r["sizes"].append(res)
            continue
        got = []
        for i in range(len(entry["outputs"])):
            p = os.path.join(d, "out", f"output_{i}.pb")
            if os.path.exists(p):
                from onnx import TensorProto

                t = TensorProto()
                t.ParseFromString(open(p, "rb").read())
                got.append(numpy_helper.to_array(t))
        all_ok = len(got) == len(wants)
        worst = 0.0
        per_out = []
        for o, g, w in zip(entry["outputs"], got, wants):
            ok, mad, note = compare(np, g, w, entry.get("atol", ATOL))
            all_ok &= ok
            if mad is not None:
                worst = max(worst, mad) if not math.isnan(mad) else mad
            per_out.append({"name": o["name"], "ok": ok, "max_abs_diff": mad, "note": note})
        res.update(status="match" if all_ok else "mismatch", max_abs_diff=worst, outputs=per_out)
        m = re.search(r"median ([0-9.]+) ms", err + out)
        if m:
            res["onnxc_ms"] = float(m.group(1))
        if not args.no_time:
            wcmd = [sys.executable, os.path.abspath(__file__), "--worker", "ort"] + common_worker_args(args, entry_path, model_path, k)
            rc2, out2, _ = run_child(wcmd, args.call_timeout)
            t = last_json(out2)
            if t:
                res["ort_ms"] = t["ort_ms"]
        r["sizes"].append(res)
    if errors and len(errors) == len(entry["sizes"]):
        r["compiled"] = False
        r["error"] = errors[0]
    elif errors:
        r["error"] = errors[0]
    return r


def load_corpus(dirs, pattern):
    models = []
    failed_exports = []
    for d in dirs:
        if not os.path.isdir(d):
            print(f"run.py: no corpus directory {d}", file=sys.stderr)
            continue
        man = os.path.join(d, "manifest.json")
        if os.path.exists(man):
            for m in json.load(open(man)).get("models", []):
                if m.get("status") != "ok" and (not pattern or re.search(pattern, m["name"])):
                    failed_exports.append((d, m))
        for fn in sorted(os.listdir(d)):
            if not fn.endswith(".json") or fn == "manifest.json":
                continue
            try:
                e = json.load(open(os.path.join(d, fn)))
            except ValueError:
                continue
            if "sizes" not in e or "file" not in e:
                continue
            if pattern and not re.search(pattern, e["name"]):
                continue
            models.append((d, e))
    return models, failed_exports


def size_cell(s):
    st = s.get("status")
    if st == "match":
        return f"ok ({s['max_abs_diff']:.1e})"
    if st == "mismatch":
        notes = [o["note"] for o in s.get("outputs", []) if o.get("note")]
        if notes:
            return "DIFF " + notes[0]
        mad = s.get("max_abs_diff")
        return f"DIFF {mad:.2g}" if isinstance(mad, float) else "DIFF"
    return (st or "error").upper()


def fmt_ms(x):
    if x is None:
        return "-"
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def dynamic_over_static(s):
    """A size's time ratio, dynamic-dims library over the specialized one:
    the paired measurement (one process, alternating) when there is one."""
    p = s.get("static", {}).get("paired") or {}
    if p.get("ratio"):
        return p["ratio"]
    if s.get("onnxc_ms") and s.get("static", {}).get("onnxc_ms"):
        return s["onnxc_ms"] / s["static"]["onnxc_ms"]
    return None


def summarize(results):
    n = len(results)
    compiled = [r for r in results if r.get("compiled")]
    all_match = [r for r in compiled if r["sizes"] and all(s.get("status") == "match" for s in r["sizes"])]
    crashes = [r for r in compiled if any(s.get("status") in ("crash", "timeout") for s in r["sizes"])]
    ratios = []
    for r in all_match:
        for s in r["sizes"]:
            if s.get("onnxc_ms") and s.get("ort_ms"):
                ratios.append(s["onnxc_ms"] / s["ort_ms"])
    geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios)) if ratios else None
    extra = {}
    st = [r for r in results if any("static" in s for s in r.get("sizes", []))]
    if st:
        extra["static_compiled_all_sizes"] = sum(1 for r in st if all(s.get("static", {}).get("compiled") for s in r["sizes"]))
        extra["static_match_all_sizes"] = sum(1 for r in st if all(s.get("static", {}).get("status") == "match" for s in r["sizes"]))
        dyn_st = [x for r in all_match for x in map(dynamic_over_static, r["sizes"]) if x]
        if dyn_st:
            extra["geomean_dynamic_over_static"] = round(math.exp(sum(math.log(x) for x in dyn_st) / len(dyn_st)), 3)
            extra["dynamic_over_static_max"] = round(max(dyn_st), 3)
            extra["dynamic_over_static_above_1_15"] = sum(1 for x in dyn_st if x > 1.15)
        st_ort = [s["static"]["onnxc_ms"] / s["static"]["ort_ms"] for r in st for s in r["sizes"]
                  if s.get("static", {}).get("status") == "match" and s["static"].get("onnxc_ms") and s["static"].get("ort_ms")]
        if st_ort:
            extra["geomean_static_over_ort"] = round(math.exp(sum(math.log(x) for x in st_ort) / len(st_ort)), 3)
    vs = [s["versus"]["ratio"] for r in results for s in r.get("sizes", []) if s.get("versus", {}).get("ratio")]
    if vs:
        extra["geomean_main_over_versus"] = round(math.exp(sum(math.log(x) for x in vs) / len(vs)), 3)
        extra["main_over_versus_max"] = round(max(vs), 3)
    if any("versus" in s for r in results for s in r.get("sizes", [])):
        extra["versus_match"] = sum(1 for r in results for s in r.get("sizes", []) if s.get("versus", {}).get("status") == "match")
    return {
        "models": n,
        "compiled": len(compiled),
        "match_all_sizes": len(all_match),
        "crash_or_timeout": len(crashes),
        "not_exported": sum(1 for r in results if r.get("not_exported")),
        "geomean_onnxc_over_ort": round(geo, 3) if geo else None,
        "ratio_count": len(ratios),
        **extra,
    }


def print_table(results, out=sys.stdout):
    static = any("static" in sz for r in results for sz in r.get("sizes", []))
    versus = any("versus" in sz for r in results for sz in r.get("sizes", []))
    hdr = f"{'model':26} {'compile':8} {'size':>4} {'result':22} {'onnxc ms':>9} {'ort ms':>9} {'ratio':>7}"
    if static:
        hdr += f"  {'static result':22} {'static ms':>9} {'dyn/st':>6}"
    if versus:
        hdr += f"  {'versus':8} {'main ms':>9} {'vs ms':>9} {'main/vs':>7}"
    hdr += "  error"
    print(hdr, file=out)
    print("-" * len(hdr), file=out)
    for r in results:
        err = (r.get("error") or "")[:110]
        if not r.get("compiled") and not any("static" in sz for sz in r.get("sizes", [])):
            tag = "no-export" if r.get("not_exported") else "FAIL"
            print(f"{r['model']:26} {tag:8} {'':>4} {'':22} {'':>9} {'':>9} {'':>7}  {err}", file=out)
            continue
        for i, s in enumerate(r["sizes"]):
            ox, ort = s.get("onnxc_ms"), s.get("ort_ms")
            ratio = f"{ox / ort:.2f}x" if ox and ort else "-"
            serr = s.get("error", "") if s.get("status") not in ("match", "mismatch") else ""
            if not r.get("compiled"):
                serr = err
            tag = ("ok" if r.get("compiled") else "FAIL") if i == 0 else ""
            line = f"{r['model'] if i == 0 else '':26} {tag:8} {i:>4} {size_cell(s)[:22] if r.get('compiled') else '':22} {fmt_ms(ox):>9} {fmt_ms(ort):>9} {ratio:>7}"
            if static:
                st = s.get("static", {})
                ds = dynamic_over_static(s)
                line += f"  {size_cell(st)[:22] if st.get('compiled') else ('NO-COMPILE' if st else ''):22} {fmt_ms(st.get('onnxc_ms')):>9}"
                line += f" {f'{ds:.2f}' if ds else '-':>6}"
                if not st.get("compiled") and st.get("error") and not serr:
                    serr = "static: " + st["error"]
            if versus:
                v = s.get("versus", {})
                line += f"  {v.get('status') or '':8} {fmt_ms(v.get('main_ms')):>9} {fmt_ms(v.get('versus_ms')):>9}"
                line += f" {v['ratio'] if v.get('ratio') else '-':>7}"
            print(line + f"  {serr[:110]}", file=out)


def md_escape(s):
    return (s or "").replace("|", "\\|").replace("\n", " ")


def short_source(e, r):
    exp = e.get("exporter") or r.get("exporter") or ""
    for long, short in (("torch.onnx.export (TorchScript)", "torch.onnx"), ("torch.onnx.export (dynamo=True)", "torch.onnx dynamo"),
                        ("tf2onnx.convert.from_function", "tf2onnx"), ("paddle.onnx.export (paddle2onnx)", "paddle2onnx"),
                        ("skl2onnx.to_onnx", "skl2onnx"), ("ultralytics export(format='onnx', dynamic=True)", "ultralytics"),
                        ("ci_models.py", "onnx.helper")):
        exp = exp.replace(long, short)
    return exp


def dims_text(e):
    out = []
    for i in e.get("inputs", []):
        if i["name"] not in e.get("dynamic_inputs", []):
            continue
        dims = ", ".join("?" if d is None else str(d) for d in (i.get("dims") or ["*"]))
        out.append(f"{i['name']} [{dims}]")
    return "; ".join(out)


def sizes_text(e):
    """The first dynamic input's shape at each size."""
    dyn = e.get("dynamic_inputs") or [i["name"] for i in e.get("inputs", [])][:1]
    if not dyn:
        return ""
    return " · ".join("×".join(str(d) for d in s["shapes"].get(dyn[0], [])) for s in e.get("sizes", []))


def write_md(path, results, summary, meta):
    """Markdown: the summary and one row per model (sizes joined by ' · ')."""
    L = [f"Run {meta['date']}: `{os.path.basename(meta['onnxc'])}` `{meta['emit']}`, host load {meta['load']}, "
         f"rtol {meta['rtol']}, atol {meta['atol']}; times are medians per call, {meta.get('threads', 1)} thread(s) on each side, ms.", ""]
    L += ["| | models |", "|---|---|"]
    labels = {
        "models": "in the corpus",
        "not_exported": "not exported",
        "compiled": "compile with their dynamic dims",
        "match_all_sizes": "... and match onnxruntime at every size",
        "crash_or_timeout": "crash or time out at run time",
        "static_compiled_all_sizes": "compile with the dims fixed to each size (static)",
        "static_match_all_sizes": "... and match at every size (static)",
        "dynamic_over_static_max": "largest time ratio dynamic / static (paired)",
        "dynamic_over_static_above_1_15": "sizes with dynamic / static above 1.15 (paired)",
    }
    for k, lab in labels.items():
        if k in summary:
            L.append(f"| {lab} | {summary[k]} |")
    for k, lab in (("geomean_onnxc_over_ort", "geomean time onnxc (dynamic) / onnxruntime"),
                   ("geomean_dynamic_over_static", "geomean time dynamic / static library"),
                   ("geomean_static_over_ort", "geomean time onnxc (static) / onnxruntime")):
        if summary.get(k):
            L.append(f"| {lab} | {summary[k]}x |")
    static = any("static" in sz for r in results for sz in r.get("sizes", []))
    L.append("")
    head = "| model | exporter | opset | dynamic inputs | sizes | dynamic: compiles | matches ORT | onnxc ms | ORT ms |"
    sep = "|---|---|---|---|---|---|---|---|---|"
    if static:
        head += " static: matches | static ms | dynamic / static (paired) |"
        sep += "---|---|---|"
    L += [head + " first error line |", sep + "---|"]
    for r in results:
        e = r.get("entry") or {}
        sizes = r.get("sizes", [])
        row = f"| {r['model']} | {md_escape(short_source(e, r))} | {e.get('opset') or ''} | {md_escape(dims_text(e))} | {sizes_text(e)} |"
        if r.get("not_exported"):
            L.append(row + " not exported | | | |" + (" | | |" if static else "") + f" {md_escape(r.get('error'))} |")
            continue
        if r.get("compiled"):
            res = " · ".join("ok" if x.get("status") == "match" else size_cell(x) for x in sizes)
            row += f" yes | {md_escape(res)} | {' · '.join(fmt_ms(x.get('onnxc_ms')) for x in sizes)} | {' · '.join(fmt_ms(x.get('ort_ms')) for x in sizes)} |"
        else:
            row += " **no** | | | |"
        err = r.get("error") or next((x.get("error") for x in sizes if x.get("error")), "")
        if static:
            sts = [x.get("static", {}) for x in sizes]
            if all(not st.get("compiled") for st in sts):
                row += " no compile | | |"
                err = err or next((st.get("error") for st in sts if st.get("error")), "")
            else:
                row += f" {md_escape(' · '.join('ok' if st.get('status') == 'match' else size_cell(st) if st.get('compiled') else 'no compile' for st in sts))} |"
                row += f" {' · '.join(fmt_ms(st.get('onnxc_ms')) for st in sts)} |"
                ratios = [dynamic_over_static(x) for x in sizes]
                row += f" {' · '.join(f'{x:.2f}' if x else '-' for x in ratios)} |"
        L.append(row + f" {md_escape(err)} |")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


def main():
    ap = argparse.ArgumentParser(description="Run the corpus through onnxc and compare with onnxruntime.")
    ap.add_argument("--corpus", action="append", help="corpus directory (repeatable); default $ONNXC_CORPUS or target/corpus")
    ap.add_argument("--onnxc", default=os.environ.get("ONNXC"), help="the onnxc binary (default $ONNXC, then target/release, target/debug)")
    ap.add_argument("--emit", choices=["lib", "run"], default="lib")
    ap.add_argument("--work", default=None, help="where libraries and scratch go (default target/corpus-run/EMIT)")
    ap.add_argument("--filter", help="regex on model names")
    ap.add_argument("--json", help="write results here (default WORK/results.json)")
    ap.add_argument("--md", help="write Markdown tables here")
    ap.add_argument("--no-time", action="store_true", help="correctness only")
    ap.add_argument("--budget", type=float, default=2.0, help="seconds of timing per size and side (default 2)")
    ap.add_argument("--min-reps", type=int, default=3)
    ap.add_argument("--max-reps", type=int, default=15)
    ap.add_argument("--run-repeat", type=int, default=5, help="--repeat for onnxc run (--emit run)")
    ap.add_argument("--static", action="store_true",
                    help="also compile each size with the input dims fixed to it (--emit lib only): the static baseline")
    ap.add_argument("--keep", action="store_true", help="keep the specialized models and libraries of --static")
    ap.add_argument("--compile-timeout", type=float, default=1800)
    ap.add_argument("--compile-arg", action="append", default=[], metavar="ARG",
                    help="extra argument of every `onnxc compile` (repeatable), e.g. --compile-arg=--target-cpu=native")
    ap.add_argument("--versus-arg", action="append", default=[], metavar="ARG",
                    help="also compile each model with these `onnxc compile` arguments instead of --compile-arg (repeatable), "
                         "check it, and time the first library against it alternately, e.g. --versus-arg=--target-cpu=native")
    ap.add_argument("--versus-onnxc", metavar="BIN",
                    help="also compile each model with this onnxc binary (and --versus-arg, else --compile-arg), check it, "
                         "and time the first library against it alternately: a change against main")
    ap.add_argument("--call-timeout", type=float, default=900, help="per size child process")
    ap.add_argument("--threads", type=int, default=1,
                    help="threads of the compiled code (ONNXC_NUM_THREADS) and of onnxruntime (intra-op), the same on both sides; "
                         "above 1 each side is timed in a process of its own (default 1)")
    # internal: child processes
    ap.add_argument("--worker", choices=["lib", "ort", "pair"], help=argparse.SUPPRESS)
    ap.add_argument("--lib", help=argparse.SUPPRESS)
    ap.add_argument("--prefix", help=argparse.SUPPRESS)
    ap.add_argument("--lib2", help=argparse.SUPPRESS)
    ap.add_argument("--prefix2", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.time = not args.no_time
    if args.static and args.emit != "lib":
        ap.error("--static needs --emit lib")

    n = str(max(args.threads, 1))
    WORKER_ENV.update(OMP_NUM_THREADS=n, ONNXC_NUM_THREADS=n, ONNXC_CORPUS_THREADS=n)
    if args.worker == "lib":
        return worker_lib(args)
    if args.worker == "ort":
        return worker_ort(args)
    if args.worker == "pair":
        return worker_pair(args)

    if not args.onnxc:
        for cand in ("target/release/onnxc", "target/debug/onnxc"):
            if os.path.exists(cand):
                args.onnxc = cand
                break
    if not args.onnxc or not os.path.exists(args.onnxc):
        print("run.py: no onnxc binary: pass --onnxc or set ONNXC", file=sys.stderr)
        return 2
    args.onnxc = os.path.abspath(args.onnxc)
    dirs = args.corpus or [os.environ.get("ONNXC_CORPUS", "target/corpus")]
    work = os.path.abspath(args.work or os.path.join("target", "corpus-run", args.emit))
    os.makedirs(work, exist_ok=True)
    models, failed_exports = load_corpus(dirs, args.filter)
    if not models and not failed_exports:
        print(f"run.py: no models in {dirs}", file=sys.stderr)
        return 2

    results = []
    for d, m in failed_exports:
        results.append({"model": m["name"], "corpus": d, "compiled": False, "not_exported": True, "error": m.get("error", ""),
                        "source": m.get("source", ""), "exporter": m.get("exporter", ""), "sizes": []})
    for d, e in models:
        t0 = time.perf_counter()
        print(f"-- {e['name']} ({e['source']}, opset {e.get('opset')}) ...", file=sys.stderr, flush=True)
        try:
            r = (run_model_lib if args.emit == "lib" else run_model_run)(args, d, e, work)
            if args.static:
                r = with_static(args, d, e, work, r)
            if (args.versus_arg or args.versus_onnxc) and r.get("compiled"):
                r = with_versus(args, d, e, work, r)
        except Exception as ex:  # a driver bug on one model must not lose the rest
            r = {"compiled": False, "error": f"run.py: {type(ex).__name__}: {ex}", "sizes": []}
        r = {"model": e["name"], "corpus": os.path.abspath(d), **r}
        r["entry"] = {k: e.get(k) for k in ("source", "exporter", "exporter_version", "opset", "opsets", "inputs", "outputs", "dynamic_inputs", "nodes", "file_bytes")}
        r["entry"]["sizes"] = [{"shapes": s["shapes"]} for s in e["sizes"]]
        r["wall_s"] = round(time.perf_counter() - t0, 1)
        status = "compile FAIL: " + (r.get("error") or "")[:100] if not r.get("compiled") else " ".join(size_cell(s) for s in r["sizes"])
        print(f"   {status}  [{r['wall_s']} s]", file=sys.stderr, flush=True)
        results.append(r)

    summary = summarize(results)
    try:
        load = open("/proc/loadavg").read().split()[0]
    except OSError:
        load = "?"
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "onnxc": args.onnxc,
        "emit": args.emit,
        "host": os.uname().nodename,
        "load": load,
        "threads": max(args.threads, 1),
        "rtol": RTOL,
        "atol": ATOL,
        "corpus": [os.path.abspath(d) for d in dirs],
    }
    print()
    print_table(results)
    print()
    print("summary: " + ", ".join(f"{k} {v}" for k, v in summary.items()))
    out_json = args.json or os.path.join(work, "results.json")
    with open(out_json, "w") as f:
        json.dump({"meta": meta, "summary": summary, "results": results}, f, indent=1)
        f.write("\n")
    print(f"results: {out_json}")
    if args.md:
        write_md(args.md, results, summary, meta)
        print(f"markdown: {args.md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
