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
# --locked everywhere: a stale Cargo.lock fails here instead of being
# rewritten on a user's machine (the fuzz workspace is checked, not built).
cargo_clean_null update --manifest-path fuzz/Cargo.toml --workspace --locked --quiet
cargo_clean_null clippy --locked --workspace --all-targets -- -D warnings
cargo_clean_null test --locked --workspace --no-fail-fast
# The Python package (docs/PYTHON.md); pytest prints its own closing line.
bash scripts/test-python.sh
