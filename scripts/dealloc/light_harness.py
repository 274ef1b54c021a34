#!/usr/bin/env python3
"""Appends a @main to the bufferized IR of a one-input, one-output model:
fills the input with a fixed pattern, calls the model function, prints the
sum of the output (f64). Both onnxc and upstream mlir-opt build the result,
so their heap behaviour can be compared on the same program.
    light_harness.py IN.mlir > OUT.mlir"""
import re
import sys
from math import prod


def dims(ty):
    m = re.fullmatch(r"memref<((?:\d+x)*)f32>", ty)
    if not m:
        sys.exit(f"unsupported type {ty}")
    return [int(d) for d in m.group(1).split("x") if d]


def reassoc(n):
    return "[[" + ", ".join(str(i) for i in range(n)) + "]]"


def main():
    text = open(sys.argv[1]).read()
    m = re.search(r"func\.func @(\w+)\(%arg0: (memref<[^>]*>)\) -> (memref<[^>]*>)", text)
    if not m:
        sys.exit("no one-input, one-output model function found")
    name, in_ty, out_ty = m.groups()
    din, dout = dims(in_ty), dims(out_ty)
    nin, nout = prod(din), prod(dout)
    shape = ", ".join(str(d) for d in din)
    harness = f"""
  func.func private @printF64(f64)
  func.func private @printNewline()
  func.func @main() {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c17 = arith.constant 17 : index
    %cn = arith.constant {nin} : index
    %cm = arith.constant {nout} : index
    %scale = arith.constant 0.0625 : f32
    %zero = arith.constant 0.0 : f64
    %flat = memref.alloc() : memref<{nin}xf32>
    scf.for %i = %c0 to %cn step %c1 {{
      %r = arith.remui %i, %c17 : index
      %ri = arith.index_cast %r : index to i64
      %rf = arith.sitofp %ri : i64 to f32
      %v = arith.mulf %rf, %scale : f32
      memref.store %v, %flat[%i] : memref<{nin}xf32>
    }}
    %in = memref.expand_shape %flat {reassoc(len(din))} output_shape [{shape}] : memref<{nin}xf32> into {in_ty}
    %out = func.call @{name}(%in) : ({in_ty}) -> {out_ty}
    %o = memref.collapse_shape %out {reassoc(len(dout))} : {out_ty} into memref<{nout}xf32>
    %s = scf.for %i = %c0 to %cm step %c1 iter_args(%acc = %zero) -> (f64) {{
      %v = memref.load %o[%i] : memref<{nout}xf32>
      %w = arith.extf %v : f32 to f64
      %t = arith.addf %acc, %w : f64
      scf.yield %t : f64
    }}
    func.call @printF64(%s) : (f64) -> ()
    func.call @printNewline() : () -> ()
    return
  }}
}}
"""
    body = text.rstrip()
    if not body.endswith("}"):
        sys.exit("unexpected module text")
    sys.stdout.write(body[:-1] + harness)


if __name__ == "__main__":
    main()
