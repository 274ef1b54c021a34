"""onnxc: an ahead-of-time ONNX compiler.

* `InferenceSession(model)` compiles a model to native code (cached) and runs
  it with onnxruntime's API: get_inputs(), get_outputs(), run().
* `simplify(model)` folds constants like onnx-simplifier's `simplify`;
  `fold(src, dst)` does it file to file.
* `compile(model, output, emit=...)` writes what `onnxc compile` writes.

Errors: `CompileError` (with `.diagnostics` naming nodes and ops),
`ValueError` for inputs or options that do not fit the model,
`ClangNotFoundError` when clang is missing. See docs/PYTHON.md.
"""

import os

from . import _onnxc
from ._onnxc import ClangNotFoundError, CompileError, CompileWarning, Diagnostic
from ._options import existing, llvm_bin, shape_specs
from .session import InferenceSession, NodeArg
from .simplify import fold, simplify

__version__ = _onnxc.__version__

EMITS = ("lib", "obj", "llvm", "memref", "onnx", "onnx-ir")


def compile(path, output, emit="lib", input_shapes=None):
    """`onnxc compile PATH -o OUTPUT --emit EMIT`: 'lib' (a shared library and
    its C header, docs/ABI.md), 'obj', 'llvm' (LLVM IR), 'memref' (IR after
    bufferization and deallocation), 'onnx' (the folded model) or 'onnx-ir'."""
    if emit not in EMITS:
        raise ValueError(f"emit={emit!r}: expected one of {', '.join(EMITS)}")
    _onnxc.compile(existing(path), os.fspath(output), emit, shape_specs(input_shapes), llvm_bin())


__all__ = [
    "ClangNotFoundError",
    "CompileError",
    "CompileWarning",
    "Diagnostic",
    "InferenceSession",
    "NodeArg",
    "compile",
    "fold",
    "simplify",
    "__version__",
]
