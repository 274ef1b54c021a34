#!/bin/sh
# Differential dealloc benchmark: heap allocations and peak live heap bytes
# of the same memref programs deallocated by onnxc (dealloc-pipeline) and
# by upstream mlir-opt 19 (--buffer-deallocation-pipeline), both built with
# clang -O1 and run under an LD_PRELOAD malloc counter. Also checks both
# print the same output.
#   scripts/dealloc-differential.sh [FILE.mlir...]   (default: the executed dealloc filetests)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
llvm=/usr/lib/llvm-19/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -shared -fPIC -o "$tmp/count.so" "$root/scripts/dealloc/malloc_count.c" -ldl
cc -O2 -c -o "$tmp/runtime.o" "$root/scripts/dealloc/runtime.c"
(cd "$root" && cargo build -q --release -p dealloc --example dealloc_opt)
ours="$root/target/release/examples/dealloc_opt"
[ $# -gt 0 ] || set -- "$root"/tests/filetests/dealloc/run-*.mlir
printf '| program | allocs onnxc | allocs mlir-opt | peak buffers onnxc | peak buffers mlir-opt | peak bytes onnxc | peak bytes mlir-opt | peak bytes/64 onnxc | peak bytes/64 mlir-opt |\n|---|---|---|---|---|---|---|---|---|\n'
for f in "$@"; do
  name=$(basename "$f" .mlir)
  "$ours" "$f" dealloc-pipeline --llvm > "$tmp/ours.ll"
  "$llvm/clang" -O1 -w -o "$tmp/ours" "$tmp/ours.ll" -lm
  "$llvm/mlir-opt" "$f" --buffer-deallocation-pipeline --convert-bufferization-to-memref \
    --expand-strided-metadata --finalize-memref-to-llvm --convert-scf-to-cf \
    --convert-func-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm \
    --reconcile-unrealized-casts > "$tmp/up.mlir"
  "$llvm/mlir-translate" --mlir-to-llvmir "$tmp/up.mlir" > "$tmp/up.ll"
  "$llvm/clang" -O1 -w -o "$tmp/up" "$tmp/up.ll" "$tmp/runtime.o" -lm
  LD_PRELOAD="$tmp/count.so" "$tmp/ours" > "$tmp/ours.out" 2> "$tmp/ours.err" || :
  LD_PRELOAD="$tmp/count.so" "$tmp/up" > "$tmp/up.out" 2> "$tmp/up.err" || :
  if ! cmp -s "$tmp/ours.out" "$tmp/up.out"; then
    echo "OUTPUT DIFFERS: $name" >&2
    diff "$tmp/ours.out" "$tmp/up.out" >&2 || true
    exit 1
  fi
  pat='s/^heap: allocs=\([0-9]*\) peak_bytes=\([0-9]*\) peak_buffers=\([0-9]*\) peak_bytes64=\([0-9]*\)$/\1 \2 \3 \4/p'
  o=$(sed -n "$pat" "$tmp/ours.err")
  u=$(sed -n "$pat" "$tmp/up.err")
  set -- $o $u "$@"
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$1" "$5" "$3" "$7" "$2" "$6" "$4" "$8"
  shift 8
done
