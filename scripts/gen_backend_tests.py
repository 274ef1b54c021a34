#!/usr/bin/env python3
"""Generates the ONNX backend test data from the installed `onnx` package.

    gen_backend_tests.py [OUT_DIR] [--force] [--quiet]

OUT_DIR defaults to target/onnx-backend (relative to the repository root).
Prints the absolute OUT_DIR on stdout (one line) and exits 0, so callers can
do `dir=$(scripts/gen_backend_tests.py)`.

Output layout (shared by every conformance harness; keep it stable):

    OUT_DIR/STAMP                  "onnx <version> layout <N>": the data is
                                   regenerated when it differs
    OUT_DIR/node/<case>/           one per ONNX backend node test case
                                   (from onnx.backend.test.case.node;
                                   ~1,900 cases incl. the *_expanded ones)
        model.onnx
        test_data_set_<i>/input_<j>.pb    inputs in graph-input order
        test_data_set_<i>/output_<j>.pb   expected outputs, graph-output order
    OUT_DIR/simple/<case>/         the "simple" model test cases, same layout
    OUT_DIR/light/<name>/          the light_* models shipped in
                                   site-packages onnx/backend/test/data/light
        model.onnx                 (copied; <name> is e.g. "resnet50")
        test_data_set_0/input_0.pb the input onnx's runner feeds them:
                                   arange(n)/n in the declared shape, f32
        test_data_set_0/output_0.pb the expected output shipped with onnx
    OUT_DIR/cases.txt              "<kind>/<case>" per line, sorted

Each .pb holds a TensorProto, except inputs/outputs whose graph type is a
sequence (SequenceProto), an optional (OptionalProto) or a map (MapProto),
exactly as `python -m onnx.backend.test.cmd_tools generate-data` writes them
(that command only covers the model cases in onnx 1.23, hence this script).

Generation takes about a minute; concurrent callers are serialized by a lock
file and see a complete directory (written to a temporary one, then renamed).
"""

import argparse
import fcntl
import os
import shutil
import sys

LAYOUT = 1


def repo_root():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def serialize(value, vtype, name):
    from onnx import TensorProto, numpy_helper

    if vtype.HasField("map_type"):
        return numpy_helper.from_dict(value, name).SerializeToString()
    if vtype.HasField("sequence_type"):
        return numpy_helper.from_list(value, name).SerializeToString()
    if vtype.HasField("optional_type"):
        return numpy_helper.from_optional(value, name).SerializeToString()
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(value, name).SerializeToString()


def write_case(root, kind, case):
    case_dir = os.path.join(root, kind, case.name)
    os.makedirs(case_dir)
    model = case.model
    with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for i, (inputs, outputs) in enumerate(case.data_sets or []):
        ds = os.path.join(case_dir, f"test_data_set_{i}")
        os.makedirs(ds)
        for prefix, values, infos in (
            ("input", inputs, model.graph.input),
            ("output", outputs, model.graph.output),
        ):
            for j, value in enumerate(values):
                info = infos[j]
                with open(os.path.join(ds, f"{prefix}_{j}.pb"), "wb") as f:
                    f.write(serialize(value, info.type, info.name))
    return f"{kind}/{case.name}"


def write_light(root, names):
    import numpy as np
    import onnx
    from onnx import numpy_helper

    src = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    for file in sorted(os.listdir(src)):
        if not (file.startswith("light_") and file.endswith(".onnx")):
            continue
        name = file[len("light_") : -len(".onnx")]
        case_dir = os.path.join(root, "light", name)
        ds = os.path.join(case_dir, "test_data_set_0")
        os.makedirs(ds)
        shutil.copyfile(os.path.join(src, file), os.path.join(case_dir, "model.onnx"))
        model = onnx.load(os.path.join(src, file), load_external_data=False)
        inits = {t.name for t in model.graph.initializer}
        k = 0
        for x in model.graph.input:
            if x.name in inits:
                continue
            # The dummy input of onnx's backend runner (random=False).
            shape = tuple(
                d.dim_value if d.HasField("dim_value") else 1
                for d in x.type.tensor_type.shape.dim
            )
            n = int(np.prod(shape))
            value = (np.arange(n).reshape(shape) / n).astype(np.float32)
            with open(os.path.join(ds, f"input_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(value, x.name).SerializeToString())
            k += 1
        expected = os.path.join(src, f"light_{name}_output_0.pb")
        if os.path.exists(expected):
            shutil.copyfile(expected, os.path.join(ds, "output_0.pb"))
        names.append(f"light/{name}")


def generate(out, quiet):
    import warnings

    import onnx.backend.test.case.model as model_cases
    import onnx.backend.test.case.node as node_cases

    tmp = f"{out}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    names = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nodes = node_cases.collect_testcases()
        simple = [c for c in model_cases.collect_testcases() if c.kind == "simple"]
    for case in nodes:
        names.append(write_case(tmp, "node", case))
    for case in simple:
        names.append(write_case(tmp, "simple", case))
    write_light(tmp, names)
    with open(os.path.join(tmp, "cases.txt"), "w") as f:
        f.write("".join(n + "\n" for n in sorted(names)))
    with open(os.path.join(tmp, "STAMP"), "w") as f:
        f.write(stamp_text())
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)
    if not quiet:
        print(f"generated {len(names)} cases in {out}", file=sys.stderr)


def stamp_text():
    import onnx

    return f"onnx {onnx.__version__} layout {LAYOUT}\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", nargs="?", default=os.path.join(repo_root(), "target", "onnx-backend"))
    p.add_argument("--force", action="store_true", help="regenerate even if up to date")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args()
    out = os.path.abspath(args.out)
    try:
        stamp = stamp_text()
    except ImportError as e:
        print(f"gen_backend_tests: {e}; run scripts/setup-test-deps.sh", file=sys.stderr)
        return 1
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(f"{out}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        current = None
        try:
            with open(os.path.join(out, "STAMP")) as f:
                current = f.read()
        except OSError:
            pass
        if args.force or current != stamp:
            generate(out, args.quiet)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
