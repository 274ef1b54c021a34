#!/bin/bash
# Compile time and peak RSS: IREE import + compile vs onnxc compile --emit lib,
# in the same run, N rounds alternating the tools; prints each run and the
# median (min-max) per step.
# Usage: bench_compile_iree.sh MODEL.onnx [ONNXC] [IREE_BIN_DIR] [N=3]
# (IREE: `pip install iree-base-compiler`, e.g. in a venv; its bin dir
# holds iree-import-onnx and iree-compile). Peak RSS is GNU time's %M: the
# largest single process of the tree (onnxc, clang, ld, ...).
set -u
M=$1
O=${2:-target/release/onnxc}
V=${3:-$(dirname "$(command -v iree-compile)")}
N=${4:-3}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
echo "model: $M ($(stat -c %s "$M") bytes); $(nproc) cores; $(date -u +%F)"
step() { # name command...
  local name=$1
  shift
  /usr/bin/time -f "%e %M" -o "$W/t" "$@" >"$W/out" 2>"$W/err" ||
    { echo "$name failed:"; tail -5 "$W/err"; exit 1; }
  read -r s kb <"$W/t"
  echo "$name $s $kb" >>"$W/all"
  echo "  $name: ${s} s, $((kb / 1024)) MiB"
}
for r in $(seq 1 "$N"); do
  echo "round $r (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  step iree-import "$V/iree-import-onnx" --opset-version 17 "$M" -o "$W/model.mlir"
  step iree-compile "$V/iree-compile" --iree-hal-target-backends=llvm-cpu "$W/model.mlir" -o "$W/model.vmfb"
  rm -f "$W/model.mlir" "$W/model.vmfb"
  step onnxc-lib "$O" compile "$M" --emit lib -o "$W/libmodel.so"
  rm -f "$W/libmodel.so" "$W/model.h"
done
# One more onnxc run: the summed PSS of its whole process tree, sampled
# every 10 ms (the processes that run at once, shared pages split).
"$O" compile "$M" --emit lib -o "$W/libmodel.so" >"$W/out" 2>&1 &
P=$!
peak=0
while kill -0 $P 2>/dev/null; do
  t=0
  for p in $P $(pgrep -P $P) $(for c in $(pgrep -P $P); do pgrep -P "$c"; done); do
    r=$(awk '/^Pss:/{print $2}' "/proc/$p/smaps_rollup" 2>/dev/null)
    t=$((t + ${r:-0}))
  done
  [ "$t" -gt "$peak" ] && peak=$t
  sleep 0.01
done
echo "onnxc-lib: summed PSS of the process tree peaks at $((peak / 1024)) MiB"
python3 - "$W/all" "$(stat -c %s "$M")" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
size = int(sys.argv[2])
by = {}
for name, s, kb in rows:
    by.setdefault(name, []).append((float(s), int(kb)))
def fmt(v):
    t = [x[0] for x in v]
    return f"{statistics.median(t):.2f} s ({min(t):.2f}-{max(t):.2f})"
for name, v in by.items():
    kb = max(x[1] for x in v)
    print(f"{name}: {fmt(v)}, peak {kb / 1024:.0f} MiB ({kb * 1024 / size:.2f}x the model)")
iree = [a[0] + b[0] for a, b in zip(by["iree-import"], by["iree-compile"])]
onnxc = [x[0] for x in by["onnxc-lib"]]
print(f"IREE total: {statistics.median(iree):.2f} s ({min(iree):.2f}-{max(iree):.2f})")
print(f"speed-up (median of per-round ratios): "
      f"{statistics.median(i / o for i, o in zip(iree, onnxc)):.1f}x")
EOF
