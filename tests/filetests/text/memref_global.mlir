// RUN: onnxc opt %s
// Globals: constant and mutable, initialized, uninitialized and external.

// CHECK: module {
// CHECK-NEXT: memref.global "private" constant @weights : memref<2x2xf32> = dense<{{\[\[}}1.0e+00, -2.0e+00], [5.0e-01, 4.0e+00]]> {alignment = 64 : i64}
// CHECK-NEXT: memref.global "private" constant @splat : memref<16xi32> = dense<3>
// CHECK-NEXT: memref.global @state : memref<4xf32> = uninitialized
// CHECK-NEXT: memref.global @external : memref<8xi8>
// CHECK-NEXT: memref.global "private" @flags : memref<2xi1> = dense<[true, false]>
// CHECK-NEXT: memref.global "private" constant @scalar : memref<f64> = dense<2.5e+00>
// CHECK-LABEL: func.func @read() -> f32 {
// CHECK-NEXT: %0 = arith.constant 0 : index
// CHECK-NEXT: %1 = memref.get_global @weights : memref<2x2xf32>
// CHECK-NEXT: %2 = memref.get_global @state : memref<4xf32>
// CHECK-NEXT: %3 = memref.load %1[%0, %0] : memref<2x2xf32>
// CHECK-NEXT: memref.store %3, %2[%0] : memref<4xf32>
// CHECK-NEXT: return %3 : f32
// CHECK-NEXT: }
// CHECK-NEXT: }

module {
  memref.global "private" constant @weights : memref<2x2xf32> = dense<[[1.0, -2.0], [0.5, 4.0]]> {alignment = 64 : i64}
  memref.global "private" constant @splat : memref<16xi32> = dense<3>
  memref.global @state : memref<4xf32> = uninitialized
  memref.global @external : memref<8xi8>
  memref.global "private" @flags : memref<2xi1> = dense<[true, false]>
  memref.global "private" constant @scalar : memref<f64> = dense<2.5>
  func.func @read() -> f32 {
    %c0 = arith.constant 0 : index
    %w = memref.get_global @weights : memref<2x2xf32>
    %s = memref.get_global @state : memref<4xf32>
    %x = memref.load %w[%c0, %c0] : memref<2x2xf32>
    memref.store %x, %s[%c0] : memref<4xf32>
    return %x : f32
  }
}
