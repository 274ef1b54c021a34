// RUN: onnxc opt %s -p "dealloc-pipeline" --verify-diagnostics

// memref.realloc frees its source: reading the source afterwards is
// rejected before anything is rewritten.
func.func @f() -> f32 {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<2xf32>
  // expected-error @+1 {{the source of memref.realloc is used after the realloc (realloc frees it)}}
  %b = memref.realloc %a : memref<2xf32> to memref<4xf32>
  %x = memref.load %a[%c0] : memref<2xf32>
  return %x : f32
}
