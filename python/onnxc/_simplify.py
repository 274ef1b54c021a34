"""`simplify` (onnx-simplifier's signature and result) and `fold` (file to
file, any size)."""

import contextlib
import os
import tempfile
import warnings

import numpy as np

from . import _onnxc
from ._options import existing, model_source, shape_specs, writable
from ._ort import NotApplicableWarning, numpy_type, warn_once

# Tolerances of the check against the original model (onnx-simplifier's).
RTOL = 1e-4
ATOL = 1e-5


class CheckError(RuntimeError):
    """`simplify`'s check could not run the original model: the message
    names the model and the input sizes tried."""


def simplify(
    model,
    check_n=0,
    perform_optimization=True,
    skip_fuse_bn=False,
    overwrite_input_shapes=None,
    test_input_shapes=None,
    skipped_optimizers=None,
    skip_constant_folding=False,
    skip_shape_inference=False,
    input_data=None,
    dynamic_input_shape=False,
    custom_lib=None,
    include_subgraph=False,
    unused_output=None,
    tensor_size_threshold="1.5GB",
    mutable_initializer=False,
    *,
    input_shapes=None,
    check_rtol=RTOL,
    check_atol=ATOL,
    input_fill="random",
    output_path=None,
):
    """onnx-simplifier's `simplify`, folding as `onnxc fold` does; returns
    (onnx.ModelProto, check_ok). `model` is a ModelProto, a path or bytes.

    overwrite_input_shapes fixes input dims in the model ({name: dims} or
    onnxc's ["name=1x3x?x?"]); test_input_shapes gives the sizes the check
    runs at (else the fixed or declared dims, and 1 for dynamic ones);
    input_shapes (deprecated in onnx-simplifier) sets both. check_n > 0
    runs the original and the result in onnxruntime on that many inputs
    (random, or `input_fill` ones/zeros/arange, or `input_data`) and
    compares them (check_rtol, check_atol); check_ok is then whether they
    agreed, else whether the result passes onnx.checker. A check that
    cannot run the original model raises `CheckError` naming the model
    and the sizes. unused_output removes those outputs first; output_path
    also writes the result there.
    """
    import onnx

    if isinstance(check_n, dict) or not isinstance(check_n, int) or isinstance(check_n, bool):
        raise TypeError(f"check_n must be an int (onnx-simplifier's second argument), got {check_n!r}")
    if input_shapes is not None:
        overwrite_input_shapes = overwrite_input_shapes or input_shapes
        test_input_shapes = test_input_shapes or input_shapes
    _options_that_do_not_apply(perform_optimization, skip_fuse_bn, skipped_optimizers, skip_constant_folding,
                                custom_lib, tensor_size_threshold, mutable_initializer)
    src = model_source(model)
    external = isinstance(src, str) and _onnxc.model_info(src)["external_data"]
    specs = shape_specs(overwrite_input_shapes)
    with contextlib.ExitStack() as cleanup:
        tmp = cleanup.enter_context(tempfile.TemporaryDirectory(prefix="onnxc-simplify-"))
        if unused_output:
            src = _drop_outputs(src, unused_output, tmp, cleanup, external)
        if external:
            result, out = _simplify_external(src, specs, output_path, tmp)
        else:
            data = _onnxc.simplify(src, specs)
            result, out = onnx.load_from_string(data), data
            if output_path is not None:
                with open(writable(output_path), "wb") as f:
                    f.write(data)
        if check_n <= 0:
            return result, _passes_checker(out)
        try:
            import onnxruntime  # noqa: F401
        except ImportError:
            warnings.warn(
                f"simplify: onnxruntime is not installed, {_name(model)} was not checked against the original",
                stacklevel=2,
            )
            return result, False
        fixed = _fixed_dims(shape_specs(test_input_shapes) or specs)
        check = _Check(src, out, _name(model), fixed, (check_rtol, check_atol), input_fill, input_data)
        return result, check.run(check_n)


# Tensors of at least this many bytes go to external data (onnx.save's
# default size_threshold).
EXTERNAL_THRESHOLD = 1024


