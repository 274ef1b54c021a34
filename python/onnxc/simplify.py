"""`simplify` (onnx-simplifier's API) and `fold` (file to file)."""

import os
import warnings

import numpy as np

from . import _onnxc
from ._options import existing, model_source, shape_specs

# Tolerances of the check against the original model.
RTOL = 1e-3
ATOL = 1e-4


def simplify(model, input_shapes=None, check_n=1):
    """Folds constants out of `model` (an onnx.ModelProto, a path or bytes)
    the way `onnxc fold` does; returns (onnx.ModelProto, ok).

    ok is True when onnxruntime ran the original and the simplified model on
    `check_n` random inputs and their outputs agreed; without onnxruntime
    (or with check_n=0) the result is not checked, ok is False and a
    warning says so.
    """
    import onnx

    src = model_source(model)
    specs = shape_specs(input_shapes)
    out = _onnxc.simplify(src, specs)
    result = onnx.load_from_string(out)
    if check_n <= 0:
        warnings.warn("simplify: check_n=0, the result was not checked", stacklevel=2)
        return result, False
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        warnings.warn(
            "simplify: onnxruntime is not installed, the result was not checked against the original",
            stacklevel=2,
        )
        return result, False
    original = _read(src)
    return result, _same_outputs(original, out, _fixed_dims(input_shapes, specs), check_n)


def fold(src_path, dst_path, input_shapes=None):
    """`onnxc fold SRC -o DST`: constant-folds the model file `src_path` into
    `dst_path`, streaming weights file to file (never the whole model in
    memory)."""
    _onnxc.fold(existing(src_path), os.fspath(dst_path), shape_specs(input_shapes))


def _read(src):
    if isinstance(src, bytes):
        return src
    with open(src, "rb") as f:
        return f.read()


def _fixed_dims(input_shapes, specs):
    """{name: [int or None]} of the dims input_shapes fixes."""
    fixed = {}
    for s in specs:
        name, _, dims = s.rpartition("=")
        fixed[name] = [None if d == "?" else int(d) for d in dims.split("x")] if dims else []
    return fixed


def _feeds(session, fixed, rng):
    """Random inputs; dims neither declared nor fixed are 1."""
    feeds = {}
    for i in session.get_inputs():
        given = fixed.get(i.name)
        dims = []
        for k, d in enumerate(i.shape):
            g = given[k] if given is not None and k < len(given) else None
            dims.append(g if g is not None else d if isinstance(d, int) and d >= 0 else 1)
        dtype = _ORT_TYPES.get(i.type)
        if dtype is None:
            raise TypeError(f"input {i.name!r} of type {i.type}")
        if dtype is object:
            # Short words, mixed case: what text pipelines (skl2onnx) take.
            words = np.array(["a", "B", "cd", "Ef", "ghi", ""], dtype=object)
            feeds[i.name] = words[rng.integers(0, len(words), dims)]
        elif np.issubdtype(dtype, np.floating):
            feeds[i.name] = rng.standard_normal(dims).astype(dtype)
        elif dtype == np.bool_:
            feeds[i.name] = rng.integers(0, 2, dims).astype(np.bool_)
        else:
            feeds[i.name] = rng.integers(0, 2, dims).astype(dtype)
    return feeds


_ORT_TYPES = {
    "tensor(float)": np.float32,
    "tensor(double)": np.float64,
    "tensor(float16)": np.float16,
    "tensor(int8)": np.int8,
    "tensor(int16)": np.int16,
    "tensor(int32)": np.int32,
    "tensor(int64)": np.int64,
    "tensor(uint8)": np.uint8,
    "tensor(uint16)": np.uint16,
    "tensor(uint32)": np.uint32,
    "tensor(uint64)": np.uint64,
    "tensor(bool)": np.bool_,
    "tensor(string)": object,
}


def _same_outputs(original, simplified, fixed, check_n):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        a = ort.InferenceSession(original, opts, providers=["CPUExecutionProvider"])
        b = ort.InferenceSession(simplified, opts, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime's own errors have no common base
        warnings.warn(f"simplify: onnxruntime cannot load the models to check them: {e}", stacklevel=3)
        return False
    rng = np.random.default_rng(0)
    names = [o.name for o in b.get_outputs()]
    for _ in range(check_n):
        try:
            feeds = _feeds(a, fixed, rng)
            want = a.run(names, feeds)
            got = b.run(names, feeds)
        except Exception as e:
            warnings.warn(f"simplify: onnxruntime failed to run the models to check them: {e}", stacklevel=3)
            return False
        for name, w, g in zip(names, want, got):
            if w.dtype == object or g.dtype == object:
                same = w.shape == g.shape and np.array_equal(w, g)
            else:
                same = w.shape == g.shape and np.allclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True)
            if not same:
                warnings.warn(f"simplify: output {name!r} differs from the original model's", stacklevel=3)
                return False
    return True
