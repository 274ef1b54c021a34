"""`onnxruntime.capi.onnxruntime_inference_collection` of the shim: the
Python classes onnxruntime defines there."""

from ..._ort import IOBinding, OrtValue  # noqa: F401
from ...session import InferenceSession, NodeArg  # noqa: F401

Session = InferenceSession
SessionIOBinding = IOBinding
