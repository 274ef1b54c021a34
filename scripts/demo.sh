#!/usr/bin/env bash
# The main job on a built-in model: generates the zoo's CNN, compiles it
# through every stage to LLVM IR, builds it with clang 19, runs it on its
# sample input and prints the outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-llvm.sh
source scripts/cargo-env.sh
cargo_clean_null run --locked --release -p onnxc -- run --zoo "${1:-cnn}" --output-dir target/demo
