// RUN: onnxc opt %s -p constprop | filecheck

// Element-wise ops on constants fold with broadcasting; ops that touch a
// function argument stay, but their constant operands are folded first.

// CHECK-LABEL: func.func @broadcast_add
// CHECK-NEXT:    %[[C:.*]] = "onnx.Constant"() {value = dense<{{\[}}[1.1e+01, 2.2e+01], [1.3e+01, 2.4e+01]]> : tensor<2x2xf32>}
// CHECK-NEXT:    return %[[C]]
func.func @broadcast_add() -> tensor<2x2xf32> {
  %0 = "onnx.Constant"() {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %1 = "onnx.Constant"() {value = dense<[10.0, 20.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %2 = "onnx.Add"(%0, %1) : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  return %2 : tensor<2x2xf32>
}

// CHECK-LABEL: func.func @partial
// CHECK:         %[[W:.*]] = "onnx.Constant"() {value = dense<[6, 12]> : tensor<2xi64>}
// CHECK-NEXT:    %[[R:.*]] = "onnx.Mul"(%arg0, %[[W]])
// CHECK-NEXT:    return %[[R]]
func.func @partial(%x: tensor<2xi64>) -> tensor<2xi64> {
  %0 = "onnx.Constant"() {value = dense<[2, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %1 = "onnx.Constant"() {value = dense<3> : tensor<2xi64>} : () -> tensor<2xi64>
  %2 = "onnx.Mul"(%0, %1) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %3 = "onnx.Identity"(%2) : (tensor<2xi64>) -> tensor<2xi64>
  %4 = "onnx.Mul"(%x, %3) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %4 : tensor<2xi64>
}

// Shape inference refines an unknown result type as part of the same pass.
// CHECK-LABEL: func.func @refine
// CHECK:         "onnx.Relu"(%arg0) : (tensor<3x4xf32>) -> tensor<3x4xf32>
func.func @refine(%x: tensor<3x4xf32>) -> tensor<*xf32> {
  %0 = "onnx.Relu"(%x) : (tensor<3x4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// Float → integer Cast of constants truncates toward zero and saturates,
// NaN giving 0 (the compiled kernel computes the same; ONNX leaves
// out-of-range values undefined).
// CHECK-LABEL: func.func @cast_saturates
// CHECK-NEXT:    %[[A:.*]] = "onnx.Constant"() {value = dense<[0, 7, -8, -8, 7, 3, -3]> : tensor<7xi4>}
// CHECK-NEXT:    %[[B:.*]] = "onnx.Constant"() {value = dense<[0, 255, 0, 0, 255, 3, 0]> : tensor<7xui8>}
// CHECK-NEXT:    %[[C:.*]] = "onnx.Constant"() {value = dense<[0, 2147483647, -2147483648, -9, 2147483647, 3, -3]> : tensor<7xi32>}
// CHECK-NEXT:    return %[[A]], %[[B]], %[[C]]
func.func @cast_saturates() -> (tensor<7xi4>, tensor<7xui8>, tensor<7xi32>) {
  %x = "onnx.Constant"() {value = dense<[0x7FC00000, 0x7F800000, 0xFF800000, -9.7, 1.0e+20, 3.9, -3.9]> : tensor<7xf32>} : () -> tensor<7xf32>
  %0 = "onnx.Cast"(%x) {to = 22 : si64} : (tensor<7xf32>) -> tensor<7xi4>
  %1 = "onnx.Cast"(%x) {to = 2 : si64} : (tensor<7xf32>) -> tensor<7xui8>
  %2 = "onnx.Cast"(%x) {to = 6 : si64} : (tensor<7xf32>) -> tensor<7xi32>
  return %0, %1, %2 : tensor<7xi4>, tensor<7xui8>, tensor<7xi32>
}
