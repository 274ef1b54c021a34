"""onnxruntime's module surface on onnxc: `import onnxc.ort as onnxruntime`
(or `onnxc.install_as_onnxruntime()`) and code written for onnxruntime
compiles its models with onnxc. `__version__` is the onnxruntime API
level this mirrors; `onnxc_version` is onnxc's."""

from .. import _onnxc
from .._ort import (
    ExecutionMode,
    ExecutionOrder,
    GraphOptimizationLevel,
    IOBinding,
    ModelMetadata,
    OrtValue,
    RunOptions,
    SessionOptions,
)
from ..session import CPU, InferenceSession, NodeArg
from . import capi

__version__ = "1.31.1"
version = __version__
onnxc_version = _onnxc.__version__
package_name = "onnxruntime"

# onnxruntime's `SessionIOBinding` is the same class.
SessionIOBinding = IOBinding


def get_available_providers():
    return [CPU]


def get_all_providers():
    return [CPU]


def get_device():
    return "CPU"


def get_version_string():
    return __version__


def get_build_info():
    return f"onnxc {onnxc_version} (an ahead-of-time compiler; onnxruntime API {__version__})"


def set_default_logger_severity(level):
    """Compiled code does not log: accepted."""


def set_default_logger_verbosity(level):
    """Compiled code does not log: accepted."""


def set_seed(seed):
    """Compiled models hold no random ops: accepted."""


__all__ = [
    "ExecutionMode",
    "ExecutionOrder",
    "GraphOptimizationLevel",
    "IOBinding",
    "InferenceSession",
    "ModelMetadata",
    "NodeArg",
    "OrtValue",
    "RunOptions",
    "SessionIOBinding",
    "SessionOptions",
    "capi",
    "get_all_providers",
    "get_available_providers",
    "get_build_info",
    "get_device",
    "get_version_string",
    "set_default_logger_severity",
    "set_default_logger_verbosity",
    "set_seed",
]
