#!/usr/bin/env bash
# Installs the LLVM 19 toolchain onnxc uses to build compiled models (clang,
# llc, opt, mlir-opt) plus valgrind, on Debian 12. Skips what is present.
set -euo pipefail
need=()
for tool in clang opt mlir-opt; do
  [ -x "/usr/lib/llvm-19/bin/$tool" ] || need=(llvm-19 clang-19 mlir-19-tools)
done
command -v valgrind >/dev/null || need+=(valgrind)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
