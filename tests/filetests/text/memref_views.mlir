// RUN: onnxc opt %s
// Subviews, reinterpret casts and reshapes with mixed static/dynamic sizes.

// CHECK: module {
// CHECK-LABEL: func.func @views(%arg0: memref<8x8xf32>, %arg1: memref<?x4xf32>, %arg2: index, %arg3: index) {
// CHECK-NEXT: %0 = memref.subview %arg0[%arg2, 0] [2, %arg3] [1, 1] : memref<8x8xf32> to memref<2x?xf32, strided<[8, 1], offset: ?>>
// CHECK-NEXT: %1 = memref.subview %arg0[0, 0] [4, 4] [2, 2] : memref<8x8xf32> to memref<4x4xf32, strided<[16, 2]>>
// CHECK-NEXT: %2 = memref.subview %arg1[%arg2, %arg2] [%arg3, 2] [%arg3, 1] : memref<?x4xf32> to memref<?x2xf32, strided<[?, 1], offset: ?>>
// CHECK-NEXT: %3 = memref.reinterpret_cast %arg0 to offset: [0], sizes: [64], strides: [1] : memref<8x8xf32> to memref<64xf32>
// CHECK-NEXT: %4 = memref.reinterpret_cast %arg1 to offset: [%arg2], sizes: [%arg3, 4], strides: [4, 1] : memref<?x4xf32> to memref<?x4xf32, strided<[4, 1], offset: ?>>
// CHECK-NEXT: %5 = memref.collapse_shape %arg0 {{\[\[}}0, 1]] : memref<8x8xf32> into memref<64xf32>
// CHECK-NEXT: %6 = memref.expand_shape %5 {{\[\[}}0, 1, 2]] output_shape [4, 4, 4] : memref<64xf32> into memref<4x4x4xf32>
// CHECK-NEXT: %7 = memref.expand_shape %arg1 {{\[\[}}0, 1], [2]] output_shape [%arg3, 1, 4] : memref<?x4xf32> into memref<?x1x4xf32>
// CHECK-NEXT: %8 = memref.collapse_shape %7 {{\[\[}}0, 1], [2]] : memref<?x1x4xf32> into memref<?x4xf32>
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK-NEXT: }

func.func @views(%m: memref<8x8xf32>, %d: memref<?x4xf32>, %o: index, %s: index) {
  %sv = memref.subview %m[%o, 0] [2, %s] [1, 1] : memref<8x8xf32> to memref<2x?xf32, strided<[8, 1], offset: ?>>
  %st = memref.subview %m[0, 0] [4, 4] [2, 2] : memref<8x8xf32> to memref<4x4xf32, strided<[16, 2]>>
  %dyn = memref.subview %d[%o, %o] [%s, 2] [%s, 1] : memref<?x4xf32> to memref<?x2xf32, strided<[?, 1], offset: ?>>
  %rc = memref.reinterpret_cast %m to offset: [0], sizes: [64], strides: [1] : memref<8x8xf32> to memref<64xf32>
  %rd = memref.reinterpret_cast %d to offset: [%o], sizes: [%s, 4], strides: [4, 1] : memref<?x4xf32> to memref<?x4xf32, strided<[4, 1], offset: ?>>
  %c = memref.collapse_shape %m [[0, 1]] : memref<8x8xf32> into memref<64xf32>
  %e = memref.expand_shape %c [[0, 1, 2]] output_shape [4, 4, 4] : memref<64xf32> into memref<4x4x4xf32>
  %ed = memref.expand_shape %d [[0, 1], [2]] output_shape [%s, 1, 4] : memref<?x4xf32> into memref<?x1x4xf32>
  %cd = memref.collapse_shape %ed [[0, 1], [2]] : memref<?x1x4xf32> into memref<?x4xf32>
  return
}
