// RUN: onnxc opt %s
// Ownership-based deallocation ops and clones.

// CHECK: module {
// CHECK-LABEL: func.func @dealloc(%arg0: memref<2xf32>, %arg1: memref<?xf32>, %arg2: i1, %arg3: i1) -> (i1, i1) {
// CHECK-NEXT: %0:2 = bufferization.dealloc (%arg0, %arg1 : memref<2xf32>, memref<?xf32>) if (%arg2, %arg3) retain (%arg0, %arg0 : memref<2xf32>, memref<2xf32>)
// CHECK-NEXT: bufferization.dealloc (%arg1 : memref<?xf32>) if (%arg3)
// CHECK-NEXT: %1 = bufferization.dealloc retain (%arg1 : memref<?xf32>)
// CHECK-NEXT: bufferization.dealloc
// CHECK-NEXT: %2 = bufferization.clone %arg0 : memref<2xf32> to memref<2xf32>
// CHECK-NEXT: %3 = bufferization.clone %arg1 {test.tag} : memref<?xf32> to memref<?xf32>
// CHECK-NEXT: memref.dealloc %2 : memref<2xf32>
// CHECK-NEXT: memref.dealloc %3 : memref<?xf32>
// CHECK-NEXT: return %0#0, %0#1 : i1, i1
// CHECK-NEXT: }
// CHECK-NEXT: }

func.func @dealloc(%a: memref<2xf32>, %b: memref<?xf32>, %ca: i1, %cb: i1) -> (i1, i1) {
  %r:2 = bufferization.dealloc (%a, %b : memref<2xf32>, memref<?xf32>) if (%ca, %cb) retain (%a, %a : memref<2xf32>, memref<2xf32>)
  bufferization.dealloc (%b : memref<?xf32>) if (%cb)
  %k = bufferization.dealloc retain (%b : memref<?xf32>)
  bufferization.dealloc
  %c = bufferization.clone %a : memref<2xf32> to memref<2xf32>
  %d = bufferization.clone %b {test.tag} : memref<?xf32> to memref<?xf32>
  memref.dealloc %c : memref<2xf32>
  memref.dealloc %d : memref<?xf32>
  return %r#0, %r#1 : i1, i1
}
