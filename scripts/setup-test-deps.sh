#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian 12 machine:
# LLVM/MLIR 19 and valgrind (setup-llvm.sh), redis-server, and the Python oracles
# (onnx, onnxruntime, numpy). Idempotent: skips what is present.
set -euo pipefail
here="$(dirname "$0")"
bash "$here/setup-llvm.sh"
# redis-server: the daemon's shared cache tier (cli/tests/daemon_redis.rs
# starts its own on a free loopback port).
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends redis-server redis-tools
fi
PY=${PYTHON:-python3}
if ! "$PY" -c 'import onnx, onnxruntime, numpy' 2>/dev/null; then
  "$PY" -m pip install --quiet --disable-pip-version-check -r "$here/requirements-test.txt"
fi
