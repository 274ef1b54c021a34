#!/bin/sh
# Dealloc scaling benchmark: dealloc-pipeline time (release, no verifier) on
# straight chains of 1k/10k/100k buffers and a DenseNet-like function, next to
# upstream mlir-opt --buffer-deallocation-pipeline (per-run timeout, default 120 s).
#   scripts/dealloc-scaling.sh [TIMEOUT_SECONDS]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
limit=${1:-120}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && cargo build -q --release -p dealloc --example dealloc_opt)
ours="$root/target/release/examples/dealloc_opt"
for n in 1000 10000 100000; do python3 "$root/scripts/dealloc-gen-chain.py" $n > "$tmp/chain$n.mlir"; done
python3 "$root/scripts/dealloc-gen-chain.py" 3000 --densenet > "$tmp/densenet.mlir"
printf '| input | onnxc passes (best of 3) | mlir-opt total |\n|---|---|---|\n'
for f in chain1000 chain10000 chain100000 densenet; do
  best=
  for _ in 1 2 3; do
    t=$("$ours" "$tmp/$f.mlir" dealloc-pipeline --time 2>&1 | sed -n 's/^passes: \([0-9.]*\) s$/\1/p')
    best=$(printf '%s\n%s\n' "$t" "${best:-$t}" | sort -g | head -1)
  done
  start=$(date +%s.%N)
  if timeout "$limit" /usr/lib/llvm-19/bin/mlir-opt --buffer-deallocation-pipeline "$tmp/$f.mlir" -o /dev/null; then
    up=$(echo "$(date +%s.%N) - $start" | bc)
    up=$(printf '%.2f s' "$up")
  else
    up="> $limit s (timeout)"
  fi
  printf '| %s | %s s | %s |\n' "$f" "$best" "$up"
done
