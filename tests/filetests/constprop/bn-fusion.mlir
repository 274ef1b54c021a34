// RUN: onnxc opt %s -p constprop | filecheck

// BatchNormalization fused into a preceding Gemm or MatMul: with
// scale [2, 1], bias [1, -1], mean [0.5, 0], var [1, 4], eps 0 the BN is
// y = x * k + shift per column, k = [2, 0.5], shift = [0, -1].

// Gemm without C, transB = 0: B's columns scaled, C' = shift, beta = 1.
// CHECK-LABEL: func.func @bn_into_gemm
// CHECK-DAG:     %[[W:.*]] = "onnx.Constant"() {value = dense<{{\[\[}}2.0e+00, 1.0e+00], [6.0e+00, 2.0e+00]]>
// CHECK-DAG:     %[[C:.*]] = "onnx.Constant"() {value = dense<[0.0e+00, -1.0e+00]>
// CHECK:         %[[G:.*]] = "onnx.Gemm"(%arg0, %[[W]], %[[C]]) {{.*}}beta = 1.0{{.*}}
// CHECK-NEXT:    return %[[G]]
// CHECK-NOT:     onnx.BatchNormalization
func.func @bn_into_gemm(%x: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = "onnx.Constant"() {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %n = "onnx.NoValue"() : () -> none
  %y = "onnx.Gemm"(%x, %w, %n) : (tensor<1x2xf32>, tensor<2x2xf32>, none) -> tensor<1x2xf32>
  %s = "onnx.Constant"() {value = dense<[2.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %b = "onnx.Constant"() {value = dense<[1.0, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %mu = "onnx.Constant"() {value = dense<[0.5, 0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %v = "onnx.Constant"() {value = dense<[1.0, 4.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %z = "onnx.BatchNormalization"(%y, %s, %b, %mu, %v) {epsilon = 0.0 : f32} : (tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  return %z : tensor<1x2xf32>
}

// Gemm with transB = 1 and C = [1, 1], beta = 2: B's rows scaled,
// C' = beta * C * k + shift = [4, 0].
// CHECK-LABEL: func.func @bn_into_gemm_transposed
// CHECK-DAG:     %[[W:.*]] = "onnx.Constant"() {value = dense<{{\[\[}}2.0e+00, 4.0e+00], [1.5e+00, 2.0e+00]]>
// CHECK-DAG:     %[[C:.*]] = "onnx.Constant"() {value = dense<[4.0e+00, 0.0e+00]>
// CHECK:         "onnx.Gemm"(%arg0, %[[W]], %[[C]]) {{.*}}beta = 1.0
// CHECK-NOT:     onnx.BatchNormalization
func.func @bn_into_gemm_transposed(%x: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = "onnx.Constant"() {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %c = "onnx.Constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %y = "onnx.Gemm"(%x, %w, %c) {beta = 2.0 : f32, transB = 1 : si64} : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %s = "onnx.Constant"() {value = dense<[2.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %b = "onnx.Constant"() {value = dense<[1.0, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %mu = "onnx.Constant"() {value = dense<[0.5, 0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %v = "onnx.Constant"() {value = dense<[1.0, 4.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %z = "onnx.BatchNormalization"(%y, %s, %b, %mu, %v) {epsilon = 0.0 : f32} : (tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  return %z : tensor<1x2xf32>
}

// A 2-D MatMul: the weight's columns are scaled and the shift is added,
// which makes a Gemm (gemm.mlir).
// CHECK-LABEL: func.func @bn_into_matmul
// CHECK-NEXT:    %[[W:.*]] = "onnx.Constant"() {value = dense<{{\[\[}}2.0e+00, 1.0e+00], [6.0e+00, 2.0e+00]]>
// CHECK-NEXT:    %[[S:.*]] = "onnx.Constant"() {value = dense<[0.0e+00, -1.0e+00]>
// CHECK-NEXT:    %[[G:.*]] = "onnx.Gemm"(%arg0, %[[W]], %[[S]])
// CHECK-NEXT:    return %[[G]]
func.func @bn_into_matmul(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = "onnx.Constant"() {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %y = "onnx.MatMul"(%x, %w) : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %s = "onnx.Constant"() {value = dense<[2.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %b = "onnx.Constant"() {value = dense<[1.0, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %mu = "onnx.Constant"() {value = dense<[0.5, 0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %v = "onnx.Constant"() {value = dense<[1.0, 4.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %z = "onnx.BatchNormalization"(%y, %s, %b, %mu, %v) {epsilon = 0.0 : f32} : (tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  return %z : tensor<3x2xf32>
}

// A 3-D MatMul's channel dim (1) is not its weight's column dim: the BN
// becomes a scale and shift instead, the weight is untouched.
// CHECK-LABEL: func.func @bn_after_batched_matmul
// CHECK-NEXT:    %[[W:.*]] = "onnx.Constant"() {value = dense<{{\[\[}}1.0e+00, 2.0e+00], [3.0e+00, 4.0e+00]]>
// CHECK-NEXT:    %[[M:.*]] = "onnx.MatMul"(%arg0, %[[W]])
// CHECK:         %[[S:.*]] = "onnx.Mul"(%[[M]]
// CHECK-NEXT:    "onnx.Add"(%[[S]]
// CHECK-NOT:     onnx.BatchNormalization
func.func @bn_after_batched_matmul(%x: tensor<1x2x2xf32>) -> tensor<1x2x2xf32> {
  %w = "onnx.Constant"() {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %y = "onnx.MatMul"(%x, %w) : (tensor<1x2x2xf32>, tensor<2x2xf32>) -> tensor<1x2x2xf32>
  %s = "onnx.Constant"() {value = dense<[2.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %b = "onnx.Constant"() {value = dense<[1.0, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %mu = "onnx.Constant"() {value = dense<[0.5, 0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %v = "onnx.Constant"() {value = dense<[1.0, 4.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %z = "onnx.BatchNormalization"(%y, %s, %b, %mu, %v) {epsilon = 0.0 : f32} : (tensor<1x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2xf32>
  return %z : tensor<1x2x2xf32>
}
