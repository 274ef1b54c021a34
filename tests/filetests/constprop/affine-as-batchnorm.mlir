// RUN: onnxc opt %s -p affine-as-batchnorm | filecheck

// A per-channel scale then shift becomes one BatchNormalization with
// mean 0, variance 1 and epsilon 0 (so y = x * k + s exactly).
// CHECK-LABEL: func.func @per_channel
// CHECK-DAG:     %[[K:.*]] = "onnx.Constant"() {value = dense<[2.0e+00, 3.0e+00]>
// CHECK-DAG:     %[[S:.*]] = "onnx.Constant"() {value = dense<[1.0e+00, -1.0e+00]>
// CHECK-DAG:     %[[M:.*]] = "onnx.Constant"() {value = dense<0.0e+00> : tensor<2xf32>}
// CHECK-DAG:     %[[V:.*]] = "onnx.Constant"() {value = dense<1.0e+00> : tensor<2xf32>}
// CHECK:         %[[B:.*]] = "onnx.BatchNormalization"(%arg0, %[[K]], %[[S]], %[[M]], %[[V]]) {epsilon = 0.0
// CHECK-NEXT:    return %[[B]]
// CHECK-NOT:     onnx.Mul
func.func @per_channel(%x: tensor<1x2x3xf32>) -> tensor<1x2x3xf32> {
  %k = "onnx.Constant"() {value = dense<[[2.0], [3.0]]> : tensor<2x1xf32>} : () -> tensor<2x1xf32>
  %s = "onnx.Constant"() {value = dense<[[1.0], [-1.0]]> : tensor<2x1xf32>} : () -> tensor<2x1xf32>
  %m = "onnx.Mul"(%k, %x) : (tensor<2x1xf32>, tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  %y = "onnx.Add"(%m, %s) : (tensor<1x2x3xf32>, tensor<2x1xf32>) -> tensor<1x2x3xf32>
  return %y : tensor<1x2x3xf32>
}

// Not per channel (the scale varies along the last dim), a scale with a
// second use, and a broadcast that grows x: all stay Mul and Add.
// CHECK-LABEL: func.func @not_per_channel
// CHECK:         onnx.Mul
// CHECK:         onnx.Add
// CHECK-NOT:     onnx.BatchNormalization
func.func @not_per_channel(%x: tensor<1x2x3xf32>) -> tensor<1x2x3xf32> {
  %k = "onnx.Constant"() {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %s = "onnx.Constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %m = "onnx.Mul"(%x, %k) : (tensor<1x2x3xf32>, tensor<3xf32>) -> tensor<1x2x3xf32>
  %y = "onnx.Add"(%m, %s) : (tensor<1x2x3xf32>, tensor<f32>) -> tensor<1x2x3xf32>
  return %y : tensor<1x2x3xf32>
}

// CHECK-LABEL: func.func @scale_used_twice
// CHECK:         %[[M:.*]] = "onnx.Mul"
// CHECK:         "onnx.Add"(%[[M]]
// CHECK:         return
// CHECK-NOT:     onnx.BatchNormalization
func.func @scale_used_twice(%x: tensor<1x2xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>) {
  %k = "onnx.Constant"() {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %m = "onnx.Mul"(%x, %k) : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %y = "onnx.Add"(%m, %k) : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  return %y, %m : tensor<1x2xf32>, tensor<1x2xf32>
}

// CHECK-LABEL: func.func @grows_x
// CHECK:         onnx.Add
// CHECK-NOT:     onnx.BatchNormalization
func.func @grows_x(%x: tensor<1x2x1xf32>) -> tensor<1x2x3xf32> {
  %k = "onnx.Constant"() {value = dense<[[2.0], [3.0]]> : tensor<2x1xf32>} : () -> tensor<2x1xf32>
  %s = "onnx.Constant"() {value = dense<1.0> : tensor<1x1x3xf32>} : () -> tensor<1x1x3xf32>
  %m = "onnx.Mul"(%x, %k) : (tensor<1x2x1xf32>, tensor<2x1xf32>) -> tensor<1x2x1xf32>
  %y = "onnx.Add"(%m, %s) : (tensor<1x2x1xf32>, tensor<1x1x3xf32>) -> tensor<1x2x3xf32>
  return %y : tensor<1x2x3xf32>
}
