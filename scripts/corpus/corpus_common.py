"""Shared pieces of the real-model corpus: the on-disk layout and the oracle.

A corpus directory holds, per model NAME:

    NAME.onnx           the model (dynamic dims as the exporter declared them)
    NAME.json           description, see `describe` / `write_entry`
    NAME.size{k}.npz    inputs in0, in1, ... (graph-input order) and
                        onnxruntime's outputs out0, out1, ... for size k

NAME.json:
    name, source (the framework / model family), exporter, exporter_version,
    opset (default domain), opsets {domain: version}, file, file_bytes,
    nodes, inputs / outputs: [{name, elem_type, dtype, dims}] where a dim is
    an int (dim_value; may be <= 0 for exporters that write -1 or 0), a
    string (dim_param) or null (neither), sizes: [{npz, shapes {input:
    shape}, outputs {output: shape}, ort_ms}], notes.

The oracle runs onnxruntime on the CPU with one thread and every graph
optimization disabled (plain ONNX semantics, as scripts/ort_oracle.py does).

Works with the system python3 (onnx, onnxruntime, numpy) and inside the
exporter venvs; imports nothing else.
"""

import json
import os
import time

# ONNX TensorProto element type -> numpy dtype name.
ELEM_DTYPES = {
    1: "float32",
    2: "uint8",
    3: "int8",
    4: "uint16",
    5: "int16",
    6: "int32",
    7: "int64",
    9: "bool",
    10: "float16",
    11: "float64",
    12: "uint32",
    13: "uint64",
}

# Tolerances the corpus is judged by (issue 14).
RTOL = 1e-3
ATOL = 1e-4


def dims_of(value_info):
    """Declared dims of a graph input/output: int, dim_param name or None."""
    t = value_info.type
    if not t.HasField("tensor_type"):
        return None
    tt = t.tensor_type
    if not tt.HasField("shape"):
        return None  # unranked
    dims = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            dims.append(int(d.dim_value))
        elif d.HasField("dim_param"):
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return dims


def describe_value(vi):
    t = vi.type
    kind = t.WhichOneof("value")
    if kind == "sequence_type" and t.sequence_type.elem_type.WhichOneof("value") == "map_type":
        # A ZipMap's maps: compared in their tensor form (zipmap_tensor).
        return {"name": vi.name, "elem_type": 1, "dtype": "float32", "dims": None, "kind": "zipmap"}
    if kind != "tensor_type":
        return {"name": vi.name, "elem_type": None, "dtype": None, "dims": None, "kind": kind}
    et = t.tensor_type.elem_type
    return {
        "name": vi.name,
        "elem_type": et,
        "dtype": ELEM_DTYPES.get(et),
        "dims": dims_of(vi),
    }


def is_dynamic(dims):
    return dims is None or any(not isinstance(d, int) or d <= 0 for d in dims)


def ort_session(path, optimized=False, threads=1):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    if not optimized:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def write_entry(outdir, name, model_path, sizes, source, exporter, exporter_version="", notes="", extra=None,
                oracle=None):
    """Describe MODEL_PATH in OUTDIR/NAME.json and run the oracle at each size.

    SIZES is a list of {input_name: numpy array} (every graph input, any
    order). ORACLE(feeds) -> outputs replaces onnxruntime (for ops it does
    not run yet). Returns the JSON dict. Raises if the oracle cannot run a
    size (the caller records the model as failed).
    """
    import numpy as np
    import onnx

    model = onnx.load(str(model_path), load_external_data=False)
    g = model.graph
    init_names = {i.name for i in g.initializer}
    inputs = [describe_value(v) for v in g.input if v.name not in init_names]
    outputs = [describe_value(v) for v in g.output]
    opsets = {(o.domain or "ai.onnx"): int(o.version) for o in model.opset_import}
    entry = {
        "name": name,
        "source": source,
        "exporter": exporter,
        "exporter_version": exporter_version,
        "producer": f"{model.producer_name} {model.producer_version}".strip(),
        "opset": opsets.get("ai.onnx"),
        "opsets": opsets,
        "ir_version": int(model.ir_version),
        "file": os.path.basename(str(model_path)),
        "file_bytes": os.path.getsize(str(model_path)),
        "nodes": len(g.node),
        "ops": sorted({(n.domain + "." if n.domain else "") + n.op_type for n in g.node}),
        "inputs": inputs,
        "outputs": outputs,
        "dynamic_inputs": [i["name"] for i in inputs if is_dynamic(i["dims"])],
        "sizes": [],
        "notes": notes,
    }
    if extra:
        entry.update(extra)
    if oracle is None:
        sess = ort_session(model_path)
        oracle = lambda feeds: sess.run(None, feeds)  # noqa: E731
    names = [i["name"] for i in inputs]
    for k, feeds in enumerate(sizes):
        missing = [n for n in names if n not in feeds]
        if missing:
            raise ValueError(f"size {k}: no value for inputs {missing}")
        arrays = [np.asarray(feeds[n], order="C") for n in names]
        t0 = time.perf_counter()
        outs = oracle(dict(zip(names, arrays)))
        ort_ms = (time.perf_counter() - t0) * 1e3
        # A ZipMap's list of {label: probability} maps: its tensor form
        # [N, C] in label order (what compiled code returns).
        outs = zipmap_tensors(np, model_path, outs)
        for o, v in zip(outputs, outs):
            if not isinstance(v, np.ndarray):
                raise TypeError(f"output '{o['name']}' is a {type(v).__name__}, not a tensor")
        npz = f"{name}.size{k}.npz"
        blobs = {f"in{i}": a for i, a in enumerate(arrays)}
        blobs.update({f"out{i}": np.asarray(v) for i, v in enumerate(outs)})
        np.savez(os.path.join(outdir, npz), **blobs)
        entry["sizes"].append(
            {
                "npz": npz,
                "shapes": {n: list(a.shape) for n, a in zip(names, arrays)},
                "outputs": {o["name"]: list(np.shape(v)) for o, v in zip(outputs, outs)},
                # largest |value| per output: near 0 means the tolerance
                # check is vacuous (atol dominates), see `degenerate`
                "output_max_abs": {o["name"]: max_abs(v) for o, v in zip(outputs, outs)},
                "ort_ms": round(ort_ms, 3),
            }
        )
    scales = [x for s in entry["sizes"] for x in s["output_max_abs"].values() if x is not None]
    entry["degenerate"] = bool(scales) and max(scales) < 100 * ATOL
    with open(os.path.join(outdir, f"{name}.json"), "w") as f:
        json.dump(entry, f, indent=1)
        f.write("\n")
    return entry


