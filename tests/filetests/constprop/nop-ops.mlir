// RUN: onnxc opt %s -p constprop | filecheck

// Ops that are identities for their operands forward them.

// A Cast to the operand's type, a Concat of one input, an identity
// Transpose, a Pad by zeros and a Tile by ones.
// CHECK-LABEL: func.func @attribute_nops
// CHECK-NEXT:    return %arg0
func.func @attribute_nops(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = "onnx.Cast"(%x) {to = 1 : si64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %b = "onnx.Concat"(%a) {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = "onnx.Transpose"(%b) {perm = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %p = "onnx.Constant"() {value = dense<0> : tensor<4xi64>} : () -> tensor<4xi64>
  %d = "onnx.Pad"(%c, %p) : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<2x3xf32>
  %r = "onnx.Constant"() {value = dense<1> : tensor<2xi64>} : () -> tensor<2xi64>
  %e = "onnx.Tile"(%d, %r) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %e : tensor<2x3xf32>
}

// Reshape and Expand to the shape the operand has, known symbolically.
// CHECK-LABEL: func.func @shape_nops
// CHECK-NOT:     onnx.Reshape
// CHECK-NOT:     onnx.Expand
// CHECK:         return %arg0
func.func @shape_nops(%x: tensor<?x4xf32, #onnx.dims<"N, 4">>) -> tensor<?x4xf32> {
  %s = "onnx.Shape"(%x) : (tensor<?x4xf32, #onnx.dims<"N, 4">>) -> tensor<2xi64>
  %a = "onnx.Reshape"(%x, %s) : (tensor<?x4xf32, #onnx.dims<"N, 4">>, tensor<2xi64>) -> tensor<?x4xf32>
  %b = "onnx.Expand"(%a, %s) : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  return %b : tensor<?x4xf32>
}

// A Slice that keeps every element with step 1 is the operand; a reversing
// one of the same shape is not.
// CHECK-LABEL: func.func @slices
// CHECK:         %[[R:.*]] = "onnx.Slice"(%arg0
// CHECK-NEXT:    return %arg0, %[[R]]
func.func @slices(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %z = "onnx.Constant"() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = "onnx.Constant"() {value = dense<9> : tensor<1xi64>} : () -> tensor<1xi64>
  %a = "onnx.Slice"(%x, %z, %e) : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xf32>
  %m1 = "onnx.Constant"() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %lo = "onnx.Constant"() {value = dense<-9> : tensor<1xi64>} : () -> tensor<1xi64>
  %n = "onnx.NoValue"() : () -> none
  %b = "onnx.Slice"(%x, %m1, %lo, %n, %m1) : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>, none, tensor<1xi64>) -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// Neutral constants stored densely (all-ones scales, all-zeros biases,
// an all-true mask) are neutral too.
// CHECK-LABEL: func.func @dense_neutral
// CHECK-NEXT:    return %arg0, %arg1
func.func @dense_neutral(%x: tensor<2x3xf32>, %m: tensor<3xi1>) -> (tensor<2x3xf32>, tensor<3xi1>) {
  %one = "onnx.Constant"() {value = dense<[1.0, 1.0, 1.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %zero = "onnx.Constant"() {value = dense<[0.0, 0.0, 0.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %a = "onnx.Mul"(%x, %one) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %b = "onnx.Add"(%a, %zero) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %c = "onnx.Pow"(%b, %one) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %t = "onnx.Constant"() {value = dense<[true, true, true]> : tensor<3xi1>} : () -> tensor<3xi1>
  %d = "onnx.And"(%t, %m) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  return %c, %d : tensor<2x3xf32>, tensor<3xi1>
}

// A Mul by ones that broadcasts its operand up is not an identity.
// CHECK-LABEL: func.func @broadcasting_one
// CHECK:         "onnx.Mul"
func.func @broadcasting_one(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %one = "onnx.Constant"() {value = dense<1.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %a = "onnx.Mul"(%x, %one) : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %a : tensor<2x3xf32>
}
