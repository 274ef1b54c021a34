#!/usr/bin/env python3
"""Writes a straight-line chain of N buffers (each computed from the one
before) as MLIR on stdout: the scaling input of the dealloc benchmark.
Usage: scripts/dealloc-gen-chain.py N [--densenet]
--densenet: DenseNet-like dense blocks instead: every new buffer reads the
last K buffers of its block (concatenation-style liveness), N buffers total."""
import sys

def main():
    n = int(sys.argv[1])
    dense = "--densenet" in sys.argv
    out = ["func.func @chain(%x: memref<16xf32>) -> memref<16xf32> {",
           "  %c0 = arith.constant 0 : index",
           "  %c1 = arith.constant 1 : index",
           "  %c16 = arith.constant 16 : index"]
    prev = ["%x"]
    for i in range(n):
        out.append(f"  %b{i} = memref.alloc() : memref<16xf32>")
        srcs = prev[-6:] if dense else prev[-1:]
        out.append(f"  scf.for %i{i} = %c0 to %c16 step %c1 {{")
        acc = None
        for k, s in enumerate(srcs):
            out.append(f"    %l{i}_{k} = memref.load {s}[%i{i}] : memref<16xf32>")
            if acc is None:
                acc = f"%l{i}_{k}"
            else:
                out.append(f"    %a{i}_{k} = arith.addf {acc}, %l{i}_{k} : f32")
                acc = f"%a{i}_{k}"
        out.append(f"    memref.store {acc}, %b{i}[%i{i}] : memref<16xf32>")
        out.append("  }")
        if dense and i % 24 == 23:
            prev = [f"%b{i}"]  # transition layer: a new dense block
        else:
            prev.append(f"%b{i}")
    out.append(f"  return {prev[-1]} : memref<16xf32>")
    out.append("}")
    print("\n".join(out))

main()
