"""onnxruntime's exception names (`from onnxruntime.capi.
onnxruntime_pybind11_state import InvalidArgument`), bound to onnxc's
classes: each is also the Python exception code catches (InvalidArgument a
ValueError, Fail and the compile errors RuntimeErrors, NoSuchFile a
FileNotFoundError)."""

from ..._ort import ERRORS

globals().update(ERRORS)

__all__ = sorted(ERRORS)
