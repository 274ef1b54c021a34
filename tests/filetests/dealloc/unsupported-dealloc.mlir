// RUN: onnxc opt %s -p "dealloc-pipeline" --verify-diagnostics

// Frees written by hand must be marked, or they would be freed twice.
func.func @f() {
  %a = memref.alloc() : memref<4xf32>
  // expected-error @+1 {{must carry 'bufferization.manual_deallocation'}}
  memref.dealloc %a : memref<4xf32>
  return
}
