#!/bin/sh
# Runs one dealloc filetest's executed RUN line without the CLI:
#   scripts/dealloc-run.sh FILE.mlir [PIPELINE]
# dealloc passes + lowering (dealloc example) -> clang -O1 -> valgrind -> diff of RUNOUT lines.
set -eu
f=$1
p=${2:-dealloc-pipeline}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo run -q -p dealloc --example dealloc_opt -- "$f" "$p" --llvm > "$tmp/a.ll"
/usr/lib/llvm-19/bin/clang -O1 -g0 -w -o "$tmp/a.out" "$tmp/a.ll" -lm
valgrind --quiet --error-exitcode=99 --leak-check=full \
  --errors-for-leak-kinds=definite,indirect "$tmp/a.out" > "$tmp/out.txt"
# RUNOUT lines are plain expected lines here (the filetest runner does the real FileCheck).
sed -n 's|^// RUNOUT\(-NEXT\)\{0,1\}: ||p' "$f" > "$tmp/want.txt"
diff "$tmp/want.txt" "$tmp/out.txt"
echo "ok: $f"
