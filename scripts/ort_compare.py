#!/usr/bin/env python3
"""Runs pairs of ONNX models in onnxruntime on the same inputs and compares
their outputs: bitwise for integers and bools, rtol 1e-6 for floats (NaNs
must match). One Python process for a whole batch.

    ort_compare.py LIST [--threads N]

LIST has one case per line: NAME<TAB>MODEL_A<TAB>MODEL_B<TAB>INPUT_DIR, where
INPUT_DIR holds input_0.pb, input_1.pb, ... (TensorProto files named after
the graph inputs, as in the ONNX backend test data).

Prints one line per case on stdout: NAME<TAB>STATUS<TAB>DETAIL with STATUS
  pass  outputs identical (DETAIL is "reference" when onnxruntime cannot
        run MODEL_A and onnx.reference.ReferenceEvaluator ran both instead,
        e.g. for IR versions or opsets newer than onnxruntime knows)
  fail  MODEL_B does not load/run, or its outputs differ (DETAIL says how)
  skip  neither onnxruntime nor the reference evaluator runs MODEL_A, or
        MODEL_A is not deterministic (two runs differ)
Both sessions run on the CPU provider with graph optimizations disabled.
"""

import argparse
import glob
import os
import sys
import warnings


def load_inputs(onnx, numpy_helper, d):
    feeds = {}
    files = sorted(
        glob.glob(os.path.join(d, "input_*.pb")),
        key=lambda p: int(os.path.basename(p)[6:-3]),
    )
    for f in files:
        t = onnx.TensorProto()
        with open(f, "rb") as fh:
            t.ParseFromString(fh.read())
        feeds[t.name] = numpy_helper.to_array(t)
    return feeds


def session(ort, path):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def run(sess, feeds):
    names = {i.name for i in sess.get_inputs()}
    return sess.run(None, {k: v for k, v in feeds.items() if k in names})


def differ(np, a, b):
    """Why two output lists differ, or None."""
    if len(a) != len(b):
        return f"{len(a)} vs {len(b)} outputs"
    for i, (x, y) in enumerate(zip(a, b)):
        x = np.asarray(x)
        y = np.asarray(y)
        if x.dtype != y.dtype:
            return f"output {i}: dtype {x.dtype} vs {y.dtype}"
        if x.shape != y.shape:
            return f"output {i}: shape {x.shape} vs {y.shape}"
        if x.dtype.kind == "f" or x.dtype.kind == "c":
            # A rewritten (not just re-encoded) model may round differently.
            atol = float(os.environ.get("ORT_COMPARE_ATOL", "0"))
            ok = np.allclose(x, y, rtol=1e-6, atol=atol, equal_nan=True)
        elif x.dtype.kind in "biuU":
            ok = np.array_equal(x, y)
        else:
            # float8/int4 and friends come back as custom numpy dtypes.
            ok = x.tobytes() == y.tobytes()
        if not ok:
            return f"output {i}: values differ"
    return None


def reference(np, onnx, a, b, feeds, ort_error):
    """The same comparison with onnx's reference evaluator."""
    from onnx.reference import ReferenceEvaluator

    def evaluate(path):
        ev = ReferenceEvaluator(onnx.load(path))
        names = set(ev.input_names)
        return ev.run(None, {k: v for k, v in feeds.items() if k in names})

    try:
        ra = evaluate(a)
    except Exception as e:  # noqa: BLE001
        return "skip", f"neither runs the original: {ort_error}; reference: {first_line(e)}"
    try:
        rb = evaluate(b)
    except Exception as e:  # noqa: BLE001
        return "fail", f"exported model (reference evaluator): {first_line(e)}"
    why = differ(np, ra, rb)
    if why is None:
        return "pass", "reference"
    if differ(np, ra, evaluate(a)) is not None:
        return "skip", "the original is not deterministic"
    return "fail", f"{why} (reference evaluator)"


def compare(np, onnx, numpy_helper, ort, a, b, inputs):
    try:
        feeds = load_inputs(onnx, numpy_helper, inputs)
    except Exception as e:  # noqa: BLE001
        return "skip", f"cannot read the inputs: {first_line(e)}"
    try:
        sa = session(ort, a)
        ra = run(sa, feeds)
    except Exception as e:  # noqa: BLE001 - any ORT failure: try the reference
        return reference(np, onnx, a, b, feeds, first_line(e))
    try:
        rb = run(session(ort, b), feeds)
    except Exception as e:  # noqa: BLE001
        return "fail", f"exported model: {first_line(e)}"
    why = differ(np, ra, rb)
    if why is None:
        return "pass", ""
    if differ(np, ra, run(sa, feeds)) is not None:
        return "skip", "the original is not deterministic"
    return "fail", why


def first_line(e):
    s = str(e).strip().splitlines()
    return (s[0] if s else type(e).__name__)[:300]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("list")
    args = p.parse_args()
    warnings.simplefilter("ignore")
    try:
        import numpy as np
        import onnx
        import onnxruntime as ort
        from onnx import numpy_helper
    except ImportError as e:
        print(f"ort_compare: {e}; run scripts/setup-test-deps.sh", file=sys.stderr)
        return 1
    ort.set_default_logger_severity(3)
    with open(args.list) as f:
        lines = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    for fields in lines:
        if len(fields) != 4:
            print(f"ort_compare: bad line {fields!r}", file=sys.stderr)
            return 1
        name, a, b, inputs = fields
        status, detail = compare(np, onnx, numpy_helper, ort, a, b, inputs)
        print(f"{name}\t{status}\t{detail}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
