#!/usr/bin/env python3
"""onnxruntime's time per call on given inputs, for `onnxc bench` (embedded
in onnxc), measured the way the compiled model's driver measures its own.

    ort_time.py MODEL.onnx THREADS RUNS input_0.pb [input_1.pb ...]

THREADS 0 is onnxruntime's default (one per core). The session uses every
graph optimization (what a user of onnxruntime gets); one warm-up call,
then RUNS timed calls. Prints `calls_s<TAB>t1 t2 ...` (wall seconds per
call). Exit code 3 with `missing<TAB>reason` when onnxruntime is not
installed, 1 with `error<TAB>message` when it fails.
"""

import sys
import time


def main(argv):
    if len(argv) < 4:
        print("error\tusage: ort_time.py MODEL THREADS RUNS INPUT.pb...")
        return 1
    model, threads, runs, inputs = argv[1], int(argv[2]), int(argv[3]), argv[4:]
    try:
        import onnx
        import onnxruntime as ort
        from onnx import numpy_helper
    except ImportError as e:
        print(f"missing\t{e} (scripts/setup-test-deps.sh installs it)")
        return 3
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    infos = sess.get_inputs()
    if len(infos) != len(inputs):
        print(f"error\tthe model has {len(infos)} inputs, {len(inputs)} given")
        return 1
    feeds = {}
    for info, path in zip(infos, inputs):
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        feeds[info.name] = numpy_helper.to_array(t)
    sess.run(None, feeds)
    calls = []
    for _ in range(max(runs, 1)):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        calls.append(time.perf_counter() - t0)
    print("calls_s\t" + " ".join(f"{c:.9f}" for c in calls))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Exception as e:  # report, don't trace: the bench shows this line
        print("error\t" + f"{type(e).__name__}: {e}".replace("\n", " "))
        sys.exit(1)
