"""`InferenceSession`: onnxruntime's session API on a model compiled ahead
of time to a shared library (cached by content, so a model compiles once)."""

import json
import os
import threading
import time
import warnings

from . import _onnxc
from ._options import llvm_bin, model_source, shape_specs
from ._ort import (
    IOBinding,
    ModelMetadata,
    OrtValue,
    SessionOptions,
    read_session_options,
    warn_once,
)
from ._onnxc import Fail

CPU = "CPUExecutionProvider"

# onnxc's own keyword arguments, beside onnxruntime's.
_EXTRAS = ("threads", "input_shapes", "cache_dir", "target_cpu")


class NodeArg:
    """An input or output: `.name`, `.type` ('tensor(float)', ...) and
    `.shape`, a list of ints for static dims and, for dynamic ones, the
    dim's name from the model (str) or None."""

    __slots__ = ("name", "type", "shape")

    def __init__(self, name, type, shape):
        self.name = name
        self.type = type
        self.shape = shape

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


def resolve_providers(providers, provider_options):
    """onnxruntime's provider list semantics on a machine that has only the
    CPU: names or (name, options) pairs; unavailable ones are warned about
    and the CPU is used, as onnxruntime falls back. {CPU: its options}."""
    if providers is None:
        return {CPU: {}}
    providers = list(providers)
    if provider_options is not None and len(provider_options) != len(providers):
        raise ValueError("'providers' and 'provider_options' should be the same length if both are given.")
    cpu_options = {}
    for k, p in enumerate(providers):
        name, options = (p[0], p[1]) if isinstance(p, (tuple, list)) else (p, None)
        if not isinstance(name, str):
            raise TypeError(f"a provider is a name or a (name, options) pair, got {p!r}")
        if provider_options is not None:
            options = provider_options[k]
        if name == CPU:
            cpu_options = {str(a): str(b) for a, b in (options or {}).items()}
        else:
            warnings.warn(
                f"Specified provider '{name}' is not in available provider names. "
                f"Available providers: '{CPU}' (onnxc compiles for the CPU; falling back to it)",
                UserWarning,
                stacklevel=3,
            )
    return {CPU: cpu_options}


