#!/usr/bin/env python3
"""Shape fuzzer: run models at random sizes on every dynamic dim and compare
onnxc with onnxruntime (issue "Sound at every size", item 7).

    python3 scripts/shape_fuzz.py --corpus DIR [--corpus DIR ...]
        [--node-tests DIR ...] [--onnxc PATH] [--work DIR] [--seed N]
        [--cases N] [--case K] [--filter REGEX] [--mode ci|long]
        [--valgrind-max-elems N] [--valgrind-cases N] [--json OUT]

Per model (a corpus entry NAME.onnx / NAME.json / NAME.size{k}.npz as
scripts/corpus/corpus_common.py writes them, or an ONNX backend node test
whose graph inputs have a dynamic dim):
  * `onnxc compile --emit lib` once with the declared dynamic dims (a
    diagnostic is "refused", not a failure; a signal or panic is) and
    `onnxc fold` once (any failure is a failure);
  * per case, a size for every dynamic dim symbol (a dim_param is one symbol
    for every input that names it; each -1 / 0 / missing dim is its own),
    from numpy.random.default_rng([seed, crc32(model name), case]): case 0
    sets every symbol to 1, case 1 sets one symbol to 0, the others draw
    1 .. 2x the largest saved size of each symbol, now and then 1 or the
    size of another symbol (inputs capped at ~200k elements). Float inputs
    normal(0, 1); integer inputs uniform within a saved input's min..max
    (size 0's at case 0, then each saved size in turn: token ids stay in
    range, a sample-rate flag takes each saved value); bools random. Then,
    in a child process (a segfault, of onnxc's code or of onnxruntime's, is
    recorded, not fatal):
      a. the original model in onnxruntime (1 thread, no graph
         optimizations); if it raises or crashes, the case is skipped;
      b. the folded model in onnxruntime, and its value_info checked: the
         folded model with every value_info entry as an extra output, run
         once, must give one size per dim_param (onnxruntime reuses
         buffers on that promise) and the declared static dims;
      c. the compiled library through its C API;
      d. small cases (inputs <= --valgrind-max-elems elements): `onnxc run
         --valgrind`, its outputs compared too.
Outputs are compared with run.py's `compare` (rtol 1e-3, atol 1e-4 unless
the corpus entry sets its own atol, 1e-2 for PROBIT outputs; shapes must
match exactly; equal infinities match).

Prints one line per model and a summary; --json writes every case. Exit
status 1 if anything failed, 0 if not, 2 on a usage error. A failure is
reproduced with `--filter '^NAME$' --case K` and the same --seed.
"""

import argparse
import concurrent.futures
import json
import math
import os
import re
import shutil
import sys
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus"))
from corpus_common import ATOL, ELEM_DTYPES, describe_value, zipmap_tensors  # noqa: E402
from run import (  # noqa: E402
    CModel,
    c_prefix,
    compare,
    describe_rc,
    first_error_line,
    load_corpus,
    load_size,
    run_child,
    write_pb,
)

# Inputs of one case stay under this many elements (debug builds, 2 cores).
MAX_ELEMS = 200_000
MODES = {
    # ci: 18 CI models x 4 cases, two valgrind runs each, in about a minute.
    "ci": {"cases": 4, "valgrind_cases": 2},
    # long: > 2,000 cases over the CI corpus alone (some sizes onnxruntime
    # refuses); every small case under valgrind unless --valgrind-cases caps it.
    "long": {"cases": 128, "valgrind_cases": 0},
}
COMPILE_TIMEOUT = 1800
CALL_TIMEOUT = 600
VALGRIND_MARKS = ("Invalid read", "Invalid write", "uninitialised", "definitely lost", "indirectly lost",
                  "possibly lost", "Invalid free", "Mismatched free", "valgrind found memory errors")


# ---------------------------------------------------------------- models


def corpus_models(dirs, pattern):
    """Corpus entries as fuzzer models."""
    import numpy as np

    models = []
    for d, e in load_corpus(dirs, pattern)[0]:
        saved = [load_size(np, d, e, k)[0] for k in range(len(e["sizes"]))]
        models.append({
            "name": e["name"],
            "path": os.path.join(d, e["file"]),
            # An equivalent model onnxruntime runs on CPU (GPU-only contrib ops).
            "reference": os.path.join(d, e["reference"]) if "reference" in e else None,
            "inputs": e["inputs"],
            "outputs": [o["name"] for o in e["outputs"]],
            "output_dtypes": [o.get("dtype") for o in e["outputs"]],
            "saved_shapes": [[s["shapes"][i["name"]] for i in e["inputs"]] for s in e["sizes"]],
            "int_ranges": [int_ranges(np, s) for s in saved],
            "atols": output_atols(os.path.join(d, e["file"]), e.get("atol", ATOL)),
        })
    return models


