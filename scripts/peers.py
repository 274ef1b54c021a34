#!/usr/bin/env python3
"""One peer optimizer run for `onnxc bench --peers` (embedded in onnxc).

    peers.py onnxruntime|onnxsim MODEL.onnx OUT.onnx

onnxruntime: offline optimization, ORT_ENABLE_EXTENDED, one thread, the
optimized model saved with optimized_model_filepath.
onnxsim: onnx-simplifier's simplify() (constant folding + shape inference).

Prints `key<TAB>value` lines: inner_s (the optimization call alone) and
setup_s (interpreter start to imports done); peak RSS is measured from
outside (the bench's probe). Exit code 3 with a `missing<TAB>reason` line when the peer is not
installed, 1 with `error<TAB>message` when it fails.
"""

import sys
import time

START = time.perf_counter()


def main(argv):
    if len(argv) != 4:
        print("error\tusage: peers.py onnxruntime|onnxsim MODEL OUT")
        return 1
    peer, model, out = argv[1:]
    try:
        if peer == "onnxruntime":
            import onnxruntime as ort
        elif peer == "onnxsim":
            import onnx
            import onnxsim
        else:
            print(f"error\tunknown peer {peer}")
            return 1
    except ImportError as e:
        print(f"missing\t{e} (pip install -r scripts/requirements-bench.txt)")
        return 3
    t0 = time.perf_counter()
    if peer == "onnxruntime":
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        so.optimized_model_filepath = out
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    else:
        simplified, ok = onnxsim.simplify(onnx.load(model))
        if not ok:
            print("error\tonnxsim could not validate the simplified model")
            return 1
        onnx.save(simplified, out)
    t1 = time.perf_counter()
    print(f"setup_s\t{t0 - START}")
    print(f"inner_s\t{t1 - t0}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Exception as e:  # report, don't trace: the bench shows this line
        print("error\t" + f"{type(e).__name__}: {e}".replace("\n", " "))
        sys.exit(1)
