#!/usr/bin/env bash
# Installs the LLVM 19 toolchain onnxc uses to build compiled models (clang,
# llc, opt, mlir-opt, ld.lld, and FileCheck for the tests) plus valgrind and libgomp, on Debian 12. Skips what is present.
set -euo pipefail
need=()
# llvm-19-tools: FileCheck, which the filetests check their output with.
for tool in clang opt mlir-opt ld.lld FileCheck; do
  [ -x "/usr/lib/llvm-19/bin/$tool" ] || need=(llvm-19 clang-19 mlir-19-tools lld-19 llvm-19-tools)
done
command -v valgrind >/dev/null || need+=(valgrind)
# libgomp (GCC's OpenMP runtime) runs the compiled models' parallel loops;
# clang links it through GCC's libgomp.so, which libgcc-12-dev ships.
compgen -G "/usr/lib/gcc/*/*/libgomp.so" >/dev/null || need+=(libgomp1 libgcc-12-dev)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
