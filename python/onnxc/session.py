"""`InferenceSession`: onnxruntime's session API on a model compiled ahead
of time to a shared library (cached by content, so a model compiles once)."""

from . import _onnxc
from ._options import llvm_bin, model_source, shape_specs


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


class InferenceSession:
    """Compiles `path_or_bytes` (a path, the model's bytes or an
    onnx.ModelProto) through onnxc's pipeline into a shared library, loads
    it, and runs it like `onnxruntime.InferenceSession`.

    threads: threads of the compiled code's parallel loops (onnxruntime's
        intra_op_num_threads): None, all cores of the machine; 1, serial
        code without an OpenMP runtime; N, N threads. The environment
        variable ONNXC_NUM_THREADS overrides it when the code runs. An
        onnxruntime.SessionOptions in this place (code written for
        onnxruntime: `InferenceSession(path, sess_options, providers=...)`)
        gives its intra_op_num_threads (0: None).
    input_shapes: fixes input dims before compiling, {name: [1, 3, None,
        None]} (None keeps a dim dynamic) or ["name=1x3x?x?"].
    cache_dir: where compiled libraries are kept (default
        $ONNXC_CACHE_DIR, else ~/.cache/onnxc/sessions).
    target_cpu: the CPU the library is built for: None (default) or
        "native", this machine, which runs it (its instruction sets are part
        of the cache key, so a cache shared between machines stays safe);
        or a name `onnxc compile --target-cpu` takes ("x86-64-v2", the
        portable baseline; "x86-64-v3"; ...).
    providers: only 'CPUExecutionProvider' (for code written for
        onnxruntime); provider_options is accepted and ignored.
    """

    def __init__(self, path_or_bytes, threads=None, input_shapes=None, cache_dir=None, *, providers=None,
                 target_cpu=None, provider_options=None):
        if hasattr(threads, "intra_op_num_threads"):
            threads = threads.intra_op_num_threads or None
        if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool) or threads < 1):
            raise ValueError(f"threads must be a positive int or None, got {threads!r}")
        for p in providers or []:
            name = p[0] if isinstance(p, tuple) else p
            if name != "CPUExecutionProvider":
                raise ValueError(f"provider {name!r} is not available: onnxc compiles for the CPU")
        self._threads = threads
        self._native = _onnxc.Session(
            model_source(path_or_bytes),
            shape_specs(input_shapes),
            None if cache_dir is None else str(cache_dir),
            llvm_bin(),
            target_cpu,
            threads,
        )
        self._inputs = [NodeArg(*t) for t in self._native.inputs]
        self._outputs = [NodeArg(*t) for t in self._native.outputs]

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_providers(self):
        return ["CPUExecutionProvider"]

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model: `input_feed` maps every input name to a numpy
        array (or anything numpy.asarray takes); returns the outputs named
        by `output_names` (all when None) as numpy arrays. Arrays that are
        C-contiguous and of the input's dtype are passed without a copy;
        the GIL is released while the model runs."""
        if not isinstance(input_feed, dict):
            raise TypeError(f"input_feed must be a dict {{name: array}}, got {type(input_feed).__name__}")
        if isinstance(output_names, str):
            output_names = [output_names]
        names = None if output_names is None else list(output_names)
        return self._native.run(names, input_feed)

    @property
    def library_path(self):
        """The compiled shared library (in the cache directory)."""
        return str(self._native.library_path)

    @property
    def cache_hit(self):
        """True when the library came from the cache (nothing compiled)."""
        return self._native.cache_hit
