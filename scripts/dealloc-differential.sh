#!/bin/sh
# Differential dealloc benchmark: heap allocations and peak live heap bytes
# of the same memref programs deallocated by onnxc (dealloc-pipeline) and
# by upstream mlir-opt 19 (--buffer-deallocation-pipeline), both built with
# clang -O1 and run under an LD_PRELOAD malloc counter. Also checks both
# print the same output. A program upstream cannot deallocate gets its
# error in the table instead.
#   scripts/dealloc-differential.sh [FILE.mlir...]   (default: the executed dealloc filetests)
#   scripts/dealloc-differential.sh --light          (the onnx package's light_* models:
#        bufferized IR from `onnxc compile --stop-after bufferize` plus a @main from
#        scripts/dealloc/light_harness.py that feeds a fixed input and prints a checksum;
#        LIGHT_MODELS=light_resnet50 picks models by glob)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
llvm=/usr/lib/llvm-19/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -shared -fPIC -o "$tmp/count.so" "$root/scripts/dealloc/malloc_count.c" -ldl
cc -O2 -c -o "$tmp/runtime.o" "$root/scripts/dealloc/runtime.c"
(cd "$root" && cargo build -q --release -p dealloc --example dealloc_opt)
ours="$root/target/release/examples/dealloc_opt"
# LLVM IR -> executable, through bitcode (clang cannot take textual IR over
# 2 GB; the light models' weights are written out in full). The programs
# build at -O0: LLVM's -O1 removes some malloc/free pairs by itself, which
# would blur what the deallocation pipelines did; the models at -O1.
olevel=0
build() {
  "$llvm/opt" -O$olevel "$1" -o "$2.bc" &&
    "$llvm/llc" -O$olevel --relocation-model=pic -filetype=obj "$2.bc" -o "$2.o" &&
    "$llvm/clang" -w -o "$2" "$2.o" ${3:-} -lm
}
if [ "${1:-}" = "--light" ]; then
  olevel=1
  (cd "$root" && cargo build -q --release -p onnxc)
  light=$(python3 -c "import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), 'backend/test/data/light'))")
  mkdir "$tmp/light"
  for m in "$light"/${LIGHT_MODELS:-light_*}.onnx; do
    name=$(basename "$m" .onnx)
    "$root/target/release/onnxc" compile "$m" --stop-after bufferize -o "$tmp/light/$name.raw.mlir"
    python3 "$root/scripts/dealloc/light_harness.py" "$tmp/light/$name.raw.mlir" > "$tmp/light/$name.mlir"
    rm "$tmp/light/$name.raw.mlir"
  done
  set -- "$tmp"/light/*.mlir
fi
[ $# -gt 0 ] || set -- "$root"/tests/filetests/dealloc/run-*.mlir
pat='s/^heap: allocs=\([0-9]*\) peak_bytes=\([0-9]*\) peak_buffers=\([0-9]*\) peak_bytes64=\([0-9]*\)$/\1 \2 \3 \4/p'
printf '| program | allocs onnxc | allocs mlir-opt | peak buffers onnxc | peak buffers mlir-opt | peak bytes onnxc | peak bytes mlir-opt | peak bytes/64 onnxc | peak bytes/64 mlir-opt |\n|---|---|---|---|---|---|---|---|---|\n'
for f in "$@"; do
  name=$(basename "$f" .mlir)
  "$ours" "$f" dealloc-pipeline --llvm > "$tmp/ours.ll"
  if ! build "$tmp/ours.ll" "$tmp/ours" 2> "$tmp/ours.diag"; then
    why=$(grep -m1 'error' "$tmp/ours.diag" | sed 's/|/\\|/g')
    printf '| %s | not built: clang: "%s" (%s bytes of LLVM IR) | | | | | | | |\n' "$name" "$why" "$(wc -c < "$tmp/ours.ll")"
    continue
  fi
  LD_PRELOAD="$tmp/count.so" "$tmp/ours" > "$tmp/ours.out" 2> "$tmp/ours.err" || :
  o=$(sed -n "$pat" "$tmp/ours.err")
  if ! "$llvm/mlir-opt" "$f" --buffer-deallocation-pipeline --convert-bufferization-to-memref \
    --expand-strided-metadata --finalize-memref-to-llvm --convert-math-to-llvm --convert-scf-to-cf \
    --convert-func-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm \
    --reconcile-unrealized-casts > "$tmp/up.mlir" 2> "$tmp/up.diag"; then
    why=$(grep -m1 'error:' "$tmp/up.diag" | sed 's/^.*error: //; s/|/\\|/g')
    set -- $o "$@"
    printf '| %s | %s | mlir-opt rejects it: "%s" | %s | – | %s | – | %s | – |\n' "$name" "$1" "$why" "$3" "$2" "$4"
    shift 4
    continue
  fi
  "$llvm/mlir-translate" --mlir-to-llvmir "$tmp/up.mlir" > "$tmp/up.ll"
  if ! build "$tmp/up.ll" "$tmp/up" "$tmp/runtime.o" 2> "$tmp/up.diag"; then
    why=$(grep -m1 'error' "$tmp/up.diag" | sed 's/|/\\|/g')
    printf '| %s | upstream not built: "%s" | | | | | | | |\n' "$name" "$why"
    continue
  fi
  LD_PRELOAD="$tmp/count.so" "$tmp/up" > "$tmp/up.out" 2> "$tmp/up.err" || :
  if ! cmp -s "$tmp/ours.out" "$tmp/up.out"; then
    echo "OUTPUT DIFFERS: $name" >&2
    diff "$tmp/ours.out" "$tmp/up.out" >&2 || true
    exit 1
  fi
  u=$(sed -n "$pat" "$tmp/up.err")
  set -- $o $u "$@"
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$1" "$5" "$3" "$7" "$2" "$6" "$4" "$8"
  shift 8
done
