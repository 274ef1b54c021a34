// RUN: onnxc opt %s -p "dealloc-pipeline" --verify-diagnostics

// Memrefs crossing blocks need per-block ownership (phase 2).
func.func @f() {
  %a = memref.alloc() : memref<4xf32>
  // expected-error @+1 {{passing memrefs through 'cf.br' to another block is not supported yet}}
  cf.br ^bb1(%a : memref<4xf32>)
^bb1(%b: memref<4xf32>):
  return
}
