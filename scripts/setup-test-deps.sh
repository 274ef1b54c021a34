#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian 12 machine:
# LLVM/MLIR 19 and valgrind (setup-llvm.sh), and the Python oracles
# (onnx, onnxruntime, numpy) and onnx-simplifier, the reference of the
# fold test. Idempotent: skips what is present.
set -euo pipefail
here="$(dirname "$0")"
bash "$here/setup-llvm.sh"
PY=${PYTHON:-python3}
if ! "$PY" -c 'import onnx, onnxruntime, numpy, onnxsim' 2>/dev/null; then
  "$PY" -m pip install --quiet --disable-pip-version-check -r "$here/requirements-test.txt"
fi
