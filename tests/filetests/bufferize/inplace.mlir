// RUN: onnxc opt %s -p bufferize | filecheck

// In-place analysis of element-wise ops: the result is written into an
// operand's buffer (no alloc) when that buffer is a fresh allocation of the
// same type, seen so far only by loads and stores, and every tensor it
// holds is dead after the op.

// A chain of element-wise ops, each the only use of the one before, is
// one loop (ew_fusion): one buffer, written once.
// CHECK-LABEL: func.func @chain
// CHECK:         %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         math.exp
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    arith.maximumf
// CHECK-NEXT:    arith.negf
// CHECK-NEXT:    memref.store %{{.*}}, %[[A]][
// CHECK-NOT:     memref.store
// CHECK:         return %[[A]]
func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "onnx.Exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "onnx.Relu"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "onnx.Neg"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// Relu (with Exp computed in its loop) allocates; Add reads Relu's result
// twice and overwrites its buffer.
// CHECK-LABEL: func.func @in_place
// CHECK:         %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         arith.maximumf
// CHECK-NEXT:    memref.store %{{.*}}, %[[A]][
// CHECK:         arith.addf
// CHECK-NEXT:    memref.store %{{.*}}, %[[A]][
// CHECK:         return %[[A]]
func.func @in_place(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "onnx.Exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "onnx.Relu"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "onnx.Add"(%1, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// Exp's result has two uses: it is stored. Relu, its only use Add's, is
// computed in Add's loop, which then overwrites Exp's buffer, dead after
// Add (the deferred Relu reads it at Add's position, not before).
// CHECK-LABEL: func.func @used_later
// CHECK:         %[[E:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         math.exp
// CHECK-NEXT:    memref.store %{{.*}}, %[[E]][
// CHECK:         arith.maximumf
// CHECK-NEXT:    arith.addf
// CHECK-NEXT:    memref.store %{{.*}}, %[[E]][
// CHECK:         return %[[E]]
func.func @used_later(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "onnx.Exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "onnx.Relu"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "onnx.Add"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// Function arguments belong to the caller: never overwritten.
// CHECK-LABEL: func.func @argument
// CHECK:         %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK:         memref.store %{{.*}}, %[[A]][
// CHECK:         return %[[A]]
func.func @argument(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "onnx.Relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// A view (Reshape) of the buffer is still live: no in-place write.
// CHECK-LABEL: func.func @aliasing_view
// CHECK:         %[[E:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK:         %[[V:.*]] = memref.reinterpret_cast %[[E]]
// CHECK:         %[[R:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK:         memref.store %{{.*}}, %[[R]][
// CHECK:         return %[[R]], %[[V]]
func.func @aliasing_view(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2x2xf32>) {
  %0 = "onnx.Exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %s = "onnx.Constant"() {value = dense<[2, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %v = "onnx.Reshape"(%0, %s) : (tensor<4xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  %1 = "onnx.Relu"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1, %v : tensor<4xf32>, tensor<2x2xf32>
}

// A broadcast operand has another shape than the result: not reused.
// CHECK-LABEL: func.func @broadcast
// CHECK:         %[[E:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1xf32>
// CHECK:         %[[R:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK:         arith.addf
// CHECK-NEXT:    memref.store %{{.*}}, %[[R]][
func.func @broadcast(%x: tensor<1xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "onnx.Exp"(%x) : (tensor<1xf32>) -> tensor<1xf32>
  %1 = "onnx.Add"(%0, %y) : (tensor<1xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// The result of an op is returned and used again: returned values are
// live to the end, so the second op allocates.
// CHECK-LABEL: func.func @returned_operand
// CHECK:         %[[E:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK:         %[[R:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK:         return %[[E]], %[[R]]
func.func @returned_operand(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "onnx.Exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "onnx.Relu"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
