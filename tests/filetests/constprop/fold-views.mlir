// RUN: onnxc opt %s -p constprop | filecheck

// Transpose, Reshape and Unsqueeze of constants fold to constants (views of
// the same buffer); the ops disappear.

// CHECK-LABEL: func.func @transpose
// CHECK-NEXT:    %[[C:.*]] = "onnx.Constant"() {value = dense<{{\[}}[1.0e+00, 4.0e+00], [2.0e+00, 5.0e+00], [3.0e+00, 6.0e+00]]> : tensor<3x2xf32>}
// CHECK-NOT:     onnx.Transpose
// CHECK-NEXT:    return %[[C]]
func.func @transpose() -> tensor<3x2xf32> {
  %0 = "onnx.Constant"() {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %1 = "onnx.Transpose"(%0) {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// CHECK-LABEL: func.func @reshape_chain
// CHECK-NEXT:    %[[C:.*]] = "onnx.Constant"() {value = dense<{{\[\[\[}}1, 2, 3, 4, 5, 6]]]> : tensor<1x1x6xi32>}
// CHECK-NEXT:    return %[[C]]
func.func @reshape_chain() -> tensor<1x1x6xi32> {
  %0 = "onnx.Constant"() {value = dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>} : () -> tensor<2x3xi32>
  %s = "onnx.Constant"() {value = dense<[1, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %1 = "onnx.Reshape"(%0, %s) : (tensor<2x3xi32>, tensor<2xi64>) -> tensor<1x6xi32>
  %a = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %2 = "onnx.Unsqueeze"(%1, %a) : (tensor<1x6xi32>, tensor<1xi64>) -> tensor<1x1x6xi32>
  return %2 : tensor<1x1x6xi32>
}
