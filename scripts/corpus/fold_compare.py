#!/usr/bin/env python3
"""`onnxc fold` against onnx-simplifier (onnxsim) on the real-model corpus.

    python3 scripts/corpus/fold_compare.py [--corpus DIR ...] [--onnxc PATH]
        [--filter REGEX] [--no-shapes] [--md OUT.md] [--json OUT.json]

Corpus directories (default target/corpus and target/corpus-ci) hold
NAME.onnx, NAME.json and NAME.size{k}.npz (corpus_common.py). Per model:

  1. `onnxc fold NAME.onnx -o WORK/NAME.onnxc.onnx` and onnxsim with its
     defaults (`onnxsim.simplify(model)`, no input-shape overwrite), each in
     a child process, timed (onnxc: the whole process; onnxsim: load,
     simplify and save inside its process, not the Python start-up);
  2. counts the nodes of each result (main graph and every subgraph);
  3. runs onnxruntime on each result at every saved size and compares with
     the saved outputs (rtol 1e-3, atol 1e-4);
  4. unless --no-shapes: the same with the inputs fixed to size 0's shapes
     (`onnxc fold --input-shape NAME=DIMS`, onnxsim
     `overwrite_input_shapes`), checked at size 0.

Prints a Markdown table (model, nodes before, after onnxc, after onnxsim,
both times, correct?) and writes it with --md; --json keeps every result.
onnxc's results must also pass onnx.checker with full_check (strict shape
inference) where the model itself passes the checker. Needs numpy, onnx, onnxruntime and onnxsim in this Python.
Exit status 0 whatever the models do, 2 for a usage error; with --assert
(the CI test), 1 unless onnxc is correct and leaves no more nodes than
onnxsim on every model.
"""

import argparse
import concurrent.futures
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import ATOL, compare, first_error_line, last_json, load_size, run_child  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def count_nodes(graph):
    """Nodes of GRAPH and of every subgraph its nodes hold."""
    import onnx

    n = 0
    for node in graph.node:
        n += 1
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                n += count_nodes(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                n += sum(count_nodes(g) for g in a.graphs)
    return n


def model_nodes(path):
    import onnx

    return count_nodes(onnx.load(path, load_external_data=False).graph)


def shape_arg(shape):
    return "x".join(str(int(d)) for d in shape)


# ---------------------------------------------------------------- workers


def worker_onnxsim(args):
    """Child process: onnxsim with its defaults; prints the time as JSON."""
    import onnx
    import onnxsim

    shapes = json.loads(args.shapes) if args.shapes else None
    t0 = time.perf_counter()
    model = onnx.load(args.model)
    kw = {"overwrite_input_shapes": shapes} if shapes else {}
    out, ok = onnxsim.simplify(model, **kw)
    onnx.save(out, args.out)
    print(json.dumps({"seconds": round(time.perf_counter() - t0, 3), "check": bool(ok)}))


def worker_check(args):
    """Child process: onnxruntime on a folded model at the given sizes."""
    import numpy as np

    from corpus_common import ort_session, zipmap_tensors

    entry = json.load(open(args.json))
    corpus_dir = os.path.dirname(os.path.abspath(args.json))
    names = [i["name"] for i in entry["inputs"]]
    checker = ""
    if args.checker:
        import onnx

        try:
            onnx.checker.check_model(args.model, full_check=True)
        except Exception as e:  # noqa: BLE001 (any checker complaint is the result)
            checker = str(e).splitlines()[0][:200] if str(e) else type(e).__name__
    sess = ort_session(args.model)
    declared = {i.name for i in sess.get_inputs()}
    worst, notes = 0.0, []
    for k in [int(s) for s in args.sizes.split(",")]:
        ins, want = load_size(np, corpus_dir, entry, k)
        feeds = {n: a for n, a in zip(names, ins) if n in declared}
        got = zipmap_tensors(np, args.model, sess.run(None, feeds))
        if len(got) != len(want):
            notes.append(f"size {k}: {len(got)} outputs, want {len(want)}")
            continue
        for i, (g, w) in enumerate(zip(got, want)):
            ok, mad, note = compare(np, g, w, entry.get("atol", ATOL))
            if mad is not None and mad == mad:
                worst = max(worst, mad)
            if not ok:
                notes.append(f"size {k} out{i}: {note or f'max abs diff {mad:.3g}'}")
    if checker:
        notes.insert(0, f"onnx.checker: {checker}")
    print(json.dumps({"ok": not notes, "max_abs_diff": worst, "notes": notes[:4]}))


# ---------------------------------------------------------------- driver


def check(args, entry_path, model, sizes, checker):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "check", "--json", entry_path]
    cmd += ["--model", model, "--sizes", ",".join(map(str, sizes))]
    if checker:
        cmd.append("--checker")
    rc, out, err = run_child(cmd, args.timeout)
    r = last_json(out)
    if rc != 0 or r is None:
        return {"ok": False, "notes": [first_error_line(err + out, rc)[:300]]}
    return r


