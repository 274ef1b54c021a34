"""`onnxruntime.capi` of the shim: its exceptions module."""

from . import onnxruntime_pybind11_state  # noqa: F401
