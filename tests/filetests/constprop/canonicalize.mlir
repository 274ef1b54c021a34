// RUN: onnxc opt %s -p constprop | filecheck

// Canonicalizations of the hybrid constprop pass.

// A PyTorch-style shape chain collapses to a constant shape and the
// Reshape's result type is refined.
// CHECK-LABEL: func.func @shape_chain(%arg0: tensor<2x3x4xf32>) -> tensor<2x12xf32>
// CHECK-NEXT:    %[[S:.*]] = "onnx.Constant"() {value = dense<[2, -1]> : tensor<2xi64>}
// CHECK-NEXT:    "onnx.Reshape"(%arg0, %[[S]]) {{.*}} -> tensor<2x12xf32>
// CHECK-NOT:     onnx.Shape
func.func @shape_chain(%x: tensor<2x3x4xf32>) -> tensor<?x?xf32> {
  %s = "onnx.Shape"(%x) : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %i = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %d = "onnx.Gather"(%s, %i) {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %a = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %u = "onnx.Unsqueeze"(%d, %a) : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %m = "onnx.Constant"() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %c = "onnx.Concat"(%u, %m) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = "onnx.Reshape"(%x, %c) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// BatchNormalization after a Conv goes into its weight and bias:
// k = scale / sqrt(var + eps) = [2, 2], W' = W * k, B' = (0 - mean) * k + B.
// CHECK-LABEL: func.func @bn_into_conv
// CHECK-NEXT:    %[[W:.*]] = "onnx.Constant"() {value = dense<{{\[\[\[\[}}2.0e+00]]], {{\[\[\[}}4.0e+00]]]]>
// CHECK-NEXT:    %[[B:.*]] = "onnx.Constant"() {value = dense<[0.0e+00, -1.0e+00]>
// CHECK-NEXT:    "onnx.Conv"(%arg0, %[[W]], %[[B]])
// CHECK-NOT:     onnx.BatchNormalization
func.func @bn_into_conv(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = "onnx.Constant"() {value = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %n = "onnx.NoValue"() : () -> none
  %y = "onnx.Conv"(%x, %w, %n) : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, none) -> tensor<1x2x3x3xf32>
  %s = "onnx.Constant"() {value = dense<[2.0, 4.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %b = "onnx.Constant"() {value = dense<[1.0, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %mu = "onnx.Constant"() {value = dense<[0.5, 0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %v = "onnx.Constant"() {value = dense<[1.0, 4.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %z = "onnx.BatchNormalization"(%y, %s, %b, %mu, %v) {epsilon = 0.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  return %z : tensor<1x2x3x3xf32>
}

// x + 0, 1 * x and x / 1 forward x.
// CHECK-LABEL: func.func @neutral
// CHECK-NEXT:    return %arg0
func.func @neutral(%x: tensor<4xf32>) -> tensor<4xf32> {
  %z = "onnx.Constant"() {value = dense<0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %o = "onnx.Constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %a = "onnx.Add"(%x, %z) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = "onnx.Mul"(%o, %a) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %c = "onnx.Div"(%b, %o) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// (x + c1) + c2 becomes x + (c1 + c2).
// CHECK-LABEL: func.func @reassociate
// CHECK-NEXT:    %[[C:.*]] = "onnx.Constant"() {value = dense<[11, 12]> : tensor<2xi32>}
// CHECK-NEXT:    %[[R:.*]] = "onnx.Add"(%arg0, %[[C]])
// CHECK-NEXT:    return %[[R]]
func.func @reassociate(%x: tensor<2xi32>) -> tensor<2xi32> {
  %c1 = "onnx.Constant"() {value = dense<[1, 2]> : tensor<2xi32>} : () -> tensor<2xi32>
  %c2 = "onnx.Constant"() {value = dense<10> : tensor<i32>} : () -> tensor<i32>
  %a = "onnx.Add"(%x, %c1) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %b = "onnx.Add"(%a, %c2) : (tensor<2xi32>, tensor<i32>) -> tensor<2xi32>
  return %b : tensor<2xi32>
}