def _simplify_external(src, specs, output_path, tmp):
    """`simplify` of a model that keeps its weights in external data: folded
    file to file (any size, weights streamed), its weights in external data
    beside the result. With output_path the result refers to them there
    (nothing loaded: onnx.load(output_path, load_external_data=False));
    without, it is loaded whole, as onnx.load loads the original.
    (result, path of the simplified model)."""
    import onnx

    dst = writable(output_path) if output_path is not None else os.path.join(tmp, "simplified.onnx")
    _onnxc.fold(src, dst, specs, EXTERNAL_THRESHOLD, None)
    return onnx.load(dst, load_external_data=output_path is None), dst


def fold(src, dst, input_shapes=None, external_data_threshold=None, expansion_bound=None):
    """`onnxc fold SRC -o DST`: constant-folds `src` (a path, bytes or a
    ModelProto) into the file `dst`, streaming weights file to file (never
    the whole model in memory; any size). external_data_threshold: tensors
    of at least that many bytes go to `DST.data` (as the CLI's
    --external-data-threshold); expansion_bound as --fold-expansion-bound."""
    dst = writable(dst)
    if isinstance(src, (str, os.PathLike)):
        _onnxc.fold(existing(src), dst, shape_specs(input_shapes), external_data_threshold, expansion_bound)
        return
    data = model_source(src)
    tmp = f"{dst}.onnxc-src.onnx"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        _onnxc.fold(tmp, dst, shape_specs(input_shapes), external_data_threshold, expansion_bound)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _options_that_do_not_apply(perform_optimization, skip_fuse_bn, skipped_optimizers, skip_constant_folding,
                               custom_lib, tensor_size_threshold, mutable_initializer):
    given = {
        "perform_optimization=False": not perform_optimization,
        "skip_fuse_bn=True": skip_fuse_bn,
        "skipped_optimizers": bool(skipped_optimizers),
        "skip_constant_folding=True": skip_constant_folding,
        "custom_lib": custom_lib is not None,
        "tensor_size_threshold": tensor_size_threshold != "1.5GB",
        "mutable_initializer=True": mutable_initializer,
    }
    for what, set_ in given.items():
        if set_:
            warn_once(f"simplify({what})", "names onnx-simplifier's passes; onnxc folds as `onnxc fold` does "
                      "(bounded growth, BatchNormalization fused)")


def _passes_checker(model):
    import onnx

    try:
        onnx.checker.check_model(model)
        return True
    except Exception as e:  # onnx.checker's errors have no common base beyond this
        warnings.warn(f"simplify: the result does not pass onnx.checker: {e}", NotApplicableWarning, stacklevel=3)
        return False


def _drop_outputs(src, names, tmp, cleanup, external):
    """The model without outputs `names`: bytes, or for a path a new file
    (next to it when its weights are external data, which it names
    relative to its directory, removed by `cleanup`; else in `tmp`)."""
    import onnx

    if isinstance(src, bytes):
        m = onnx.load_from_string(src)
    else:
        m = onnx.load(src, load_external_data=False)
    unknown = set(names) - {o.name for o in m.graph.output}
    if unknown:
        raise ValueError(f"unused_output: {sorted(unknown)} are not outputs of the model")
    keep = [o for o in m.graph.output if o.name not in set(names)]
    del m.graph.output[:]
    m.graph.output.extend(keep)
    if isinstance(src, bytes):
        return m.SerializeToString()
    if external:
        fd, path = tempfile.mkstemp(prefix=".onnxc-outputs-", suffix=".onnx", dir=os.path.dirname(os.path.abspath(src)))
        os.close(fd)
        cleanup.callback(os.remove, path)
    else:
        path = os.path.join(tmp, "outputs-dropped.onnx")
    onnx.save(m, path)
    return path


def _name(model):
    if isinstance(model, (str, os.PathLike)):
        return f"'{os.fspath(model)}'"
    graph = getattr(getattr(model, "graph", None), "name", "")
    return f"the model (graph {graph!r})" if graph else "the model"


