#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian 12 machine:
# LLVM/MLIR 19 and valgrind (setup-llvm.sh), redis-server, the Python
# oracles (onnx, onnxruntime, numpy, onnx-simplifier) and the Python
# package's build and test tools (maturin, pytest), plus a wheelhouse under
# target/ with what `pip install ./python` fetches (maturin, numpy), so that
# the fresh-venv test installs offline. Idempotent: skips what is present.
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
pip_q=(-m pip --quiet --disable-pip-version-check)
if ! "$PY" -c 'import onnx, onnxruntime, numpy, onnxsim, pytest, maturin' 2>/dev/null; then
  "$PY" "${pip_q[@]}" install -r "$here/requirements-test.txt"
fi
wheels="$here/../target/wheelhouse"
maturin_req=$(grep '^maturin==' "$here/requirements-test.txt")
if ! ls "$wheels"/maturin-*.whl "$wheels"/numpy-*.whl >/dev/null 2>&1; then
  mkdir -p "$wheels"
  "$PY" "${pip_q[@]}" download -d "$wheels" "$maturin_req" "numpy>=1.21"
fi