class InferenceSession:
    """onnxruntime's `InferenceSession(path_or_bytes, sess_options=None,
    providers=None, provider_options=None)`: compiles the model (a path,
    its bytes or an onnx.ModelProto) through onnxc's pipeline into a shared
    library, cached by content, loads it and runs it.

    sess_options: an `onnxc.SessionOptions` or an `onnxruntime.SessionOptions`
        (docs/PYTHON.md lists what each field does here).
    providers: onnxruntime's list; any provider but the CPU is warned about
        and the CPU is used, as onnxruntime falls back.

    onnxc's own keywords:
    threads: the compiled code's threads (overrides intra_op_num_threads):
        None, all cores; 1, serial code without an OpenMP runtime; N.
        ONNXC_NUM_THREADS overrides it when the code runs.
    input_shapes: fixes input dims before compiling, {name: [1, 3, None,
        None]} (None keeps a dim dynamic) or ["name=1x3x?x?"].
    cache_dir: where compiled libraries are kept (default
        $ONNXC_CACHE_DIR, else ~/.cache/onnxc/sessions).
    target_cpu: None or "native" (this machine; its instruction sets are in
        the cache key), or a `--target-cpu` name ("x86-64-v2", ...).
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        extras = _extras(kwargs)
        self._clock0 = started = time.perf_counter_ns()
        self._profile_start_ns = time.time_ns()
        if sess_options is not None and not hasattr(sess_options, "intra_op_num_threads"):
            raise TypeError(
                f"sess_options must be a SessionOptions (onnxc's or onnxruntime's), got "
                f"{type(sess_options).__name__}; onnxc's thread count is the keyword threads=N"
            )
        self._sess_options = SessionOptions() if sess_options is None else sess_options
        opts = read_session_options(self._sess_options)
        self._providers = resolve_providers(providers, provider_options)
        threads = extras.get("threads", opts["threads"])
        if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool) or threads < 1):
            raise ValueError(f"threads must be a positive int or None, got {threads!r}")
        source = model_source(path_or_bytes)
        info = _onnxc.model_info(source)
        specs = shape_specs(extras.get("input_shapes"))
        specs += _free_dim_specs(info["inputs"], opts["free_dims"], specs)
        self._native = _onnxc.Session(
            source,
            specs,
            None if extras.get("cache_dir") is None else str(extras["cache_dir"]),
            llvm_bin(),
            extras.get("target_cpu"),
            threads,
        )
        self._meta = ModelMetadata(info)
        self._inputs = [NodeArg(*t) for t in self._native.inputs]
        self._outputs = [NodeArg(*t) for t in self._native.outputs]
        if opts["optimized_path"]:
            _write_folded(source, opts["optimized_path"], specs)
        self._profile = None
        if opts["profiling"]:
            self._profile = {"prefix": opts["profile_prefix"], "events": [], "lock": threading.Lock()}
            self._record("session_initialization", started, time.perf_counter_ns())

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_overridable_initializers(self):
        """Initializers that are also graph inputs cannot be fed: none."""
        return []

    def get_modelmeta(self):
        return self._meta

    def get_session_options(self):
        return self._sess_options

    def get_providers(self):
        return list(self._providers)

    def get_provider_options(self):
        return {k: dict(v) for k, v in self._providers.items()}

    def set_providers(self, providers=None, provider_options=None):
        self._providers = resolve_providers(providers, provider_options)

    def disable_fallback(self):
        """There is one provider, the CPU: nothing to fall back from."""

    def enable_fallback(self):
        """There is one provider, the CPU: nothing to fall back from."""

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model: `input_feed` maps every input name to a numpy
        array (or anything numpy.asarray takes); returns the outputs named
        by `output_names` (all when None) as numpy arrays. Arrays that are
        C-contiguous and of the input's dtype are passed without a copy;
        the GIL is released while the model runs."""
        if run_options is not None and getattr(run_options, "terminate", False):
            raise Fail("Exiting due to terminate flag being set to true.")
        if not isinstance(input_feed, dict):
            raise TypeError(f"input_feed must be a dict {{name: array}}, got {type(input_feed).__name__}")
        if isinstance(output_names, str):
            output_names = [output_names]
        names = None if output_names is None else list(output_names)
        t0 = time.perf_counter_ns()
        out = self._native.run(names, input_feed)
        if self._profile is not None:
            self._record("model_run", t0, time.perf_counter_ns())
        return out

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
        feed = {k: v.numpy() for k, v in input_dict_ort_values.items()}
        return [OrtValue(a) for a in self.run(output_names, feed, run_options)]

    def io_binding(self):
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        iobinding._run(run_options)

    def get_profiling_start_time_ns(self):
        return self._profile_start_ns

    def end_profiling(self):
        """Writes the trace of this session (onnxruntime's JSON format:
        initialization and each run) to `<profile_file_prefix>_<date>.json`
        in the current directory and returns its name; "" when profiling
        is off. Profiling stops."""
        if self._profile is None:
            return ""
        prof, self._profile = self._profile, None
        name = f"{prof['prefix']}_{time.strftime('%Y-%m-%d_%H-%M-%S')}.json"
        with open(name, "w") as f:
            json.dump(prof["events"], f)
        return name

    def _record(self, name, t0, t1):
        prof = self._profile
        if prof is None:
            return
        event = {
            "cat": "Session",
            "pid": os.getpid(),
            "tid": threading.get_native_id(),
            "dur": (t1 - t0) // 1000,
            "ts": (t0 - self._clock0) // 1000,
            "ph": "X",
            "name": name,
            "args": {},
        }
        with prof["lock"]:
            prof["events"].append(event)

    @property
    def library_path(self):
        """The compiled shared library (in the cache directory)."""
        return str(self._native.library_path)

    @property
    def cache_hit(self):
        """True when the library came from the cache (nothing compiled)."""
        return self._native.cache_hit


def _extras(kwargs):
    """onnxc's keywords; onnxruntime's `disabled_optimizers` is warned about;
    anything else is a TypeError, as for any function."""
    extras = {}
    for k, v in kwargs.items():
        if k in _EXTRAS:
            extras[k] = v
        elif k == "disabled_optimizers":
            if v:
                warn_once("disabled_optimizers", "names onnxruntime's optimizers")
        else:
            raise TypeError(f"InferenceSession() got an unexpected keyword argument {k!r}")
    return extras


def _free_dim_specs(inputs, free_dims, given):
    """`add_free_dimension_override_by_name` as input_shapes entries, for
    the inputs `given` does not already fix."""
    if not free_dims:
        return []
    named = {s.rpartition("=")[0] for s in given}
    specs = []
    for name, dims in inputs:
        if name in named or dims is None or not any(d in free_dims for d in dims if isinstance(d, str)):
            continue
        fixed = [str(d) if isinstance(d, int) and d >= 0 else str(free_dims[d]) if d in free_dims else "?"
                 for d in dims]
        specs.append(f"{name}=" + "x".join(fixed))
    return specs


def _write_folded(source, path, specs):
    """`optimized_model_filepath`: the model as onnxc folds it."""
    if isinstance(source, str):
        _onnxc.fold(source, os.fspath(path), specs)
        return
    with open(path, "wb") as f:
        f.write(_onnxc.simplify(source, specs))
