"""onnxruntime's option and value classes, for code written against its API:
`SessionOptions`, `RunOptions`, the enums, `ModelMetadata`, `OrtValue`,
`IOBinding` and the exception names of `onnxruntime.capi.
onnxruntime_pybind11_state`. docs/PYTHON.md lists what each option does
here; those that cannot apply to compiled code are accepted and warned
about once."""

import enum
import warnings

import numpy as np

from ._onnxc import CompileError, Fail, InvalidArgument, InvalidProtobuf


class NotApplicableWarning(UserWarning):
    """An onnxruntime option that has no meaning for compiled code."""


_warned = set()


def warn_once(what, why):
    """One warning per option and process, as such options are set once per
    session and sessions are many."""
    if what in _warned:
        return
    _warned.add(what)
    warnings.warn(f"onnxc: {what} {why}; it is ignored", NotApplicableWarning, stacklevel=4)


# -- errors: onnxruntime's names; ours also derive from the Python
# exceptions code catches (ValueError, RuntimeError, FileNotFoundError).


class NoSuchFile(FileNotFoundError):
    """onnxruntime's NoSuchFile: no model at that path."""


class RuntimeException(RuntimeError):
    """onnxruntime's RuntimeException."""


def _fail(name, doc):
    return type(name, (Fail,), {"__doc__": f"onnxruntime's {name}: {doc}", "__module__": __name__})


EPFail = _fail("EPFail", "an execution provider failed")
EngineError = _fail("EngineError", "the engine failed")
NotImplemented = _fail("NotImplemented", "a feature is not implemented")  # noqa: A001 (onnxruntime's name)
NoModel = _fail("NoModel", "no model")
ModelLoaded = _fail("ModelLoaded", "the model is already loaded")
NotFound = _fail("NotFound", "not found")
DeviceReset = _fail("DeviceReset", "the device was reset")
ModelLoadCanceled = _fail("ModelLoadCanceled", "loading was cancelled")
ModelRequiresCompilation = _fail("ModelRequiresCompilation", "the model must be compiled first")
InvalidGraph = CompileError

ERRORS = {
    "Fail": Fail,
    "InvalidArgument": InvalidArgument,
    "InvalidProtobuf": InvalidProtobuf,
    "InvalidGraph": InvalidGraph,
    "NoSuchFile": NoSuchFile,
    "RuntimeException": RuntimeException,
    "EPFail": EPFail,
    "EngineError": EngineError,
    "NotImplemented": NotImplemented,
    "NoModel": NoModel,
    "ModelLoaded": ModelLoaded,
    "NotFound": NotFound,
    "DeviceReset": DeviceReset,
    "ModelLoadCanceled": ModelLoadCanceled,
    "ModelRequiresCompilation": ModelRequiresCompilation,
}


# -- enums, with onnxruntime's values.


class GraphOptimizationLevel(enum.IntEnum):
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class ExecutionOrder(enum.IntEnum):
    DEFAULT = 0
    PRIORITY_BASED = 1
    MEMORY_EFFICIENT = 2


# -- options


_DEFAULTS = {
    "intra_op_num_threads": 0,
    "inter_op_num_threads": 0,
    "graph_optimization_level": GraphOptimizationLevel.ORT_ENABLE_ALL,
    "execution_mode": ExecutionMode.ORT_SEQUENTIAL,
    "execution_order": ExecutionOrder.DEFAULT,
    "enable_profiling": False,
    "profile_file_prefix": "onnxruntime_profile_",
    "log_severity_level": -1,
    "log_verbosity_level": 0,
    "logid": "",
    "enable_cpu_mem_arena": True,
    "enable_mem_pattern": True,
    "enable_mem_reuse": True,
    "optimized_model_filepath": "",
    "use_deterministic_compute": False,
    "use_per_session_threads": True,
}

# Options whose other values ask for something compiled code does not do
# (it always optimizes, plans its buffers at compile time and runs one
# op after another with parallel loops inside).
_NOT_APPLICABLE = {
    "inter_op_num_threads": "(parallel execution of independent nodes)",
    "graph_optimization_level": "(the compiler always folds and fuses; results are the same)",
    "execution_mode": "(nodes run in order; loops inside them run in parallel)",
    "execution_order": "(the compiler schedules the nodes)",
    "enable_cpu_mem_arena": "(buffers are planned at compile time)",
    "enable_mem_pattern": "(buffers are planned at compile time)",
    "enable_mem_reuse": "(buffers are planned at compile time)",
    "use_per_session_threads": "(the compiled code uses the process's OpenMP pool)",
}


