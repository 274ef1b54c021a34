// RUN: onnxc opt %s -p constprop | filecheck

// Two data-movement ops in a row become one.

// Transpose∘Transpose composes; an identity composition goes (tf2onnx
// writes a [1, 0, 2] pair around its LSTMs).
// CHECK-LABEL: func.func @transposes
// CHECK-NEXT:    %[[T:.*]] = "onnx.Transpose"(%arg0) {perm = array<i64: 1, 2, 0>}
// CHECK-NEXT:    return %[[T]], %arg1
func.func @transposes(%x: tensor<2x3x4xf32>, %y: tensor<2x3x4xf32>) -> (tensor<3x4x2xf32>, tensor<2x3x4xf32>) {
  %a = "onnx.Transpose"(%x) {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %b = "onnx.Transpose"(%a) {perm = array<i64: 0, 2, 1>} : (tensor<3x2x4xf32>) -> tensor<3x4x2xf32>
  %c = "onnx.Transpose"(%y) {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %d = "onnx.Transpose"(%c) {perm = array<i64: 1, 0, 2>} : (tensor<3x2x4xf32>) -> tensor<2x3x4xf32>
  return %b, %d : tensor<3x4x2xf32>, tensor<2x3x4xf32>
}

// Unsqueeze chains merge their axes (BERT's mask: [S] → [1, 1, S, 1] by
// three Unsqueezes); Squeeze of an Unsqueeze by the same axes cancels.
// CHECK-LABEL: func.func @unsqueezes
// CHECK:         %[[A:.*]] = "onnx.Constant"() {value = dense<[0, 1, 3]> : tensor<3xi64>}
// CHECK-NEXT:    %[[U:.*]] = "onnx.Unsqueeze"(%arg0, %[[A]]) {{.*}} -> tensor<1x1x?x1xi64
// CHECK-NEXT:    return %[[U]], %arg1
func.func @unsqueezes(%x: tensor<?xi64, #onnx.dims<"S">>, %y: tensor<5xf32>) -> (tensor<?x?x?x?xi64>, tensor<5xf32>) {
  %c0 = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %c1 = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %c3 = "onnx.Constant"() {value = dense<[3]> : tensor<1xi64>} : () -> tensor<1xi64>
  %a = "onnx.Unsqueeze"(%x, %c0) : (tensor<?xi64, #onnx.dims<"S">>, tensor<1xi64>) -> tensor<?x?xi64>
  %b = "onnx.Unsqueeze"(%a, %c1) : (tensor<?x?xi64>, tensor<1xi64>) -> tensor<?x?x?xi64>
  %c = "onnx.Unsqueeze"(%b, %c3) : (tensor<?x?x?xi64>, tensor<1xi64>) -> tensor<?x?x?x?xi64>
  %u = "onnx.Unsqueeze"(%y, %c0) : (tensor<5xf32>, tensor<1xi64>) -> tensor<1x5xf32>
  %s = "onnx.Squeeze"(%u, %c0) : (tensor<1x5xf32>, tensor<1xi64>) -> tensor<5xf32>
  return %c, %s : tensor<?x?x?x?xi64>, tensor<5xf32>
}

// A Reshape of a Flatten reshapes the original value; a Reshape whose
// target copies a dim (0) of the inner result does not.
// CHECK-LABEL: func.func @reshapes
// CHECK-NEXT:    %[[S:.*]] = "onnx.Constant"() {value = dense<[4, 6]> : tensor<2xi64>}
// CHECK-NEXT:    %[[R:.*]] = "onnx.Reshape"(%arg0, %[[S]])
// CHECK:         "onnx.Flatten"(%arg1)
// CHECK:         return %[[R]]
func.func @reshapes(%x: tensor<2x3x4xf32>, %y: tensor<2x3x4xf32>) -> (tensor<4x6xf32>, tensor<6x2x2xf32>) {
  %f = "onnx.Flatten"(%x) {axis = 2 : si64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %s = "onnx.Constant"() {value = dense<[4, 6]> : tensor<2xi64>} : () -> tensor<2xi64>
  %r = "onnx.Reshape"(%f, %s) : (tensor<6x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  %g = "onnx.Flatten"(%y) {axis = 2 : si64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %z = "onnx.Constant"() {value = dense<[0, 2, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %q = "onnx.Reshape"(%g, %z) : (tensor<6x4xf32>, tensor<3xi64>) -> tensor<6x2x2xf32>
  return %r, %q : tensor<4x6xf32>, tensor<6x2x2xf32>
}

// A Concat of a Concat on the same axis takes its operands (torchvision's
// LRASPP: Concat(Shape(x)[:2], Concat(H, W)) for a Resize).
// CHECK-LABEL: func.func @concats
// CHECK-NEXT:    %[[C:.*]] = "onnx.Concat"(%arg0, %arg1, %arg2) {axis = 0 : i64}
// CHECK-NEXT:    return %[[C]]
func.func @concats(%a: tensor<2xi64>, %b: tensor<1xi64>, %c: tensor<1xi64>) -> tensor<4xi64> {
  %i = "onnx.Concat"(%b, %c) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %o = "onnx.Concat"(%a, %i) {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  return %o : tensor<4xi64>
}
