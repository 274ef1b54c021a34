#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian 12 machine:
# LLVM/MLIR 19 (clang, llc, opt, mlir-opt), valgrind, and the Python
# oracles (onnx, onnxruntime, numpy). Idempotent: skips what is present.
set -euo pipefail

need_apt=()
for tool in /usr/lib/llvm-19/bin/clang /usr/lib/llvm-19/bin/mlir-opt /usr/lib/llvm-19/bin/opt; do
  [ -x "$tool" ] || need_apt=(llvm-19 clang-19 mlir-19-tools)
done
command -v valgrind >/dev/null || need_apt+=(valgrind)
command -v FileCheck-19 >/dev/null || true
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}"
fi

PY=${PYTHON:-python3}
if ! "$PY" -c 'import onnx, onnxruntime, numpy' 2>/dev/null; then
  "$PY" -m pip install --quiet --disable-pip-version-check -r "$(dirname "$0")/requirements-test.txt"
fi
