// RUN: onnxc opt %s -p constprop | filecheck

// Constant scales and shifts next to a Conv go into its weight and bias.

// ConvNeXt: GELU's `* 0.5` before a 1x1 Conv scales the weight; the layer
// scale `* gamma[C, 1, 1]` after it scales weight and bias per channel,
// and a per-channel Add shifts the bias. W = 1, B = [1, 2]:
// W' = 0.5 * [2, 3] = [1, 1.5], B' = [1, 2] * [2, 3] + [10, 20] = [12, 26].
// CHECK-LABEL: func.func @scales
// CHECK-DAG:     %[[W:.*]] = "onnx.Constant"() {value = dense<{{\[\[\[\[}}1.0e+00]]], {{\[\[\[}}1.5e+00]]]]> : tensor<2x1x1x1xf32>}
// CHECK-DAG:     %[[B:.*]] = "onnx.Constant"() {value = dense<[1.2e+01, 2.6e+01]> : tensor<2xf32>}
// CHECK:         %[[Y:.*]] = "onnx.Conv"(%arg0, %[[W]], %[[B]])
// CHECK-NEXT:    return %[[Y]]
func.func @scales(%x: tensor<?x1x4x4xf32, #onnx.dims<"N, 1, 4, 4">>) -> tensor<?x2x4x4xf32> {
  %half = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %xs = "onnx.Mul"(%x, %half) : (tensor<?x1x4x4xf32, #onnx.dims<"N, 1, 4, 4">>, tensor<f32>) -> tensor<?x1x4x4xf32, #onnx.dims<"N, 1, 4, 4">>
  %w = "onnx.Constant"() {value = dense<1.0> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %b = "onnx.Constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %y = "onnx.Conv"(%xs, %w, %b) : (tensor<?x1x4x4xf32, #onnx.dims<"N, 1, 4, 4">>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<?x2x4x4xf32, #onnx.dims<"N, 2, 4, 4">>
  %g = "onnx.Constant"() {value = dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>} : () -> tensor<2x1x1xf32>
  %z = "onnx.Mul"(%y, %g) : (tensor<?x2x4x4xf32, #onnx.dims<"N, 2, 4, 4">>, tensor<2x1x1xf32>) -> tensor<?x2x4x4xf32, #onnx.dims<"N, 2, 4, 4">>
  %t = "onnx.Constant"() {value = dense<[[[[10.0]], [[20.0]]]]> : tensor<1x2x1x1xf32>} : () -> tensor<1x2x1x1xf32>
  %u = "onnx.Add"(%z, %t) : (tensor<?x2x4x4xf32, #onnx.dims<"N, 2, 4, 4">>, tensor<1x2x1x1xf32>) -> tensor<?x2x4x4xf32>
  return %u : tensor<?x2x4x4xf32>
}

// A scale that varies along a spatial dim, or a Conv result used twice,
// stays.
// CHECK-LABEL: func.func @kept
// CHECK:         "onnx.Mul"
// CHECK:         "onnx.Add"
func.func @kept(%x: tensor<1x1x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = "onnx.Constant"() {value = dense<1.0> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %n = "onnx.NoValue"() : () -> none
  %y = "onnx.Conv"(%x, %w, %n) : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, none) -> tensor<1x2x4x4xf32>
  %g = "onnx.Constant"() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %z = "onnx.Mul"(%y, %g) : (tensor<1x2x4x4xf32>, tensor<4xf32>) -> tensor<1x2x4x4xf32>
  %t = "onnx.Constant"() {value = dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>} : () -> tensor<2x1x1xf32>
  %u = "onnx.Add"(%z, %t) : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %v = "onnx.Add"(%z, %u) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %u, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
