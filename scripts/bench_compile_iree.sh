#!/bin/bash
# Compile time and peak RSS: IREE import + compile vs onnxc compile --emit lib,
# in the same run. Usage: bench_compile_iree.sh MODEL.onnx [ONNXC] [IREE_BIN_DIR]
# (IREE: `pip install iree-base-compiler`, e.g. in a venv; its bin dir
# holds iree-import-onnx and iree-compile).
set -u
M=$1
O=${2:-target/release/onnxc}
V=${3:-$(dirname "$(command -v iree-compile)")}
W=$(mktemp -d)
T="/usr/bin/time -f %e_s_%M_KB"
echo "model: $M ($(stat -c %s "$M") bytes)"
echo -n "iree-import-onnx: "
$T "$V/iree-import-onnx" --opset-version 17 "$M" -o "$W/model.mlir" 2>&1 | tail -1
echo -n "iree-compile: "
$T "$V/iree-compile" --iree-hal-target-backends=llvm-cpu "$W/model.mlir" -o "$W/model.vmfb" 2>&1 | tail -1
echo -n "onnxc compile --emit lib: "
$T "$O" compile "$M" --emit lib -o "$W/libmodel.so" 2>&1 | tail -1
ls -la "$W"
rm -rf "$W"