def run_onnxc(args, model, out, shapes):
    cmd = [args.onnxc, "fold", model, "-o", out]
    for name, shape in (shapes or {}).items():
        cmd += ["--input-shape", f"{name}={shape_arg(shape)}"]
    if os.path.exists(out):
        os.remove(out)
    t0 = time.perf_counter()
    rc, so, se = run_child(cmd, args.timeout)
    secs = round(time.perf_counter() - t0, 3)
    if rc != 0 or not os.path.exists(out):
        return {"error": first_error_line(se + so, rc)[:300]}
    return {"seconds": secs}


def run_onnxsim(args, model, out, shapes):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "onnxsim", "--model", model, "--out", out]
    if shapes:
        cmd += ["--shapes", json.dumps(shapes)]
    memo = out + ".json"
    if args.reuse_onnxsim and os.path.exists(out) and os.path.exists(memo):
        return json.load(open(memo))
    if os.path.exists(out):
        os.remove(out)
    rc, so, se = run_child(cmd, args.timeout)
    r = last_json(so)
    if rc != 0 or r is None or not os.path.exists(out):
        return {"error": first_error_line(se + so, rc)[:300]}
    with open(memo, "w") as f:
        json.dump(r, f)
    return r


def passes_checker(model):
    import onnx

    try:
        onnx.checker.check_model(model)
        return True
    except Exception:  # noqa: BLE001 (any complaint)
        return False


def one_tool(args, run, entry_path, model, out, shapes, sizes):
    r = run(args, model, out, shapes)
    if "error" in r:
        return r
    r["nodes"] = model_nodes(out)
    # onnx.checker (with strict shape inference) judges our output only
    # (onnxsim's is the reference), and only where the model itself passes
    # the checker: outputs of a rank decided at run time, or declared
    # without a shape as onnxruntime's tools leave them, never do.
    r.update(check(args, entry_path, out, sizes, run is run_onnxc and passes_checker(model)))
    cached = run is run_onnxsim and args.reuse_onnxsim
    if not args.keep and not cached:
        for p in (out, out + ".data"):
            if os.path.exists(p):
                os.remove(p)
    return r


def run_model(args, corpus_dir, entry, work):
    name = entry["name"]
    model = os.path.join(corpus_dir, entry["file"])
    entry_path = os.path.join(corpus_dir, f"{name}.json")
    sizes = list(range(len(entry["sizes"])))
    r = {"model": name, "nodes": model_nodes(model), "dynamic": {}, "static": {}}
    variants = [("dynamic", None, sizes)]
    if not args.no_shapes and entry["sizes"]:
        variants.append(("static", entry["sizes"][0]["shapes"], [0]))
    for key, shapes, ks in variants:
        tag = "" if shapes is None else ".s0"
        r[key]["onnxc"] = one_tool(args, run_onnxc, entry_path, model, os.path.join(work, f"{name}{tag}.onnxc.onnx"), shapes, ks)
        r[key]["onnxsim"] = one_tool(args, run_onnxsim, entry_path, model, os.path.join(work, f"{name}{tag}.onnxsim.onnx"), shapes, ks)
    return r


def cell_nodes(t):
    return "error" if "error" in t else str(t["nodes"])


def cell_time(t):
    return "" if "error" in t else f"{t['seconds']:.2f}"


def cell_ok(a, b):
    def one(t):
        if "error" in t:
            return "error"
        return "yes" if t.get("ok") else "NO"

    x, y = one(a), one(b)
    return x if x == y else f"{x} / {y}"


def mark(a, b):
    """Bold the onnxc count when onnxsim leaves fewer nodes."""
    if "error" in a or "error" in b:
        return cell_nodes(a)
    return f"**{a['nodes']}**" if a["nodes"] > b["nodes"] else str(a["nodes"])


