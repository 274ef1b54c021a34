// RUN: onnxc opt %s -p bufferize | filecheck

// Slice with positive steps is a memref.subview of its input (no copy);
// the view's layout is MLIR's inferred one. A view is copied where a
// contiguous buffer is needed: returned from the function, reshaped,
// yielded from a region. Negative or runtime steps still copy.

// Constant starts/ends/axes/steps: static offset, sizes and strides; Mul
// reads the view directly.
// CHECK-LABEL: func.func @static_view
// CHECK:         %[[V:.*]] = memref.subview %arg0[1, 2] [2, 3] [1, 2] : memref<4x8xf32> to memref<2x3xf32, strided<[8, 2], offset: 10>>
// CHECK-NOT:     memref.copy
// CHECK:         memref.load %[[V]]
// CHECK:         arith.mulf
// CHECK-NOT:     memref.copy
// CHECK:         return
func.func @static_view(%x: tensor<4x8xf32>) -> tensor<2x3xf32> {
  %s = "onnx.Constant"() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %e = "onnx.Constant"() {value = dense<[3, 7]> : tensor<2xi64>} : () -> tensor<2xi64>
  %a = "onnx.Constant"() {value = dense<[0, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %p = "onnx.Constant"() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %v = "onnx.Slice"(%x, %s, %e, %a, %p) : (tensor<4x8xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x3xf32>
  %r = "onnx.Mul"(%v, %v) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// A view that reaches the return is copied: results are fresh buffers the
// caller owns. Negative starts/ends count from the end and clamp.
// CHECK-LABEL: func.func @returned(%arg0: memref<6xf32>) -> memref<3xf32>
// CHECK:         %[[V:.*]] = memref.subview %arg0[2] [3] [1] : memref<6xf32> to memref<3xf32, strided<[1], offset: 2>>
// CHECK:         %[[C:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3xf32>
// CHECK:         memref.copy %[[V]], %[[C]]
// CHECK:         return %[[C]] : memref<3xf32>
func.func @returned(%x: tensor<6xf32>) -> tensor<3xf32> {
  %s = "onnx.Constant"() {value = dense<[-4]> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = "onnx.Constant"() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %v = "onnx.Slice"(%x, %s, %e) : (tensor<6xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xf32>
  return %v : tensor<3xf32>
}

// Runtime starts/ends: dynamic offsets and sizes; the untouched dynamic
// dim keeps offset 0 and a dynamic stride.
// CHECK-LABEL: func.func @runtime_bounds
// CHECK-NOT:     scf.for
// CHECK:         %[[V:.*]] = memref.subview %arg0[%{{.*}}, 0] [%{{.*}}, %{{.*}}] [1, 1] : memref<6x?xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK:         scf.for
// CHECK:         memref.load %[[V]]
func.func @runtime_bounds(%x: tensor<6x?xf32>, %s: tensor<1xi64>, %e: tensor<1xi64>) -> tensor<?x?xf32> {
  %v = "onnx.Slice"(%x, %s, %e) : (tensor<6x?xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  %r = "onnx.Neg"(%v) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// A negative step or a step known only at runtime: a copy nest.
// CHECK-LABEL: func.func @negative_step
// CHECK-NOT:     memref.subview
// CHECK:         memref.alloc
// CHECK:         scf.for
// CHECK-LABEL: func.func @runtime_step
// CHECK-NOT:     memref.subview
// CHECK:         memref.alloc
// CHECK:         scf.for
func.func @negative_step(%x: tensor<6xf32>) -> tensor<3xf32> {
  %s = "onnx.Constant"() {value = dense<[5]> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = "onnx.Constant"() {value = dense<[-7]> : tensor<1xi64>} : () -> tensor<1xi64>
  %a = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %p = "onnx.Constant"() {value = dense<[-2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %v = "onnx.Slice"(%x, %s, %e, %a, %p) : (tensor<6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xf32>
  return %v : tensor<3xf32>
}
func.func @runtime_step(%x: tensor<6xf32>, %p: tensor<1xi64>) -> tensor<?xf32> {
  %s = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = "onnx.Constant"() {value = dense<[6]> : tensor<1xi64>} : () -> tensor<1xi64>
  %a = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %v = "onnx.Slice"(%x, %s, %e, %a, %p) : (tensor<6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return %v : tensor<?xf32>
}

// reinterpret_cast would drop the view's offset and strides: Reshape of a
// view copies first.
// CHECK-LABEL: func.func @reshape_of_view
// CHECK:         %[[V:.*]] = memref.subview %arg0[0, 1] [2, 2] [1, 1]
// CHECK:         %[[C:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x2xf32>
// CHECK:         memref.copy %[[V]], %[[C]]
// CHECK:         memref.reinterpret_cast %[[C]] to offset: [0], sizes: [4], strides: [1]
func.func @reshape_of_view(%x: tensor<2x3xf32>) -> tensor<4xf32> {
  %s = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = "onnx.Constant"() {value = dense<[3]> : tensor<1xi64>} : () -> tensor<1xi64>
  %a = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %v = "onnx.Slice"(%x, %s, %e, %a) : (tensor<2x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2xf32>
  %n = "onnx.Constant"() {value = dense<[4]> : tensor<1xi64>} : () -> tensor<1xi64>
  %r = "onnx.Reshape"(%v, %n) : (tensor<2x2xf32>, tensor<1xi64>) -> tensor<4xf32>
  %y = "onnx.Neg"(%r) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// In-place analysis: the view aliases Exp's buffer and is read after Relu,
// so Relu must not overwrite that buffer although %0 itself is dead.
// CHECK-LABEL: func.func @view_blocks_inplace
// CHECK:         %[[E:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK:         math.exp
// CHECK:         %[[V:.*]] = memref.subview %[[E]][1] [2] [1]
// CHECK:         %[[R:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK:         arith.maximumf
// CHECK-NEXT:    memref.store %{{.*}}, %[[R]][
// CHECK:         memref.load %[[V]]
func.func @view_blocks_inplace(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2xf32>) {
  %0 = "onnx.Exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %s = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = "onnx.Constant"() {value = dense<[3]> : tensor<1xi64>} : () -> tensor<1xi64>
  %v = "onnx.Slice"(%0, %s, %e) : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xf32>
  %1 = "onnx.Relu"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "onnx.Neg"(%v) : (tensor<2xf32>) -> tensor<2xf32>
  return %1, %2 : tensor<4xf32>, tensor<2xf32>
}

// A view yielded from an If branch is copied to the branch's result type.
// CHECK-LABEL: func.func @yield_view
// CHECK:         scf.if
// CHECK:           %[[V:.*]] = memref.subview %arg1[0] [2] [1]
// CHECK:           %[[C:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2xf32>
// CHECK:           memref.copy %[[V]], %[[C]]
// CHECK:           scf.yield %[[C]] : memref<2xf32>
func.func @yield_view(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<2xf32> {
  %r = "onnx.If"(%c) ({
    %s = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
    %e = "onnx.Constant"() {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
    %v = "onnx.Slice"(%x, %s, %e) : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xf32>
    "onnx.Yield"(%v) : (tensor<2xf32>) -> ()
  }, {
    %n = "onnx.Neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %s = "onnx.Constant"() {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
    %e = "onnx.Constant"() {value = dense<[4]> : tensor<1xi64>} : () -> tensor<1xi64>
    %v = "onnx.Slice"(%n, %s, %e) : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xf32>
    "onnx.Yield"(%v) : (tensor<2xf32>) -> ()
  }) : (tensor<i1>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}
