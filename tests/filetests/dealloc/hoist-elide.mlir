// RUN: onnxc opt %s -p "hoist-allocs" | filecheck
// RUN: onnxc opt %s -p "elide-copies" | filecheck --check-prefix=ELIDE

// hoist-allocs: a buffer allocated and freed in one iteration, with a size
// defined outside the loop, is allocated once before the loop and freed
// once after it (nested loops: as far out as the size allows).
// CHECK-LABEL: func.func @hoist
// CHECK:       %[[T:.*]] = memref.alloc(%arg0) : memref<?xf32>
// CHECK-NEXT:  scf.for
// CHECK:         %[[U:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:         memref.store %{{.*}}, %[[U]]
// CHECK-NEXT:    memref.dealloc %[[U]]
// CHECK:       }
// CHECK-NEXT:  memref.dealloc %[[T]]
func.func @hoist(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = arith.constant 1.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      %t = memref.alloc(%n) : memref<?xf32>
      memref.store %x, %t[%c0] : memref<?xf32>
      memref.dealloc %t : memref<?xf32>
    }
    // The size depends on the induction variable: stays in the loop.
    %k = arith.addi %i, %c1 : index
    %u = memref.alloc(%k) : memref<?xf32>
    memref.store %x, %u[%c0] : memref<?xf32>
    memref.dealloc %u : memref<?xf32>
  }
  return
}

// elide-copies: %b is a copy of %a, which dies right after: use %a.
// ELIDE-LABEL: func.func @elide
// ELIDE:       %[[A:.*]] = memref.alloc() : memref<4xf32>
// ELIDE-NOT:   memref.copy
// ELIDE:       memref.load %[[A]]
// ELIDE-NEXT:  memref.dealloc %[[A]]
func.func @elide() -> f32 {
  %c0 = arith.constant 0 : index
  %x = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4xf32>
  memref.store %x, %a[%c0] : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  %y = memref.load %b[%c0] : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return %y : f32
}

// Not elided: the source is read after the copy.
// ELIDE-LABEL: func.func @keep
// ELIDE:       memref.copy
func.func @keep() -> f32 {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  %y = memref.load %a[%c0] : memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return %y : f32
}
