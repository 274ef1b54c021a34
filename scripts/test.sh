#!/usr/bin/env bash
# Installs what the tests need, then runs every check CI runs:
# formatting, clippy (warnings are errors) and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup-test-deps.sh

export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace --no-fail-fast
