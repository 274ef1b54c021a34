// RUN: onnxc opt %s -p "lower-deallocations" | filecheck
// RUN: onnxc opt %s -p "lower-deallocations" --emit llvm | run-llvm --valgrind

// Several memrefs that may alias: stack arrays at the function entry, one
// call to the generated helper, then one conditional free per memref.

// CHECK-LABEL: func.func @main
// CHECK-COUNT-5: memref.alloca()
// CHECK:       call @dealloc_helper
// CHECK-COUNT-3: scf.if
// CHECK-LABEL: func.func private @dealloc_helper
// CHECK-SAME:  (%{{.*}}: memref<?xindex>, %{{.*}}: memref<?xindex>, %{{.*}}: memref<?xi1>, %{{.*}}: memref<?xi1>, %{{.*}}: memref<?xi1>)
func.func @main() {
  %t = arith.constant true
  %f = arith.constant false
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  %s = arith.select %t, %a, %b : memref<4xf32>
  // %s aliases %a: %a is freed once; %b is freed; nothing retained.
  bufferization.dealloc (%a, %b, %s : memref<4xf32>, memref<4xf32>, memref<4xf32>) if (%f, %t, %t)
  return
}