class SessionOptions:
    """onnxruntime's SessionOptions, same fields and defaults. What applies:
    intra_op_num_threads (the compiled code's threads), enable_profiling and
    profile_file_prefix (`InferenceSession.end_profiling`),
    optimized_model_filepath (the folded model is written there),
    add_free_dimension_override_by_name (fixes those dims before
    compiling). Logging fields and use_deterministic_compute are accepted
    (compiled code is deterministic and quiet); the others warn once when
    set to anything but their default."""

    __slots__ = tuple(_DEFAULTS) + ("_config", "_free_dims", "_custom_ops")

    def __init__(self):
        for k, v in _DEFAULTS.items():
            object.__setattr__(self, k, v)
        self._config = {}
        self._free_dims = {}
        self._custom_ops = []

    def add_session_config_entry(self, key, value):
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key):
        return _config_entry(self._config, key, "SessionOptions")

    def add_free_dimension_override_by_name(self, dim_name, dim_value):
        self._free_dims[str(dim_name)] = int(dim_value)

    def add_free_dimension_override_by_denotation(self, dim_denotation, dim_value):
        warn_once("SessionOptions.add_free_dimension_override_by_denotation",
                  "is not supported (use add_free_dimension_override_by_name)")

    def register_custom_ops_library(self, library_path):
        # A model that uses the library's ops then fails to compile, naming them.
        self._custom_ops.append(str(library_path))
        warn_once("SessionOptions.register_custom_ops_library",
                  "cannot load onnxruntime custom-op libraries into compiled code")

    def add_initializer(self, name, ort_value):
        raise NotImplemented(
            f"SessionOptions.add_initializer({name!r}): onnxc compiles the model's own "
            "initializers into its code and cannot replace them; change the model instead"
        )

    def add_external_initializers(self, names, ort_values):
        raise NotImplemented(
            "SessionOptions.add_external_initializers: onnxc compiles the model's own "
            "initializers into its code and cannot replace them; change the model instead"
        )

    def __repr__(self):
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in _DEFAULTS)
        return f"SessionOptions({fields})"


def _plain(v):
    """onnxruntime's enums (pybind11) as ints, so they compare with ours."""
    if isinstance(v, (bool, int, str)) or not hasattr(v, "__int__"):
        return v
    return int(v)


def read_session_options(so):
    """What a session takes from `so` (ours or onnxruntime's): {'threads',
    'profiling', 'profile_prefix', 'optimized_path', 'free_dims'}; warns
    once about options that do not apply."""
    get = lambda k: getattr(so, k, _DEFAULTS[k])  # noqa: E731
    for k, why in _NOT_APPLICABLE.items():
        v = _plain(get(k))
        # Any level but "none at all" is what the compiler does anyway.
        lesser_level = k == "graph_optimization_level" and v != GraphOptimizationLevel.ORT_DISABLE_ALL
        if v != _DEFAULTS[k] and not lesser_level:
            warn_once(f"SessionOptions.{k}={v!r}", f"does not apply to compiled code {why}")
    config = getattr(so, "_config", None)
    if config is None:  # onnxruntime's: its entries cannot be listed
        config = {}
    for key in config:
        warn_once(f"session config entry {key!r}", "does not apply to compiled code")
    threads = get("intra_op_num_threads")
    if not isinstance(threads, int) or threads < 0:
        raise InvalidArgument(f"SessionOptions.intra_op_num_threads must be an int >= 0, got {threads!r}")
    return {
        "threads": threads or None,
        "profiling": bool(get("enable_profiling")),
        "profile_prefix": get("profile_file_prefix"),
        "optimized_path": get("optimized_model_filepath") or None,
        "free_dims": dict(getattr(so, "_free_dims", {})),
    }


def _config_entry(config, key, owner):
    """An entry of `config`; onnxruntime's error when there is none."""
    if key not in config:
        raise RuntimeError(f"{owner} does not have configuration with key: {key}")
    return config[key]


class RunOptions:
    """onnxruntime's RunOptions: accepted by `run`; `terminate` set before a
    call makes it fail at once (compiled code cannot be stopped midway)."""

    __slots__ = ("log_severity_level", "log_verbosity_level", "logid", "only_execute_path_to_fetches",
                 "terminate", "_config")

    def __init__(self):
        self.log_severity_level = -1
        self.log_verbosity_level = 0
        self.logid = ""
        self.only_execute_path_to_fetches = False
        self.terminate = False
        self._config = {}

    def add_run_config_entry(self, key, value):
        self._config[str(key)] = str(value)

    def get_run_config_entry(self, key):
        return _config_entry(self._config, key, "RunOptions")


class ModelMetadata:
    """onnxruntime's ModelMetadata: what the model file says of itself."""

    __slots__ = ("producer_name", "graph_name", "domain", "description", "graph_description", "version",
                 "custom_metadata_map")

    def __init__(self, info):
        self.producer_name = info["producer_name"]
        self.graph_name = info.get("graph_name", "")
        self.domain = info["domain"]
        self.description = info["doc_string"]
        self.graph_description = info.get("graph_doc_string", "")
        # An unset model_version reads as onnxruntime reports it.
        self.version = info["model_version"] or (1 << 63) - 1
        self.custom_metadata_map = dict(info["metadata"])


# -- values


