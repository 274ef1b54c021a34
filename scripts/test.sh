#!/usr/bin/env bash
# Installs what the tests need, then runs every check CI runs:
# formatting, clippy (warnings are errors) and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup-test-deps.sh
# shellcheck source=scripts/cargo-env.sh
source scripts/cargo-env.sh

export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
cargo_clean_null fmt --all -- --check
cargo_clean_null clippy --workspace --all-targets -- -D warnings
cargo_clean_null test --workspace --no-fail-fast
# The Python package (docs/PYTHON.md); pytest prints its own closing line.
bash scripts/test-python.sh
