// RUN: onnxc opt %s
// scf.if with and without results and else branches.

// CHECK: module {
// CHECK-LABEL: func.func @select_buffer(%arg0: i1, %arg1: index) -> memref<?xf32> {
// CHECK-NEXT: %0 = scf.if %arg0 -> (memref<?xf32>) {
// CHECK-NEXT: %1 = memref.alloc(%arg1) : memref<?xf32>
// CHECK-NEXT: scf.yield %1 : memref<?xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: %1 = memref.alloca(%arg1) : memref<?xf32>
// CHECK-NEXT: %2 = memref.cast %1 : memref<?xf32> to memref<?xf32>
// CHECK-NEXT: scf.yield %2 : memref<?xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %0 : memref<?xf32>
// CHECK-NEXT: }
// CHECK-LABEL: func.func @side_effects(%arg0: i1, %arg1: memref<2xf32>, %arg2: f32) {
// CHECK-NEXT: %0 = arith.constant 0 : index
// CHECK-NEXT: scf.if %arg0 {
// CHECK-NEXT: memref.store %arg2, %arg1[%0] : memref<2xf32>
// CHECK-NEXT: }
// CHECK-NEXT: scf.if %arg0 {
// CHECK-NEXT: memref.store %arg2, %arg1[%0] : memref<2xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: %2 = arith.constant 1 : index
// CHECK-NEXT: memref.store %arg2, %arg1[%2] : memref<2xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %1:2 = scf.if %arg0 -> (f32, index) {
// CHECK-NEXT: scf.yield %arg2, %0 : f32, index
// CHECK-NEXT: } else {
// CHECK-NEXT: %2 = arith.negf %arg2 : f32
// CHECK-NEXT: scf.yield %2, %0 : f32, index
// CHECK-NEXT: } {test.tag}
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK-NEXT: }

func.func @select_buffer(%c: i1, %n: index) -> memref<?xf32> {
  %r = scf.if %c -> (memref<?xf32>) {
    %a = memref.alloc(%n) : memref<?xf32>
    scf.yield %a : memref<?xf32>
  } else {
    %b = memref.alloca(%n) : memref<?xf32>
    %cast = memref.cast %b : memref<?xf32> to memref<?xf32>
    scf.yield %cast : memref<?xf32>
  }
  return %r : memref<?xf32>
}
func.func @side_effects(%c: i1, %m: memref<2xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  scf.if %c {
    memref.store %v, %m[%c0] : memref<2xf32>
  }
  scf.if %c {
    memref.store %v, %m[%c0] : memref<2xf32>
  } else {
    %c1 = arith.constant 1 : index
    memref.store %v, %m[%c1] : memref<2xf32>
  }
  %p:2 = scf.if %c -> (f32, index) {
    scf.yield %v, %c0 : f32, index
  } else {
    %w = arith.negf %v : f32
    scf.yield %w, %c0 : f32, index
  } {test.tag}
  return
}
