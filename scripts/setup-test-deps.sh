#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian 12 machine:
# LLVM/MLIR 19 and valgrind (setup-llvm.sh), redis-server, the Python
# oracles (onnx, onnxruntime, numpy, onnx-simplifier) and the Python
# package's build and test tools (maturin, pytest), plus a wheelhouse under
# target/ with what `pip install ./python` fetches (maturin, numpy), so that
# the fresh-venv test installs offline. Python packages come pinned with
# their hashes from requirements-test.lock (CONTRIBUTING.md, "Test
# environment"). Idempotent: skips what is present.
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
# Every Python package, transitive ones included, comes from the hashed
# lock (scripts/lock-python.py writes it from requirements-test.txt), so a
# fresh machine installs the same files today and in a month. --no-deps:
# the lock is the whole set. pip skips what is already at its version.
"$PY" "$here/lock-python.py" --check
"$PY" "${pip_q[@]}" install --require-hashes --no-deps -r "$here/requirements-test.lock"
# The wheelhouse: the locked maturin and numpy, for the offline fresh-venv
# `pip install ./python` (python/tests/test_install.py).
wheels="$here/../target/wheelhouse"
stamp="$wheels/LOCK"
if ! cmp -s "$here/requirements-test.lock" "$stamp"; then
  rm -rf "$wheels"
  mkdir -p "$wheels"
  "$PY" "$here/lock-python.py" --print maturin numpy > "$wheels/requirements.txt"
  "$PY" "${pip_q[@]}" download --require-hashes --no-deps -d "$wheels" -r "$wheels/requirements.txt"
  cp "$here/requirements-test.lock" "$stamp"
fi
