#!/bin/sh
# Dealloc scaling benchmark: dealloc-pipeline time (release, no verifier) on
# straight chains of 1k/10k/100k buffers, a DenseNet-like function and the
# bufferized IR of DenseNet-121 (the onnx package's light_densenet121), next
# to upstream mlir-opt --buffer-deallocation-pipeline (per-run timeout,
# default 120 s). onnxc: median of 3 pass times; mlir-opt: one wall time.
#   scripts/dealloc-scaling.sh [TIMEOUT_SECONDS]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
limit=${1:-120}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && cargo build -q --release -p dealloc --example dealloc_opt && cargo build -q --release -p onnxc)
ours="$root/target/release/examples/dealloc_opt"
for n in 1000 10000 100000; do python3 "$root/scripts/dealloc-gen-chain.py" $n > "$tmp/chain$n.mlir"; done
python3 "$root/scripts/dealloc-gen-chain.py" 3000 --densenet > "$tmp/densenet-like.mlir"
light=$(python3 -c "import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), 'backend/test/data/light'))")
"$root/target/release/onnxc" compile "$light/light_densenet121.onnx" --stop-after bufferize -o "$tmp/densenet121.mlir"
printf '| input | memref.alloc | onnxc passes (median of 3) | mlir-opt total |\n|---|---|---|---|\n'
for f in chain1000 chain10000 chain100000 densenet-like densenet121; do
  allocs=$(grep -c 'memref.alloc(' "$tmp/$f.mlir" || :)
  times=
  for _ in 1 2 3; do
    t=$("$ours" "$tmp/$f.mlir" dealloc-pipeline --time 2>&1 | sed -n 's/^passes: \([0-9.]*\) s$/\1/p')
    times="$times$t
"
  done
  med=$(printf '%s' "$times" | sort -g | sed -n 2p)
  start=$(date +%s.%N)
  if timeout "$limit" /usr/lib/llvm-19/bin/mlir-opt --buffer-deallocation-pipeline "$tmp/$f.mlir" -o "$tmp/out.mlir"; then
    up=$(echo "$(date +%s.%N) - $start" | bc)
    up=$(printf '%.2f s' "$up")
  else
    up="> $limit s (timeout)"
  fi
  printf '| %s | %s | %s s | %s |\n' "$f" "$allocs" "$med" "$up"
done