_ONNX_ELEMENT = {
    np.dtype(np.float32): (1, "tensor(float)"),
    np.dtype(np.uint8): (2, "tensor(uint8)"),
    np.dtype(np.int8): (3, "tensor(int8)"),
    np.dtype(np.uint16): (4, "tensor(uint16)"),
    np.dtype(np.int16): (5, "tensor(int16)"),
    np.dtype(np.int32): (6, "tensor(int32)"),
    np.dtype(np.int64): (7, "tensor(int64)"),
    np.dtype(object): (8, "tensor(string)"),
    np.dtype(np.bool_): (9, "tensor(bool)"),
    np.dtype(np.float16): (10, "tensor(float16)"),
    np.dtype(np.float64): (11, "tensor(double)"),
    np.dtype(np.uint32): (12, "tensor(uint32)"),
    np.dtype(np.uint64): (13, "tensor(uint64)"),
}


def numpy_type(onnx_type):
    """numpy's type for onnxruntime's type string ('tensor(float)' →
    np.float32; strings → object); None for another."""
    for dtype, (_, name) in _ONNX_ELEMENT.items():
        if name == onnx_type:
            return object if dtype == np.dtype(object) else dtype.type
    return None


def _check_cpu(device_type):
    if str(device_type).lower() != "cpu":
        raise InvalidArgument(f"device {device_type!r}: onnxc runs on the CPU only")


class OrtValue:
    """onnxruntime's OrtValue for CPU tensors: a numpy array, shared (not
    copied) with the array it was made from."""

    __slots__ = ("_array",)

    def __init__(self, array):
        self._array = array

    @staticmethod
    def ortvalue_from_numpy(numpy_obj, device_type="cpu", device_id=0):
        _check_cpu(device_type)
        return OrtValue(np.ascontiguousarray(numpy_obj))

    @staticmethod
    def ortvalue_from_shape_and_type(shape, element_type=np.float32, device_type="cpu", device_id=0):
        _check_cpu(device_type)
        return OrtValue(np.empty(tuple(shape), dtype=element_type))

    def numpy(self):
        return self._array

    def shape(self):
        return list(self._array.shape)

    def data_type(self):
        return _ONNX_ELEMENT.get(self._array.dtype, (0, f"tensor({self._array.dtype})"))[1]

    def element_type(self):
        return _ONNX_ELEMENT.get(self._array.dtype, (0, ""))[0]

    def device_name(self):
        return "cpu"

    def data_ptr(self):
        return self._array.ctypes.data

    def tensor_size_in_bytes(self):
        return self._array.nbytes

    def has_value(self):
        return True

    def is_tensor(self):
        return True

    def is_sparse_tensor(self):
        return False

    def is_tensor_sequence(self):
        return False

    def update_inplace(self, np_arr):
        np.copyto(self._array, np.asarray(np_arr, dtype=self._array.dtype))

    def __repr__(self):
        return f"OrtValue(shape={self.shape()}, type={self.data_type()})"


class IOBinding:
    """onnxruntime's IOBinding on the CPU: inputs and outputs bound by name,
    then `session.run_with_iobinding(binding)`. An output bound to an
    OrtValue or a buffer receives the result in place."""

    def __init__(self, session):
        self._session = session
        self._inputs = {}
        self._outputs = {}  # name -> OrtValue or None (allocated by the run)
        self._results = []

    def bind_cpu_input(self, name, arr_on_cpu):
        self._inputs[name] = np.asarray(arr_on_cpu)

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        _check_cpu(device_type)
        self._inputs[name] = _from_pointer(buffer_ptr, element_type, shape)

    def bind_ortvalue_input(self, name, ortvalue):
        self._inputs[name] = ortvalue.numpy()

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None, buffer_ptr=None):
        _check_cpu(device_type)
        if buffer_ptr is None:
            self._outputs[name] = None
        else:
            self._outputs[name] = OrtValue(_from_pointer(buffer_ptr, element_type, shape))

    def bind_ortvalue_output(self, name, ortvalue):
        self._outputs[name] = ortvalue

    def synchronize_inputs(self):
        pass

    def synchronize_outputs(self):
        pass

    def clear_binding_inputs(self):
        self._inputs = {}

    def clear_binding_outputs(self):
        self._outputs = {}
        self._results = []

    def get_outputs(self):
        return list(self._results)

    def get_outputs_as_ortvaluevector(self):
        return list(self._results)

    def copy_outputs_to_cpu(self):
        return [v.numpy().copy() for v in self._results]

    def _run(self, run_options):
        names = list(self._outputs)
        arrays = self._session.run(names or None, self._inputs, run_options)
        if not names:
            names = [o.name for o in self._session.get_outputs()]
        results = []
        for name, got in zip(names, arrays):
            bound = self._outputs.get(name)
            if bound is None:
                results.append(OrtValue(got))
                continue
            dst = bound.numpy()
            if dst.shape != got.shape or dst.dtype != got.dtype:
                raise InvalidArgument(
                    f"output {name!r}: bound to {dst.dtype}{list(dst.shape)}, the run gave {got.dtype}{list(got.shape)}"
                )
            np.copyto(dst, got)
            results.append(bound)
        self._results = results


def _from_pointer(ptr, element_type, shape):
    """A numpy view of `shape` elements of `element_type` at address `ptr`."""
    import ctypes

    dtype = np.dtype(element_type)
    count = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    buf = (ctypes.c_byte * (count * dtype.itemsize)).from_address(int(ptr))
    return np.frombuffer(buf, dtype=dtype, count=count).reshape(tuple(shape))
