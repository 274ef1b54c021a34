#!/usr/bin/env bash
# The Python package's checks (python/, a cargo workspace of its own):
# rustfmt and clippy, a release build (what `pip install ./python` builds,
# so the fresh-venv install test only relinks it) installed into a venv
# that also sees the test oracles, then pytest. scripts/test.sh runs it
# after the Rust suite, whose target/debug/onnxc the tests use for
# `onnxc zoo gen`.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/cargo-env.sh
source scripts/cargo-env.sh
PY=${PYTHON:-python3}
root=$PWD
# One target directory for the test build and the fresh-venv
# `pip install ./python` (test_install.py), which then only relinks.
export CARGO_TARGET_DIR="$root/target/python"
manifest=(--manifest-path python/Cargo.toml)
cargo_clean_null fmt "${manifest[@]}" -- --check
cargo_clean_null clippy --locked "${manifest[@]}" --all-targets -- -D warnings

venv="$root/target/pyenv"
[ -x "$venv/bin/python" ] || "$PY" -m venv --system-site-packages "$venv"
reset_devnull
VIRTUAL_ENV="$venv" "$PY" -m maturin develop --locked --release --quiet "${manifest[@]}"

export ONNXC_BIN=${ONNXC_BIN:-$root/target/debug/onnxc}
[ -x "$ONNXC_BIN" ] || cargo_clean_null build --locked -p onnxc
export ONNXC_WHEELHOUSE="$root/target/wheelhouse"
# Temporary files (zoo models, compiled libraries, a venv) under target/,
# replaced each run.
"$venv/bin/python" -m pytest python/tests -q -p no:cacheprovider -rxf --basetemp="$root/target/pytest"