def zipmap_tensor(np, v, width=None):
    """A ZipMap's list of {label: probability} maps as its tensor form
    [N, C] in label order (what compiled code returns); other values as
    they are. WIDTH (the number of labels) shapes an empty list."""
    if isinstance(v, list) and all(isinstance(d, dict) for d in v) and (v or width is not None):
        rows = [[float(d[k]) for k in d] for d in v]
        return np.array(rows, dtype=np.float32).reshape(len(rows), width if width is not None else -1)
    return v


def zipmap_widths(model_path):
    """Per graph output of the model: its ZipMap's number of labels, or
    None."""
    import onnx

    g = onnx.load(str(model_path), load_external_data=False).graph
    widths = {}
    for n in g.node:
        if n.op_type == "ZipMap" and n.domain == "ai.onnx.ml":
            for a in n.attribute:
                if a.name in ("classlabels_int64s", "classlabels_strings"):
                    widths[n.output[0]] = len(a.ints) or len(a.strings)
    return [widths.get(o.name) for o in g.output]


def zipmap_tensors(np, model_path, outs):
    """`zipmap_tensor` over a run's outputs."""
    return [zipmap_tensor(np, v, w) for v, w in zip(outs, zipmap_widths(model_path))]


def max_abs(v):
    import numpy as np

    v = np.asarray(v)
    if v.size == 0 or v.dtype.kind not in "fiub":
        return None
    return float(np.max(np.abs(v.astype(np.float64))))


def random_feeds(inputs_spec, seed):
    """{name: (shape, dtype, kind)} -> arrays; kind 'normal', 'uniform',
    ('int', low, high) or ('const', value)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = {}
    for name, (shape, dtype, kind) in inputs_spec.items():
        if kind == "normal":
            out[name] = rng.standard_normal(shape).astype(dtype)
        elif kind == "uniform":
            out[name] = rng.random(shape).astype(dtype)
        elif isinstance(kind, tuple) and kind[0] == "int":
            out[name] = rng.integers(kind[1], kind[2], size=shape).astype(dtype)
        elif isinstance(kind, tuple) and kind[0] == "const":
            out[name] = np.full(shape, kind[1], dtype=dtype)
        else:
            raise ValueError(f"unknown input kind {kind!r}")
    return out


class GraphBuilder:
    """Nodes, initializers and outputs of a hand-built graph (the CI
    model scripts): each node and its outputs are named after its type and
    position; `out` exposes a value as a graph output through an Identity."""

    def __init__(self, seed):
        import numpy as np

        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.inits = []
        self.outputs = []
        self.n = 0

    def op(self, op_type, inputs, n_out=1, domain="", **attrs):
        from onnx import helper

        self.n += 1
        outs = [f"{op_type.lower()}_{self.n}_{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=f"{op_type}_{self.n}", domain=domain, **attrs))
        return outs if n_out > 1 else outs[0]

    def const(self, name, value, dtype="float32"):
        import numpy as np
        from onnx import numpy_helper

        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def out(self, name, value, elem, dims):
        from onnx import helper

        self.nodes.append(helper.make_node("Identity", [value], [name], name=f"out_{name}"))
        self.outputs.append(helper.make_tensor_value_info(name, elem, dims))
