"""`onnxruntime.capi` of the shim: the exception names
(`onnxruntime_pybind11_state`), the native module's surface
(`_pybind_state`) and the Python classes
(`onnxruntime_inference_collection`)."""

from . import onnxruntime_pybind11_state  # noqa: F401