# onnxruntime's PROBIT (an ErfInv approximation) is off by up to ~7e-3 at
# |z| ~ 3.6 where onnxc is within 1e-5 of the exact probit.
PROBIT_ATOL = 1e-2


def output_atols(path, atol):
    """Per graph output: the model's atol, PROBIT_ATOL for the outputs that
    depend on an ai.onnx.ml node with post_transform PROBIT."""
    import onnx

    g = onnx.load(path, load_external_data=False).graph
    probit = set()
    for n in g.node:  # topological order: a taint flows forward
        if set(n.input) & probit or any(a.name == "post_transform" and a.s == b"PROBIT" for a in n.attribute):
            probit.update(n.output)
    return [max(atol, PROBIT_ATOL) if o.name in probit else atol for o in g.output]


def int_ranges(np, arrays):
    """(min, max) of each saved input ((0, 0) when empty or not integer)."""
    out = []
    for a in arrays:
        a = np.asarray(a)
        ok = a.size and a.dtype.kind in "iub"
        out.append((int(a.min()), int(a.max())) if ok else (0, 0))
    return out


def node_test_model(case_dir):
    """A backend node test as a fuzzer model, or None when no graph input
    has a dynamic dim (nothing to fuzz)."""
    import onnx
    import numpy as np
    from onnx import numpy_helper

    from corpus_common import is_dynamic

    m = onnx.load(os.path.join(case_dir, "model.onnx"), load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    inputs = [describe_value(v) for v in m.graph.input if v.name not in inits]
    if not any(is_dynamic(i["dims"]) for i in inputs):
        return None
    outputs = [describe_value(o) for o in m.graph.output]
    if any(v["dtype"] is None for v in inputs + outputs):
        return None  # sequences, optionals, bfloat16, float8, int4: no numpy dtype here
    saved = []
    for k in range(len(inputs)):
        t = onnx.TensorProto()
        with open(os.path.join(case_dir, "test_data_set_0", f"input_{k}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        saved.append(numpy_helper.to_array(t))
    return {
        "name": os.path.basename(case_dir.rstrip("/")),
        "path": os.path.join(case_dir, "model.onnx"),
        "inputs": inputs,
        "outputs": [o.name for o in m.graph.output],
        "output_dtypes": [o["dtype"] for o in outputs],
        "saved_shapes": [[list(a.shape) for a in saved]],
        "int_ranges": [int_ranges(np, saved)],
        "atols": output_atols(os.path.join(case_dir, "model.onnx"), ATOL),
    }


def node_test_models(roots, pattern):
    """The node tests with a dynamic input dim and numpy element types."""
    models = []
    for root in roots:
        for case in sorted(os.listdir(root)):
            d = os.path.join(root, case)
            if pattern and not re.search(pattern, case):
                continue
            if not os.path.exists(os.path.join(d, "model.onnx")):
                continue
            try:
                m = node_test_model(d)
            except (OSError, ValueError, TypeError) as ex:  # no test data, odd tensors
                print(f"shape_fuzz: {case}: not used ({type(ex).__name__}: {ex})", file=sys.stderr)
                continue
            if m:
                models.append(m)
    return models


def unsupported(model):
    """Why the fuzzer cannot feed this model (non-tensor or sub-byte
    inputs and outputs have no numpy/ctypes form here), or None."""
    for i in model["inputs"]:
        if i.get("dtype") is None:
            return f"input '{i['name']}' of type {i.get('kind') or i.get('elem_type')}"
    for name, dtype in zip(model["outputs"], model["output_dtypes"]):
        if dtype is None:
            return f"output '{name}' of a type without a numpy dtype here"
    return None


# ---------------------------------------------------------------- sizes


def symbols_of(model):
    """Per input, each axis as an int (static) or a symbol name; and per
    symbol the sizes it had in the saved inputs."""
    axes, saved = [], {}
    for n, spec in enumerate(model["inputs"]):
        shapes = [s[n] for s in model["saved_shapes"]]
        dims = spec["dims"] if spec["dims"] is not None else [None] * len(shapes[0])
        row = []
        for a, d in enumerate(dims):
            if isinstance(d, int) and d > 0:
                row.append(d)
                continue
            sym = d if isinstance(d, str) else f"{spec['name']}[{a}]"
            row.append(sym)
            saved.setdefault(sym, []).extend(int(s[a]) for s in shapes if a < len(s))
        axes.append(row)
    return axes, saved


def tie_groups(saved):
    """Symbols that had equal sizes at every saved size (a -1 batch on two
    inputs of a paddle model): drawn together half of the time, so that not
    every case is one onnxruntime refuses."""
    groups = {}
    for sym in sorted(saved):
        groups.setdefault(tuple(saved[sym]), []).append(sym)
    return [g for g in groups.values() if len(g) > 1]


def elems(axes, values):
    return sum(math.prod(values[d] if isinstance(d, str) else d for d in row) for row in axes)


def draw(rng, saved, syms):
    """1 .. 2x the largest saved size; now and then a 1 or another
    symbol's size, so that broadcasts between different symbols happen."""
    values = {}
    for s in syms:
        r = rng.random()
        if r < 0.125:
            values[s] = 1
        elif r < 0.25 and values:
            values[s] = values[list(values)[int(rng.integers(len(values)))]]
        else:
            values[s] = int(rng.integers(1, max(2 * max(saved[s], default=1), 1), endpoint=True))
    return values


def pick_sizes(rng, axes, saved, k):
    """A size per symbol for case k: 1s at case 0, one 0 at case 1, else
    drawn; the inputs capped at MAX_ELEMS."""
    syms = sorted(saved)
    if k == 0:
        return {s: 1 for s in syms}
    values = draw(rng, saved, syms)
    tied = []
    for group in tie_groups(saved):
        if rng.random() < 0.5:
            tied.append(group)
            for s in group[1:]:
                values[s] = values[group[0]]
    # Halve the largest (all of them: ties stay ties) until the case fits.
    while elems(axes, values) > MAX_ELEMS and any(v > 1 for v in values.values()):
        top = max(values.values())
        values = {s: max(1, v // 2) if v == top else v for s, v in values.items()}
    if k == 1 and syms:
        zero = syms[int(rng.integers(len(syms)))]
        for s in next((g for g in tied if zero in g), [zero]):
            values[s] = 0
    return values


def make_inputs(rng, model, axes, values, k):
    """Random inputs of the case's shapes, in graph-input order. Integer
    inputs take the range of saved size k mod the number saved (size 0 at
    case 0), so that a flag like a sample rate takes each saved value."""
    import numpy as np

    arrays = []
    for spec, row, span in zip(model["inputs"], axes, model["int_ranges"][k % len(model["int_ranges"])]):
        shape = [values[d] if isinstance(d, str) else d for d in row]
        dtype = np.dtype(spec["dtype"])
        if dtype.kind == "f":
            a = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind == "b":
            a = rng.random(shape) < 0.5
        else:
            # Token ids, indices and the like: the saved input's range.
            a = rng.integers(span[0], span[1], size=shape, endpoint=True).astype(dtype)
        arrays.append(a)
    return arrays


# ---------------------------------------------------------------- onnxc


def compile_model(args, model, mdir):
    """(lib path or None, model-level result)."""
    name = model["name"]
    lib = os.path.join(mdir, f"lib{name}.so")
    cmd = [args.onnxc, "compile", model["path"], "--emit", "lib", "-o", lib]
    rc, out, err = run_child(cmd, COMPILE_TIMEOUT)
    if rc == 0 and os.path.exists(lib):
        return lib, {}
    line = first_error_line(err + out, rc)
    # A diagnostic (exit 1) is a refusal; a signal, a panic or a timeout is onnxc's fault.
    if rc == 1 and "panicked at" not in err:
        return None, {"refused": line}
    return None, {"failure": {"check": "compile", "what": f"{describe_rc(rc)}: {line}", "cmd": " ".join(cmd)}}


def fold_model(args, model, mdir):
    """(folded model path or None, failure or None)."""
    out_path = os.path.join(mdir, f"{model['name']}.fold.onnx")
    cmd = [args.onnxc, "fold", model["path"], "-o", out_path]
    rc, out, err = run_child(cmd, COMPILE_TIMEOUT)
    if rc == 0 and os.path.exists(out_path):
        return out_path, None
    return None, {"check": "fold", "what": f"{describe_rc(rc)}: {first_error_line(err + out, rc)}", "cmd": " ".join(cmd)}


def with_value_info_outputs(folded_path, out_path, original_path):
    """The folded model with every top-level value_info entry also a graph
    output, so that a run shows each value's runtime shape. Returns the
    declared dims {value name: dims} of inputs, outputs and value_info,
    but not an output's that the original model declared the same (its
    promise, kept: an output whose rank is known only at run time keeps
    the declared one)."""
    import onnx

    from corpus_common import dims_of

    m = onnx.load(folded_path)
    g = m.graph
    produced = {o for n in g.node for o in n.output}
    outputs = {o.name for o in g.output}
    for vi in g.value_info:
        if vi.type.HasField("tensor_type") and vi.name in produced and vi.name not in outputs:
            g.output.append(vi)
            outputs.add(vi.name)
    onnx.save(m, out_path)
    o = onnx.load(original_path, load_external_data=False).graph
    theirs = {vi.name: dims_of(vi) for vi in o.output}
    declared = {}
    for vi in list(g.input) + list(g.output):
        dims = dims_of(vi)
        if dims is not None and theirs.get(vi.name) != dims:
            declared[vi.name] = dims
    return declared


def value_info_violations(declared, runtime):
    """Promises of the folded model's shapes that this run breaks: a
    dim_param naming two sizes, a static dim or a rank that differs."""
    first = {}
    bad = []
    for name in sorted(runtime):
        shape = runtime[name]
        dims = declared.get(name)
        if dims is None:
            continue
        if len(dims) != len(shape):
            bad.append(f"'{name}' declared rank {len(dims)} {dims}, runs at shape {list(shape)}")
            continue
        for a, (d, n) in enumerate(zip(dims, shape)):
            if isinstance(d, int) and d > 0 and d != n:
                bad.append(f"'{name}' dim {a} declared {d}, runs at {n}")
            elif isinstance(d, str):
                seen = first.setdefault(d, (name, a, n))
                if seen[2] != n:
                    bad.append(f"dim_param '{d}': '{seen[0]}' dim {seen[1]} = {seen[2]} but '{name}' dim {a} = {n}")
    return bad


# ---------------------------------------------------------------- checks


def same_infinities(np, g, w):
    """g and w with the places where both are the same value zeroed: run.py's
    `compare` takes -inf vs -inf (a max over nothing) for a NaN difference."""
    g, w = np.asarray(g), np.asarray(w)
    if g.shape != w.shape or w.dtype.kind not in "fc" or g.dtype.kind not in "fc":
        return g, w
    same = np.isinf(w) & (g == w)
    return np.where(same, 0, g).astype(g.dtype), np.where(same, 0, w).astype(w.dtype)


def compare_outputs(got, want, model):
    """(ok, worst max abs diff, what differs) over every output."""
    import numpy as np

    names, atols = model["outputs"], model["atols"]
    if len(got) != len(want):
        return False, None, f"{len(got)} outputs, onnxruntime has {len(want)}"
    worst, what = 0.0, ""
    for i, (g, w) in enumerate(zip(got, want)):
        with np.errstate(all="ignore"):
            ok, mad, note = compare(np, *same_infinities(np, g, w), atols[i] if i < len(atols) else ATOL)
        if mad is not None and not (isinstance(worst, float) and math.isnan(worst)):
            worst = mad if math.isnan(mad) else max(worst, mad)
        if not ok and not what:
            label = names[i] if i < len(names) else str(i)
            what = f"output {i} '{label}': " + (note or f"max abs diff {mad:.3g}")
    return not what, worst, what


def result(check, ok, mad=None, what="", **extra):
    """One check's record in the case's JSON."""
    return {"check": check, "ok": ok, "what": what, "max_abs_diff": mad, **extra}


def load_outputs(cdir, stage):
    import numpy as np

    with np.load(os.path.join(cdir, f"{stage}.npz")) as z:
        return [z[f"out{i}"] for i in range(len(z.files))]


def lib_check(ctx, cdir, done, died, want):
    """The compiled library's outputs against onnxruntime's."""
    d = done.get("lib")
    if d is None:
        return result("lib", False, None, died or "the child process printed nothing")
    if not d["ok"]:
        return result("lib", False, None, d["error"])
    return result("lib", *compare_outputs(load_outputs(cdir, "lib"), want, ctx["model"]))


def fold_checks(ctx, cdir, done, died, want):
    """The folded model's outputs, then its value_info promises."""
    f = done.get("fold")
    if f is None:
        return [result("fold", False, None, f"onnxruntime crashes on the folded model: {died}")]
    if f["ok"]:
        checks = [result("fold", *compare_outputs(load_outputs(cdir, "fold"), want, ctx["model"]))]
    else:
        checks = [result("fold", False, None, "the folded model fails in onnxruntime: " + f["error"])]
    v = done.get("vi")
    if v is None or not v["ok"]:
        why = v["error"] if v else f"onnxruntime crashes: {died}"
        return checks + [result("value_info", False, None, "the run with value_info outputs fails: " + why)]
    bad = value_info_violations(ctx["declared"], v["shapes"])
    more = f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""
    return checks + [result("value_info", not bad, None, "; ".join(bad[:3]) + more, values=len(v["shapes"]))]


# ---------------------------------------------------------------- child process


def emit(**rec):
    print(json.dumps(rec), flush=True)


def worker(cdir, stages):
    """Child process, one case: onnxruntime on the original model, on the
    folded one and on that with its value_info as outputs, then the
    compiled library through its C API. Each stage saves its outputs in
    CDIR and prints a JSON line, so that the parent knows which stage a
    crash belongs to (onnxruntime's too: its GRU aborts at T = 0)."""
    import numpy as np

    spec = json.load(open(os.path.join(cdir, "case.json")))
    with np.load(os.path.join(cdir, "inputs.npz")) as z:
        arrays = [z[f"in{i}"] for i in range(len(spec["names"]))]
    feeds = dict(zip(spec["names"], arrays))
    if "ort" in stages and not ort_stage(np, cdir, "ort", spec["model"], feeds):
        return 0
    if "fold" in stages and spec["fold"]:
        ort_stage(np, cdir, "fold", spec["fold"], feeds)
        ort_stage(np, cdir, "vi", spec["vi"], feeds)
    if "lib" in stages and spec["lib"]:
        lib_stage(np, cdir, spec, arrays)
    return 0


def ort_stage(np, cdir, stage, path, feeds):
    """onnxruntime on one model: outputs saved (stage 'vi': shapes printed)."""
    try:
        sess = ort_session(path)
        outs = sess.run(None, {i.name: feeds[i.name] for i in sess.get_inputs()})
        outs = zipmap_tensors(np, path, outs)
    except Exception as ex:  # onnxruntime raises many types
        emit(stage=stage, ok=False, error=first_line(ex))
        return False
    if stage == "vi":
        shapes = {i.name: list(feeds[i.name].shape) for i in sess.get_inputs()}
        shapes.update({o.name: list(np.shape(v)) for o, v in zip(sess.get_outputs(), outs)})
        emit(stage=stage, ok=True, shapes=shapes)
        return True
    np.savez(os.path.join(cdir, f"{stage}.npz"), **{f"out{i}": np.asarray(v) for i, v in enumerate(outs)})
    emit(stage=stage, ok=True)
    return True


def lib_stage(np, cdir, spec, arrays):
    """The compiled library through its C API (run.py's CModel)."""
    m = CModel(spec["lib"], spec["prefix"])
    lib_names = [i["name"] for i in m.inputs]
    if sorted(lib_names) != sorted(spec["names"]):
        emit(stage="lib", ok=False, error=f"library inputs {lib_names} != graph inputs {spec['names']}")
        return
    arrays = [arrays[spec["names"].index(n)] for n in lib_names]
    want_dtypes = [w.dtype.name for w in load_outputs(cdir, "ort")]
    dtypes = [ELEM_DTYPES.get(o["dtype"]) or w for o, w in zip(m.outputs, want_dtypes)]
    rc, got = m.run(np, arrays, dtypes)
    if rc != 0:
        emit(stage="lib", ok=False, error=f"run returned {rc}: input {rc - 1} rejected")
        return
    np.savez(os.path.join(cdir, "lib.npz"), **{f"out{i}": g for i, g in enumerate(got)})
    emit(stage="lib", ok=True)


def run_worker(cdir, stages):
    """The stages the child finished ({stage: its JSON}) and, if it died,
    how (signal and last stderr line)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", cdir, "--stages", ",".join(stages)]
    rc, out, err = run_child(cmd, CALL_TIMEOUT)
    done = {}
    for ln in (out or "").splitlines():
        try:
            d = json.loads(ln) if ln.startswith("{") else {}
        except ValueError:
            continue
        if "stage" in d:
            done[d["stage"]] = d
    if rc == 0:
        return done, None
    tail = [ln.strip() for ln in (err or "").splitlines() if ln.strip()]
    return done, describe_rc(rc) + (": " + tail[-1][:300] if tail else "")


def first_line(ex):
    return (str(ex).splitlines() or [type(ex).__name__])[0][:300]


def read_pb(path):
    import onnx
    from onnx import numpy_helper

    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def check_valgrind(args, ctx, cdir, arrays, want):
    """`onnxc run --valgrind` at this case; its outputs compared too."""
    model = ctx["model"]
    cmd = [args.onnxc, "run", model["path"]]
    for i, (spec, a) in enumerate(zip(model["inputs"], arrays)):
        p = os.path.join(cdir, f"in{i}.pb")
        write_pb(p, a, spec["name"])
        cmd += ["--input", p]
    out_dir = os.path.join(cdir, "run-out")
    cmd += ["--output-dir", out_dir, "--valgrind"]
    rc, out, err = run_child(cmd, COMPILE_TIMEOUT + CALL_TIMEOUT)
    marks = [ln.strip() for ln in err.splitlines() if any(k in ln for k in VALGRIND_MARKS)]
    if rc != 0 or marks:
        # Without a memcheck report it is the model failing (a runtime check).
        line = marks[0] if marks else first_error_line(err + out, rc)
        return result("valgrind" if marks else "run", False, None, f"{describe_rc(rc)}: {line[:300]}", cmd=" ".join(cmd))
    got = [read_pb(os.path.join(out_dir, f"output_{i}.pb")) for i in range(len(want))
           if os.path.exists(os.path.join(out_dir, f"output_{i}.pb"))]
    return result("run", *compare_outputs(got, want, model), cmd=" ".join(cmd))


# ---------------------------------------------------------------- driver


def run_case(args, ctx, k, valgrind_left):
    """One model x size case. Returns its JSON record."""
    import numpy as np

    model = ctx["model"]
    rng = np.random.default_rng([args.seed, zlib.crc32(model["name"].encode()), k])
    values = pick_sizes(rng, ctx["axes"], ctx["saved"], k)
    arrays = make_inputs(rng, model, ctx["axes"], values, k)
    rec = {"model": model["name"], "case": k, "sizes": values,
           "shapes": {i["name"]: list(a.shape) for i, a in zip(model["inputs"], arrays)}, "checks": []}
    cdir = os.path.join(ctx["dir"], f"case{k}")
    os.makedirs(cdir, exist_ok=True)
    np.savez(os.path.join(cdir, "inputs.npz"), **{f"in{i}": a for i, a in enumerate(arrays)})
    with open(os.path.join(cdir, "case.json"), "w") as f:
        json.dump(ctx["spec"], f)
    done, died = run_worker(cdir, ["ort", "fold", "lib"])
    if not done.get("ort", {}).get("ok"):
        why = done["ort"]["error"] if "ort" in done else f"onnxruntime crashes ({died})"
        rec.update(status="skipped", reason="original fails: " + why[:200], failures=[])
        shutil.rmtree(cdir, ignore_errors=True)
        return rec
    want = load_outputs(cdir, "ort")
    if ctx["spec"]["fold"]:
        rec["checks"] += fold_checks(ctx, cdir, done, died, want)
    if ctx["lib"]:
        stages = ["fold", "vi"] if ctx["spec"]["fold"] else []
        if died and any(s not in done for s in stages):
            # onnxruntime died on the folded model: the library on its own.
            done, died = run_worker(cdir, ["lib"])
        rec["checks"].append(lib_check(ctx, cdir, done, died, want))
    if ctx["lib"] and valgrind_left > 0 and sum(a.size for a in arrays) <= args.valgrind_max_elems:
        rec["valgrind"] = True
        rec["checks"].append(check_valgrind(args, ctx, cdir, arrays, want))
    return finish_case(args, rec, cdir)


def finish_case(args, rec, cdir):
    """Status, worst difference and a reproducer; a passing case's files go."""
    rec["failures"] = [c for c in rec["checks"] if not c["ok"]]
    diffs = [c["max_abs_diff"] for c in rec["checks"] if c["max_abs_diff"] is not None]
    rec["max_abs_diff"] = max(diffs, key=lambda d: math.inf if math.isnan(d) else d) if diffs else None
    rec["status"] = "failed" if rec["failures"] else "ok"
    if rec["failures"]:
        rec["repro"] = repro_cmd(args, rec["model"], rec["case"])
    else:
        shutil.rmtree(cdir, ignore_errors=True)
    return rec


def repro_cmd(args, name, k):
    src = " ".join(f"--corpus {d}" for d in args.corpus or []) + "".join(f" --node-tests {d}" for d in args.node_tests or [])
    return (f"python3 scripts/shape_fuzz.py {src} --onnxc {args.onnxc} --seed {args.seed} "
            f"--filter '^{re.escape(name)}$' --case {k}")


def ort_session(path):
    """corpus_common's oracle session (1 thread, no graph optimizations),
    silent: a size onnxruntime refuses is a skipped case, not a log line."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 4
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def case_spec(ctx, fold_path):
    """What the child process runs at every case of the model; a folded
    model that does not load in onnx is the model's failure."""
    model = ctx["model"]
    ctx["spec"] = {"model": model.get("reference") or model["path"], "fold": None, "vi": None, "lib": ctx["lib"],
                   "prefix": c_prefix(model["name"]), "names": [i["name"] for i in model["inputs"]]}
    # A model only its reference runs in onnxruntime: its fold neither.
    if not fold_path or model.get("reference"):
        return None
    vi_path = fold_path.replace(".fold.onnx", ".fold.vi.onnx")
    try:
        ctx["declared"] = with_value_info_outputs(fold_path, vi_path, model["path"])
    except Exception as ex:  # onnx raises many types
        return {"check": "fold", "what": f"the folded model does not load: {first_line(ex)}"}
    ctx["spec"].update(fold=fold_path, vi=vi_path)
    return None


def case_indices(args, n):
    """Valgrind goes to the zero case and the random ones before the 1s."""
    ks = [args.case] if args.case is not None else list(range(n))
    return sorted(ks, key=lambda k: (k == 0, k))


def fuzz_model(args, model):
    """Compile, fold and run every case of one model."""
    name = model["name"]
    res = {"model": name, "path": model["path"], "failures": [], "cases": []}
    why = unsupported(model)
    if why:
        res["unsupported"] = why
        return res
    mdir = os.path.join(args.work, name)
    shutil.rmtree(mdir, ignore_errors=True)
    os.makedirs(mdir)
    lib, comp = compile_model(args, model, mdir)
    if "refused" in comp:
        res["refused"] = comp["refused"]
    res["failures"] += [comp["failure"]] if "failure" in comp else []
    fold_path, fold_fail = fold_model(args, model, mdir)
    res["failures"] += [fold_fail] if fold_fail else []
    axes, saved = symbols_of(model)
    ctx = {"model": model, "dir": mdir, "lib": lib, "axes": axes, "saved": saved}
    fail = case_spec(ctx, fold_path)
    res["failures"] += [fail] if fail else []
    valgrind_left = args.valgrind_cases or 1 << 30
    for k in case_indices(args, args.cases):
        rec = run_case(args, ctx, k, valgrind_left)
        valgrind_left -= 1 if rec.get("valgrind") else 0
        res["cases"].append(rec)
    res["cases"].sort(key=lambda r: r["case"])
    return res


def model_line(res, secs):
    cases = res["cases"]
    ran = sum(1 for c in cases if c["status"] != "skipped")
    skipped = len(cases) - ran
    failed = sum(1 for c in cases if c["status"] == "failed")
    tag = f"{ran} run, {skipped} skipped, {failed} failed"
    tag += f" ({sum(1 for c in cases if c.get('valgrind'))} under valgrind)"
    if res.get("unsupported"):
        tag = "unsupported: " + res["unsupported"]
    elif res.get("refused"):
        # The folded model still runs: its cases count.
        tag = f"refused: {res['refused'][:90]}; fold: {tag}"
    lines = [f"{res['model']:28} {tag}  [{secs:.1f} s]"]
    for f in res["failures"]:
        lines.append(f"    FAIL {f['check']}: {f['what']}")
    return "\n".join(lines + failure_lines(cases))


def failure_lines(cases):
    """A failure once per kind (its message without the numbers), with the
    first case that shows it and how many others do."""
    kinds = {}
    for c in cases:
        for f in c["failures"]:
            key = (f["check"], re.sub(r"\d[\d.e+-]*", "#", f["what"]))
            kinds.setdefault(key, []).append((c, f))
    lines = []
    for hits in kinds.values():
        c, f = hits[0]
        more = f" (and {len(hits) - 1} more cases: {', '.join(str(h[0]['case']) for h in hits[1:9])}" \
               f"{', ...' if len(hits) > 9 else ''})" if len(hits) > 1 else ""
        lines.append(f"    FAIL case {c['case']} {c['sizes']}: {f['check']}: {f['what']}{more}")
        lines.append(f"      repro: {c['repro']}")
    return lines


def summarize(results):
    cases = [c for r in results for c in r["cases"]]
    checks = [f["check"] for c in cases for f in c["failures"]]
    return {
        "models": len(results),
        "cases": sum(1 for c in cases if c["status"] != "skipped"),
        "mismatches": sum(1 for c in cases if any(f["check"] != "valgrind" for f in c["failures"])),
        "valgrind_errors": sum(1 for c in cases if any(f["check"] == "valgrind" for f in c["failures"])),
        "skipped": sum(1 for c in cases if c["status"] == "skipped"),
        "refused": sum(1 for r in results if r.get("refused")),
        "unsupported": sum(1 for r in results if r.get("unsupported")),
        "model_failures": sum(len(r["failures"]) for r in results),
        "failed_checks": {k: checks.count(k) for k in sorted(set(checks))},
    }


def parse_args():
    ap = argparse.ArgumentParser(description="Run models at random sizes of their dynamic dims against onnxruntime.")
    ap.add_argument("--corpus", action="append", help="corpus directory (repeatable)")
    ap.add_argument("--node-tests", action="append", help="ONNX backend node-test tree (repeatable)")
    ap.add_argument("--onnxc", default=os.environ.get("ONNXC"), help="the onnxc binary (default $ONNXC, then target/debug)")
    ap.add_argument("--work", default=os.path.join("target", "shape-fuzz"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", type=int, help="cases per model (default: ci 4, long 128)")
    ap.add_argument("--case", type=int, help="run only case K of each model (to reproduce a failure)")
    ap.add_argument("--filter", help="regex on model names")
    ap.add_argument("--mode", choices=sorted(MODES), default="ci")
    ap.add_argument("--valgrind-max-elems", type=int, default=4096, help="valgrind cases whose inputs have at most N elements")
    ap.add_argument("--valgrind-cases", type=int, help="at most N valgrind cases per model, 0 for all (default: ci 2, long 0)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="models fuzzed at once (default: one per core)")
    ap.add_argument("--json", help="write every case here")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--stages", default="ort,fold,lib", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return args
    mode = MODES[args.mode]
    args.cases = mode["cases"] if args.cases is None else args.cases
    args.valgrind_cases = mode["valgrind_cases"] if args.valgrind_cases is None else args.valgrind_cases
    if not args.corpus and not args.node_tests:
        ap.error("give at least one --corpus or --node-tests directory")
    if args.cases < 1 or (args.case is not None and args.case < 0):
        ap.error("--cases must be at least 1 and --case not negative")
    if args.case is not None:
        args.cases = max(args.cases, args.case + 1)
    try:
        re.compile(args.filter or "")
    except re.error as ex:
        ap.error(f"--filter: {ex}")
    for d in (args.corpus or []) + (args.node_tests or []):
        if not os.path.isdir(d):
            ap.error(f"no directory {d}")
    args.onnxc = args.onnxc or "target/debug/onnxc"
    if not os.path.exists(args.onnxc):
        ap.error(f"no onnxc binary at {args.onnxc}: pass --onnxc")
    args.onnxc = os.path.abspath(args.onnxc)
    args.corpus = [os.path.abspath(d) for d in args.corpus or []]
    args.node_tests = [os.path.abspath(d) for d in args.node_tests or []]
    args.work = os.path.abspath(args.work)
    return args


def main():
    args = parse_args()
    if args.worker:
        return worker(args.worker, args.stages.split(","))
    models = corpus_models(args.corpus or [], args.filter) + node_test_models(args.node_tests or [], args.filter)
    if not models:
        print("shape_fuzz: no models to fuzz", file=sys.stderr)
        return 2
    os.makedirs(args.work, exist_ok=True)
    t_all = time.perf_counter()
    def timed(model):
        t0 = time.perf_counter()
        res = fuzz_model(args, model)
        res["wall_s"] = round(time.perf_counter() - t0, 2)
        return res

    results = []
    # Cases run in child processes (the compiler, valgrind, onnxruntime):
    # threads keep the cores busy while one model waits on a serial step.
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for res in pool.map(timed, models):
            print(model_line(res, res["wall_s"]), flush=True)
            results.append(res)
    s = summarize(results)
    line = (f"{s['cases']} cases, {s['mismatches']} mismatches, {s['valgrind_errors']} valgrind errors, "
            f"{s['skipped']} skipped, {s['refused']} refused")
    if s["model_failures"]:
        line += f", {s['model_failures']} model failures (compile crash / fold)"
    print(line + f"  [{time.perf_counter() - t_all:.0f} s]")
    if args.json:
        meta = {"onnxc": args.onnxc, "seed": args.seed, "mode": args.mode, "cases_per_model": args.cases,
                "date": time.strftime("%Y-%m-%d %H:%M")}
        cases = [c for r in results for c in r.pop("cases")]
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "summary": s, "models": results, "cases": cases}, f, indent=1)
            f.write("\n")
    failed = s["mismatches"] or s["valgrind_errors"] or s["model_failures"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