def markdown(results, shapes):
    head = "| model | nodes | onnxc | onnxsim | onnxc s | onnxsim s | correct |"
    rule = "|---|---:|---:|---:|---:|---:|---|"
    if shapes:
        head += " onnxc (sizes fixed) | onnxsim (sizes fixed) | correct (fixed) |"
        rule += "---:|---:|---|"
    lines = [head, rule]
    tally = {"fewer": 0, "equal": 0, "more": 0}
    for r in results:
        a, b = r["dynamic"]["onnxc"], r["dynamic"]["onnxsim"]
        row = f"| {r['model']} | {r['nodes']} | {mark(a, b)} | {cell_nodes(b)} | {cell_time(a)} | {cell_time(b)} | {cell_ok(a, b)} |"
        if "error" not in a and "error" not in b:
            key = "fewer" if a["nodes"] < b["nodes"] else "equal" if a["nodes"] == b["nodes"] else "more"
            tally[key] += 1
        if shapes:
            c, d = r["static"].get("onnxc", {"error": "-"}), r["static"].get("onnxsim", {"error": "-"})
            row += f" {mark(c, d)} | {cell_nodes(d)} | {cell_ok(c, d)} |"
        lines.append(row)
    lines.append("")
    lines.append(
        f"onnxc leaves fewer nodes on {tally['fewer']}, as many on {tally['equal']}, "
        f"more (bold) on {tally['more']} of {len(results)} models."
    )
    return "\n".join(lines) + "\n"


def entries(dirs, pattern):
    for d in dirs:
        if not os.path.isdir(d):
            print(f"warning: no corpus directory {d}", file=sys.stderr)
            continue
        for f in sorted(os.listdir(d)):
            if not f.endswith(".json") or f == "manifest.json":
                continue
            e = json.load(open(os.path.join(d, f)))
            if "file" not in e or (pattern and not re.search(pattern, e["name"])):
                continue
            if "reference" in e:
                # Ops onnxruntime runs only on GPU: the fold keeps them, so
                # onnxruntime on CPU cannot check it.
                print(f"{e['name']}: not compared (onnxruntime runs only its reference model)", file=sys.stderr)
                continue
            yield d, e


def report(r):
    a, b = r["dynamic"]["onnxc"], r["dynamic"]["onnxsim"]
    print(f"{r['model']}: {r['nodes']} -> onnxc {cell_nodes(a)}, onnxsim {cell_nodes(b)}, correct {cell_ok(a, b)}", flush=True)
    for t in (a, b):
        if "error" in t or not t.get("ok"):
            print(f"  {t.get('error') or t.get('notes')}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", action="append", help="corpus directory (repeatable)")
    ap.add_argument("--onnxc", default=os.path.join(ROOT, "target", "release", "onnxc"))
    ap.add_argument("--filter", help="only models whose name matches this regex")
    ap.add_argument("--no-shapes", action="store_true", help="skip the fixed-size column")
    ap.add_argument("--work", default=os.path.join(ROOT, "target", "fold-compare"))
    ap.add_argument("--keep", action="store_true", help="keep the folded models in --work")
    ap.add_argument("--reuse-onnxsim", action="store_true", help="keep onnxsim results of an earlier run in --work")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per child process")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="models compared at once (default: one per core)")
    ap.add_argument("--md", help="write the Markdown table here")
    ap.add_argument("--json", help="write every result here")
    ap.add_argument("--assert", dest="assert_", action="store_true", help="exit 1 unless onnxc is correct and leaves no more nodes than onnxsim on every model")
    ap.add_argument("--worker", choices=["onnxsim", "check"], help=argparse.SUPPRESS)
    ap.add_argument("--checker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--shapes", help=argparse.SUPPRESS)
    ap.add_argument("--sizes", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker == "onnxsim":
        return worker_onnxsim(args)
    if args.worker == "check":
        return worker_check(args)
    if not os.path.exists(args.onnxc):
        print(f"error: no onnxc binary at {args.onnxc} (--onnxc)", file=sys.stderr)
        return 2
    dirs = args.corpus or [os.path.join(ROOT, "target", "corpus"), os.path.join(ROOT, "target", "corpus-ci")]
    os.makedirs(args.work, exist_ok=True)
    results = []
    todo = list(entries(dirs, args.filter))
    # Each model's tools run in child processes: threads keep the cores busy.
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        done = pool.map(lambda de: run_model(args, de[0], de[1], args.work), todo)
        for r in done:
            results.append(r)
            report(r)
    md = markdown(results, not args.no_shapes)
    print()
    print(md)
    if args.md:
        with open(args.md, "w") as f:
            f.write(md)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if args.assert_:
        bad = failures(results)
        for b in bad:
            print(f"FAIL {b}", file=sys.stderr)
        return 1 if bad or not results else 0
    return 0


def failures(results):
    """What --assert rejects: onnxc wrong or failing, or more nodes."""
    out = []
    for r in results:
        for key in ("dynamic", "static"):
            a, b = r[key].get("onnxc"), r[key].get("onnxsim")
            if a is None:
                continue
            if "error" in a or not a.get("ok"):
                out.append(f"{r['model']} ({key}): onnxc {a.get('error') or a.get('notes')}")
            elif b and "error" not in b and a["nodes"] > b["nodes"]:
                out.append(f"{r['model']} ({key}): onnxc leaves {a['nodes']} nodes, onnxsim {b['nodes']}")
    return out


if __name__ == "__main__":
    sys.exit(main())
