// RUN: onnxc opt %s -p "dealloc-pipeline" --verify-diagnostics

// Memrefs carried by loops need phase 2 (ownership through iter_args).
func.func @f() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<4xf32>
  // expected-error @+1 {{memref-typed results of 'scf.for' are not supported yet}}
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%it = %a) -> (memref<4xf32>) {
    scf.yield %it : memref<4xf32>
  }
  return
}
