// RUN: onnxc opt %s
// Allocation, access, copies and casts with static and dynamic shapes.

// CHECK: module {
// CHECK-LABEL: func.func @buffers(%arg0: index, %arg1: index, %arg2: f32) -> memref<?x?xf32> {
// CHECK-NEXT: %0 = arith.constant 0 : index
// CHECK-NEXT: %1 = arith.constant 1 : index
// CHECK-NEXT: %2 = memref.alloc() : memref<4xf32>
// CHECK-NEXT: %3 = memref.alloc(%arg0, %arg1) {alignment = 64 : i64} : memref<?x?xf32>
// CHECK-NEXT: %4 = memref.alloca() {alignment = 16 : i64} : memref<2x2xf32>
// CHECK-NEXT: %5 = memref.alloca(%arg0) : memref<?xf32>
// CHECK-NEXT: memref.store %arg2, %2[%0] : memref<4xf32>
// CHECK-NEXT: memref.store %arg2, %3[%0, %1] : memref<?x?xf32>
// CHECK-NEXT: %6 = memref.load %2[%1] : memref<4xf32>
// CHECK-NEXT: %7 = memref.load %3[%arg0, %arg1] {nontemporal = true} : memref<?x?xf32>
// CHECK-NEXT: %8 = memref.load %4[%0, %0] : memref<2x2xf32>
// CHECK-NEXT: %9 = memref.cast %2 : memref<4xf32> to memref<?xf32>
// CHECK-NEXT: %10 = memref.cast %9 : memref<?xf32> to memref<4xf32>
// CHECK-NEXT: memref.copy %2, %9 : memref<4xf32> to memref<?xf32>
// CHECK-NEXT: %11 = memref.dim %3, %0 : memref<?x?xf32>
// CHECK-NEXT: %12 = memref.dim %3, %1 : memref<?x?xf32>
// CHECK-NEXT: %13 = memref.realloc %5(%11) : memref<?xf32> to memref<?xf32>
// CHECK-NEXT: %14 = memref.realloc %2 : memref<4xf32> to memref<8xf32>
// CHECK-NEXT: %15 = memref.extract_aligned_pointer_as_index %13 : memref<?xf32> -> index
// CHECK-NEXT: memref.dealloc %13 : memref<?xf32>
// CHECK-NEXT: memref.dealloc %14 : memref<8xf32>
// CHECK-NEXT: %16 = memref.alloc() : memref<f32>
// CHECK-NEXT: memref.store %arg2, %16[] : memref<f32>
// CHECK-NEXT: %17 = memref.load %16[] : memref<f32>
// CHECK-NEXT: memref.dealloc %16 : memref<f32>
// CHECK-NEXT: return %3 : memref<?x?xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

func.func @buffers(%n: index, %m: index, %v: f32) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc(%n, %m) {alignment = 64 : i64} : memref<?x?xf32>
  %s = memref.alloca() {alignment = 16 : i64} : memref<2x2xf32>
  %d = memref.alloca(%n) : memref<?xf32>
  memref.store %v, %a[%c0] : memref<4xf32>
  memref.store %v, %b[%c0, %c1] : memref<?x?xf32>
  %x = memref.load %a[%c1] : memref<4xf32>
  %y = memref.load %b[%n, %m] {nontemporal = true} : memref<?x?xf32>
  %z = memref.load %s[%c0, %c0] : memref<2x2xf32>
  %cast = memref.cast %a : memref<4xf32> to memref<?xf32>
  %back = memref.cast %cast : memref<?xf32> to memref<4xf32>
  memref.copy %a, %cast : memref<4xf32> to memref<?xf32>
  %dim0 = memref.dim %b, %c0 : memref<?x?xf32>
  %dim1 = memref.dim %b, %c1 : memref<?x?xf32>
  %grown = memref.realloc %d(%dim0) : memref<?xf32> to memref<?xf32>
  %fixed = memref.realloc %a : memref<4xf32> to memref<8xf32>
  %p = memref.extract_aligned_pointer_as_index %grown : memref<?xf32> -> index
  memref.dealloc %grown : memref<?xf32>
  memref.dealloc %fixed : memref<8xf32>
  %scalar = memref.alloc() : memref<f32>
  memref.store %v, %scalar[] : memref<f32>
  %w = memref.load %scalar[] : memref<f32>
  memref.dealloc %scalar : memref<f32>
  return %b : memref<?x?xf32>
}
