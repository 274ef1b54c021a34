// RUN: onnxc opt %s -p "ownership-based-deallocation,dealloc-simplification" | filecheck
// RUN: onnxc opt %s -p "ownership-based-deallocation,dealloc-simplification,lower-deallocations" | filecheck --check-prefix=LOWER

// Returning a select of two owned buffers: no copy. The final deallocation
// retains the result and frees whichever buffer was not selected; split per
// buffer, each compares one pair of pointers when lowered.

// CHECK-LABEL: func.func @pick
// CHECK:       %[[A:.*]] = memref.alloc()
// CHECK:       %[[B:.*]] = memref.alloc()
// CHECK:       %[[S:.*]] = arith.select %{{.*}}, %[[A]], %[[B]]
// CHECK-NEXT:  %[[T:.*]] = arith.constant true
// CHECK-NEXT:  bufferization.dealloc (%[[A]] : memref<4xf32>) if (%[[T]]) retain (%[[S]] : memref<4xf32>)
// CHECK-NEXT:  bufferization.dealloc (%[[B]] : memref<4xf32>) if (%[[T]]) retain (%[[S]] : memref<4xf32>)
// CHECK-NEXT:  return %[[S]]

// LOWER-LABEL: func.func @pick
// LOWER-NOT:   bufferization
// LOWER-COUNT-2: scf.if
// LOWER-NOT:   func.call
func.func @pick(%c: i1) -> memref<4xf32> {
  %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  %s = arith.select %c, %a, %b : memref<4xf32>
  return %s : memref<4xf32>
}
