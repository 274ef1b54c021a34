"""onnxc: an ahead-of-time ONNX compiler.

* `InferenceSession(model, sess_options=None, providers=None)` compiles a
  model to native code (cached) and runs it with onnxruntime's API;
  `SessionOptions`, `RunOptions`, `OrtValue` and `IOBinding` are
  onnxruntime's too. `import onnxc.ort as onnxruntime`, or
  `onnxc.install_as_onnxruntime()`, runs code written for onnxruntime.
* `simplify(model, check_n=0, ...)` folds constants with onnx-simplifier's
  signature; `fold(src, dst)` does it file to file, any size
  (`python -m onnxc.simplify IN OUT` from the shell).
* `compile(model, output, emit=...)` writes what `onnxc compile` writes.

Errors (named as onnxruntime's): `CompileError` (a `Fail`, a RuntimeError)
with `.diagnostics` naming nodes and ops; `InvalidProtobuf`;
`InvalidArgument` (a ValueError) for inputs or options that do not fit the
model; `NoSuchFile` (a FileNotFoundError); `ClangNotFoundError` when clang
is missing. See docs/PYTHON.md.
"""

import os

from . import _onnxc
from ._onnxc import (
    ClangNotFoundError,
    CompileError,
    CompileWarning,
    Diagnostic,
    Fail,
    InvalidArgument,
    InvalidProtobuf,
)
from ._options import llvm_bin, model_source, shape_specs, writable
from ._ort import (
    ExecutionMode,
    ExecutionOrder,
    GraphOptimizationLevel,
    IOBinding,
    ModelMetadata,
    NoSuchFile,
    NotApplicableWarning,
    OrtValue,
    RunOptions,
    SessionOptions,
)
from ._simplify import CheckError, fold, simplify
from .session import InferenceSession, NodeArg

__version__ = _onnxc.__version__

EMITS = ("lib", "obj", "llvm", "memref", "onnx", "onnx-ir")


def compile(model, output, emit="lib", input_shapes=None):
    """`onnxc compile MODEL -o OUTPUT --emit EMIT` for a model path, its bytes
    or an onnx.ModelProto: 'lib' (a shared library and its C header,
    docs/ABI.md), 'obj', 'llvm' (LLVM IR), 'memref' (IR after
    bufferization and deallocation), 'onnx' (the folded model) or
    'onnx-ir'. The output's directory must exist."""
    if emit not in EMITS:
        raise ValueError(f"emit={emit!r}: expected one of {', '.join(EMITS)}")
    _onnxc.compile(model_source(model), writable(output), emit, shape_specs(input_shapes), llvm_bin())


def cache_info(dir=None):
    """{'dir', 'entries', 'bytes', 'max_bytes'} of the library cache of
    sessions (default: $ONNXC_CACHE_DIR, else ~/.cache/onnxc/sessions;
    the bound is $ONNXC_CACHE_MAX_BYTES, default 2 GiB)."""
    return _onnxc.cache_info(None if dir is None else os.fspath(dir))


def cache_prune(max_bytes=None, dir=None):
    """Removes least recently used libraries until the cache takes at most
    `max_bytes` (default: its bound); (entries removed, bytes freed).
    Sessions already open keep working."""
    return _onnxc.cache_prune(max_bytes, None if dir is None else os.fspath(dir))


def install_as_onnxruntime():
    """Makes `import onnxruntime` give onnxc's shim (`onnxc.ort`) in this
    process, so packages written for onnxruntime run on onnxc unchanged.
    Call it before those packages import onnxruntime."""
    import importlib
    import sys

    from . import ort

    sys.modules["onnxruntime"] = ort
    for name in ("capi", "capi.onnxruntime_pybind11_state", "capi._pybind_state",
                 "capi.onnxruntime_inference_collection"):
        sys.modules[f"onnxruntime.{name}"] = importlib.import_module(f".ort.{name}", __name__)


__all__ = [
    "CheckError",
    "ClangNotFoundError",
    "CompileError",
    "CompileWarning",
    "Diagnostic",
    "ExecutionMode",
    "ExecutionOrder",
    "Fail",
    "GraphOptimizationLevel",
    "IOBinding",
    "InferenceSession",
    "InvalidArgument",
    "InvalidProtobuf",
    "ModelMetadata",
    "NoSuchFile",
    "NodeArg",
    "NotApplicableWarning",
    "OrtValue",
    "RunOptions",
    "SessionOptions",
    "cache_info",
    "cache_prune",
    "compile",
    "fold",
    "install_as_onnxruntime",
    "simplify",
    "__version__",
]