def _fixed_dims(specs):
    """{name: [int or None]} of the dims `specs` fixes."""
    fixed = {}
    for s in specs:
        name, _, dims = s.rpartition("=")
        fixed[name] = [None if d == "?" else int(d) for d in dims.split("x")] if dims else []
    return fixed


class _Check:
    """Runs the original and the simplified model in onnxruntime and
    compares their outputs."""

    def __init__(self, original, simplified, name, fixed, tolerance, fill, input_data):
        self.original, self.simplified, self.name = original, simplified, name
        self.fixed, (self.rtol, self.atol) = fixed, tolerance
        if fill not in ("random", "ones", "zeros", "arange"):
            raise ValueError(f"input_fill={fill!r}: expected random, ones, zeros or arange")
        self.fill, self.input_data = fill, input_data

    def run(self, n):
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        opts.log_severity_level = 3  # its errors are ours to report
        try:
            a = ort.InferenceSession(self.original, opts, providers=["CPUExecutionProvider"])
        except Exception as e:  # onnxruntime's errors have no common base
            raise CheckError(f"simplify: cannot check {self.name}: onnxruntime cannot load it ({e})") from None
        try:
            b = ort.InferenceSession(self.simplified, opts, providers=["CPUExecutionProvider"])
        except Exception as e:
            warnings.warn(f"simplify: onnxruntime cannot load the result for {self.name}: {e}", stacklevel=3)
            return False
        names = [o.name for o in b.get_outputs()]
        rng = np.random.default_rng(0)
        for _ in range(n):
            feeds = self.feeds(a, rng)
            try:
                want = a.run(names, feeds)
            except Exception as e:  # onnxruntime's errors have no common base
                sizes = {k: list(v.shape) for k, v in feeds.items()}
                raise CheckError(
                    f"simplify: cannot check {self.name}: onnxruntime fails on the original model at input "
                    f"sizes {sizes} ({' '.join(str(e).split())}); pass test_input_shapes (or input_data) it can run, or check_n=0"
                ) from None
            got = b.run(names, feeds)
            for name, w, g in zip(names, want, got):
                if not self.same(w, g):
                    warnings.warn(f"simplify: output {name!r} of {self.name} differs from the original model's "
                                  f"at input sizes { {k: list(v.shape) for k, v in feeds.items()} }", stacklevel=3)
                    return False
        return True

    def same(self, w, g):
        if w.dtype == object or g.dtype == object:
            return w.shape == g.shape and np.array_equal(w, g)
        return w.shape == g.shape and np.allclose(g, w, rtol=self.rtol, atol=self.atol, equal_nan=True)

    def feeds(self, session, rng):
        """input_data, else filled inputs; dims neither declared nor fixed are 1."""
        if self.input_data is not None:
            return dict(self.input_data)
        feeds = {}
        for i in session.get_inputs():
            given = self.fixed.get(i.name)
            dims = [g if g is not None else d if isinstance(d, int) and d >= 0 else 1
                    for d, g in zip(i.shape, given if given is not None else [None] * len(i.shape))]
            dtype = numpy_type(i.type)
            if dtype is None:
                raise TypeError(f"simplify: cannot make a check input {i.name!r} of type {i.type}")
            feeds[i.name] = self.fill_one(dims, dtype, rng)
        return feeds

    def fill_one(self, dims, dtype, rng):
        if dtype is object:
            # Short words, mixed case: what text pipelines (skl2onnx) take.
            words = np.array(["a", "B", "cd", "Ef", "ghi", ""], dtype=object)
            return words[rng.integers(0, len(words), dims)]
        if self.fill == "ones":
            return np.ones(dims, dtype)
        if self.fill == "zeros":
            return np.zeros(dims, dtype)
        if self.fill == "arange":
            return np.arange(int(np.prod(dims)), dtype=dtype).reshape(dims)
        if np.issubdtype(dtype, np.floating):
            return rng.standard_normal(dims).astype(dtype)
        if dtype == np.bool_:
            return rng.integers(0, 2, dims).astype(np.bool_)
        return rng.integers(0, 2, dims).astype(dtype)
