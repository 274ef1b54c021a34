"""`onnxruntime.capi._pybind_state` of the shim: what packages take from
onnxruntime's native module (`C.get_available_providers()`,
`C.SessionOptions`, the enums and the exception names)."""

from ..._ort import (  # noqa: F401
    ERRORS,
    ExecutionMode,
    ExecutionOrder,
    GraphOptimizationLevel,
    ModelMetadata,
    OrtValue,
    RunOptions,
    SessionOptions,
)
from ...session import NodeArg  # noqa: F401
from .. import (  # noqa: F401
    get_all_providers,
    get_available_providers,
    get_build_info,
    get_device,
    get_version_string,
    set_default_logger_severity,
    set_default_logger_verbosity,
    set_seed,
)

globals().update(ERRORS)
