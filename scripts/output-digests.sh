#!/usr/bin/env bash
# Digests of what onnxc emits for the zoo (light weights) and the ONNX
# light models at every level (onnx-ir after constprop, memref, LLVM IR,
# folded ONNX). A refactor that must not change behaviour compares two
# runs: `bash scripts/output-digests.sh > before.txt`, change, rerun, diff.
set -euo pipefail
cd "$(dirname "$0")/.."
ONNXC=${ONNXC:-target/debug/onnxc}
work=${WORK:-target/output-digests}
mkdir -p "$work"
light=$(python3 -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend/test/data/light"))')
models=()
for z in mlp cnn resnet50v1 densenet121 mobilenetv2 squeezenet bert-tiny gpt2-tiny; do
  "$ONNXC" zoo gen "$z" --light -o "$work/zoo_$z.onnx" >/dev/null
  models+=("$work/zoo_$z.onnx")
done
models+=("$light"/light_*.onnx)
for m in "${models[@]}"; do
  name=$(basename "$m" .onnx)
  for emit in onnx-ir memref llvm; do
    if "$ONNXC" compile "$m" --emit "$emit" -o "$work/$name.$emit" 2>"$work/$name.$emit.err"; then
      echo "$name $emit $(sha256sum < "$work/$name.$emit" | cut -c1-16)"
    else
      echo "$name $emit FAILED $(head -c 200 "$work/$name.$emit.err" | tr '\n' ' ')"
    fi
  done
  if "$ONNXC" fold "$m" -o "$work/$name.folded.onnx" 2>/dev/null; then
    echo "$name fold $(sha256sum < "$work/$name.folded.onnx" | cut -c1-16)"
  else
    echo "$name fold FAILED"
  fi
done
