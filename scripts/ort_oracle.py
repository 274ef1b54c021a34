#!/usr/bin/env python3
"""Reference outputs for onnxc tests, computed by onnxruntime.

Runs MODEL on the CPU execution provider with all graph optimizations
disabled (ORT_DISABLE_ALL), so the outputs reflect plain ONNX semantics.

    ort_oracle.py MODEL.onnx --input a.pb [--input b.pb ...] --output-dir DIR
    ort_oracle.py MODEL.onnx --random-inputs SEED --output-dir DIR

Inputs are TensorProto files, matched to the graph inputs in order.
--random-inputs first writes deterministic inputs input_0.pb, ... for the
declared input shapes (dynamic dims -> 1) into DIR. Outputs are written as
DIR/output_0.pb, ... (TensorProto named after the graph outputs) and
summarized one line each on stdout. Exit code 1 with a message on error.
"""

import argparse
import os
import sys

# onnxruntime type strings -> numpy dtype names.
ORT_TYPES = {
    "tensor(float)": "float32",
    "tensor(double)": "float64",
    "tensor(float16)": "float16",
    "tensor(int8)": "int8",
    "tensor(int16)": "int16",
    "tensor(int32)": "int32",
    "tensor(int64)": "int64",
    "tensor(uint8)": "uint8",
    "tensor(uint16)": "uint16",
    "tensor(uint32)": "uint32",
    "tensor(uint64)": "uint64",
    "tensor(bool)": "bool",
}


class OracleError(Exception):
    pass


def import_deps():
    try:
        import numpy
        import onnx.numpy_helper
        import onnxruntime
    except ImportError as e:
        raise OracleError(f"{e}; install the test dependencies with scripts/setup-test-deps.sh")
    return numpy, onnx, onnxruntime


def random_input(np, rng, info):
    shape = [d if isinstance(d, int) and d >= 0 else 1 for d in info.shape]
    dtype = ORT_TYPES.get(info.type)
    if dtype is None:
        raise OracleError(f"input '{info.name}': cannot make random values of {info.type}")
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("float"):
        return rng.standard_normal(shape).astype(dtype)
    # Small non-negative ints: valid as indices or token ids in most models.
    return rng.integers(0, 10, size=shape).astype(dtype)


def run(args):
    np, onnx, ort = import_deps()
    from onnx import numpy_helper

    if args.input and args.random_inputs is not None:
        raise OracleError("--input and --random-inputs are exclusive")
    os.makedirs(args.output_dir, exist_ok=True)

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = args.threads
    opts.inter_op_num_threads = 1
    try:
        sess = ort.InferenceSession(args.model, opts, providers=["CPUExecutionProvider"])
    except Exception as e:
        raise OracleError(f"cannot load {args.model}: {e}")
    infos = sess.get_inputs()

    feeds = {}
    if args.random_inputs is not None:
        rng = np.random.default_rng(args.random_inputs)
        for k, info in enumerate(infos):
            arr = random_input(np, rng, info)
            tensor = numpy_helper.from_array(arr, name=info.name)
            with open(os.path.join(args.output_dir, f"input_{k}.pb"), "wb") as f:
                f.write(tensor.SerializeToString())
            feeds[info.name] = arr
    else:
        if len(args.input) != len(infos):
            names = ", ".join(i.name for i in infos)
            raise OracleError(f"model has {len(infos)} inputs ({names}), got {len(args.input)} --input")
        for path, info in zip(args.input, infos):
            tensor = onnx.TensorProto()
            try:
                with open(path, "rb") as f:
                    tensor.ParseFromString(f.read())
            except Exception as e:
                raise OracleError(f"cannot read tensor {path}: {e}")
            arr = numpy_helper.to_array(tensor)
            want = ORT_TYPES.get(info.type)
            if want is not None and arr.dtype != np.dtype(want):
                raise OracleError(f"{path}: {arr.dtype} given for input '{info.name}' of {info.type}")
            feeds[info.name] = arr

    try:
        results = sess.run(None, feeds)
    except Exception as e:
        raise OracleError(f"onnxruntime failed: {e}")

    for k, (info, value) in enumerate(zip(sess.get_outputs(), results)):
        if not isinstance(value, np.ndarray):
            raise OracleError(f"output '{info.name}' is not a tensor ({type(value).__name__})")
        tensor = numpy_helper.from_array(value, name=info.name)
        with open(os.path.join(args.output_dir, f"output_{k}.pb"), "wb") as f:
            f.write(tensor.SerializeToString())
        first = np.array2string(
            value.reshape(-1)[:6], precision=6, separator=", ", max_line_width=1 << 20
        )
        print(f"{info.name} {list(value.shape)} {value.dtype} {first}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", help="ONNX model file")
    p.add_argument("--input", action="append", default=[], metavar="PB",
                   help="TensorProto file for the next graph input")
    p.add_argument("--random-inputs", type=int, metavar="SEED",
                   help="generate deterministic random inputs from SEED")
    p.add_argument("--output-dir", required=True, metavar="DIR")
    p.add_argument("--threads", type=int, default=1, help="intra-op threads (default 1)")
    args = p.parse_args(argv)
    try:
        run(args)
    except OracleError as e:
        print(f"ort_oracle: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
