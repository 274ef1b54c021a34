// RUN: onnxc opt %s -p constprop | filecheck
// RUN: onnxc opt %s -p 'constprop{no-growth}' | filecheck --check-prefix=FOLD
// RUN: onnxc opt %s -p 'constprop{no-growth},expand-repeats' | filecheck --check-prefix=EXPORT

// Constants that repeat their values (Expand and ConstantOfShape fold to
// broadcast views) and how much folding may grow the constants.

// A repeating constant operand of a broadcasting op is replaced by its
// distinct values along the dims another operand already gives the
// result; a dynamic dim of the other operand might be 1, so its dim stays.
// CHECK-LABEL: func.func @splat_operand
// CHECK-NEXT:    %[[C:.*]] = "onnx.Constant"() {value = dense<{{\[\[}}2.5e-01]]> : tensor<1x1xf32>}
// CHECK-NEXT:    "onnx.Add"(%arg0, %[[C]]) : (tensor<40x30xf32>, tensor<1x1xf32>) -> tensor<40x30xf32>
func.func @splat_operand(%x: tensor<40x30xf32>) -> tensor<40x30xf32> {
  %c = "onnx.Constant"() {value = dense<2.5e-01> : tensor<40x30xf32>} : () -> tensor<40x30xf32>
  %0 = "onnx.Add"(%x, %c) : (tensor<40x30xf32>, tensor<40x30xf32>) -> tensor<40x30xf32>
  return %0 : tensor<40x30xf32>
}
// CHECK-LABEL: func.func @dynamic_other
// CHECK:         "onnx.Add"(%arg0, %{{.*}}) : (tensor<?x30xf32>, tensor<40x1xf32>) -> tensor<40x30xf32>
func.func @dynamic_other(%x: tensor<?x30xf32>) -> tensor<40x30xf32> {
  %c = "onnx.Constant"() {value = dense<2.5e-01> : tensor<40x30xf32>} : () -> tensor<40x30xf32>
  %0 = "onnx.Add"(%x, %c) : (tensor<?x30xf32>, tensor<40x30xf32>) -> tensor<40x30xf32>
  return %0 : tensor<40x30xf32>
}

// Written back out (no-growth), DequantizeLinear of int8 weights stays (a
// float copy, 2 KB, is four times larger, and quantized runtimes need the QDQ
// form); compiling, it folds.
// CHECK-LABEL: func.func @dequantize_weights
// CHECK-NOT:     onnx.DequantizeLinear
// FOLD-LABEL:  func.func @dequantize_weights
// FOLD:          "onnx.DequantizeLinear"
func.func @dequantize_weights(%x: tensor<2x32xf32>) -> tensor<2x16xf32> {
  %w = "onnx.Constant"() {value = dense<[[-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7], [8, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6], [7, 8, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5], [6, 7, 8, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4], [5, 6, 7, 8, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3], [4, 5, 6, 7, 8, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2], [3, 4, 5, 6, 7, 8, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1], [2, 3, 4, 5, 6, 7, 8, -8, -7, -6, -5, -4, -3, -2, -1, 0], [1, 2, 3, 4, 5, 6, 7, 8, -8, -7, -6, -5, -4, -3, -2, -1], [0, 1, 2, 3, 4, 5, 6, 7, 8, -8, -7, -6, -5, -4, -3, -2], [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, -8, -7, -6, -5, -4, -3], [-2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, -8, -7, -6, -5, -4], [-3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, -8, -7, -6, -5], [-4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, -8, -7, -6], [-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, -8, -7], [-6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, -8], [-7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8], [-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7], [8, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6], [7, 8, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5], [6, 7, 8, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4], [5, 6, 7, 8, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3], [4, 5, 6, 7, 8, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2], [3, 4, 5, 6, 7, 8, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1], [2, 3, 4, 5, 6, 7, 8, -8, -7, -6, -5, -4, -3, -2, -1, 0], [1, 2, 3, 4, 5, 6, 7, 8, -8, -7, -6, -5, -4, -3, -2, -1], [0, 1, 2, 3, 4, 5, 6, 7, 8, -8, -7, -6, -5, -4, -3, -2], [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, -8, -7, -6, -5, -4, -3], [-2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, -8, -7, -6, -5, -4], [-3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, -8, -7, -6, -5], [-4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, -8, -7, -6], [-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, -8, -7]]> : tensor<32x16xi8>} : () -> tensor<32x16xi8>
  %s = "onnx.Constant"() {value = dense<5.0e-01> : tensor<f32>} : () -> tensor<f32>
  %z = "onnx.Constant"() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %d = "onnx.DequantizeLinear"(%w, %s, %z) : (tensor<32x16xi8>, tensor<f32>, tensor<i8>) -> tensor<32x16xf32>
  %y = "onnx.MatMul"(%x, %d) : (tensor<2x32xf32>, tensor<32x16xf32>) -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// Under no-growth, folds that grow the constants share one budget for the
// module (256 KiB here, its constants being small): a Range of 8000 bytes
// from three scalars folds, one of 320000 bytes stays an op; compiling,
// both fold. A Transpose of weights nothing else uses folds.
// FOLD-LABEL:  func.func @range_within_budget
// FOLD-NOT:      onnx.Range
// FOLD:          return
// CHECK-LABEL: func.func @range_within_budget
// CHECK-NOT:     onnx.Range
func.func @range_within_budget(%x: tensor<1000xi64>) -> tensor<1000xi64> {
  %a = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %b = "onnx.Constant"() {value = dense<1000> : tensor<i64>} : () -> tensor<i64>
  %c = "onnx.Constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %r = "onnx.Range"(%a, %b, %c) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<1000xi64>
  %y = "onnx.Add"(%x, %r) : (tensor<1000xi64>, tensor<1000xi64>) -> tensor<1000xi64>
  return %y : tensor<1000xi64>
}
// FOLD-LABEL:  func.func @range_over_budget
// FOLD:          "onnx.Range"
// CHECK-LABEL: func.func @range_over_budget
// CHECK-NOT:     onnx.Range
func.func @range_over_budget(%x: tensor<40000xi64>) -> tensor<40000xi64> {
  %a = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %b = "onnx.Constant"() {value = dense<40000> : tensor<i64>} : () -> tensor<i64>
  %c = "onnx.Constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %r = "onnx.Range"(%a, %b, %c) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<40000xi64>
  %y = "onnx.Add"(%x, %r) : (tensor<40000xi64>, tensor<40000xi64>) -> tensor<40000xi64>
  return %y : tensor<40000xi64>
}
// FOLD-LABEL:  func.func @transpose_weights
// FOLD-NOT:      onnx.Transpose
func.func @transpose_weights(%x: tensor<2x4xf32>) -> tensor<2x16xf32> {
  %w = "onnx.Constant"() {value = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [1.5, 2.5, 3.5, 4.5], [5.5, 6.5, 7.5, 8.5], [1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [1.5, 2.5, 3.5, 4.5], [5.5, 6.5, 7.5, 8.5]]> : tensor<8x4xf32>} : () -> tensor<8x4xf32>
  %t = "onnx.Transpose"(%w) {perm = array<i64: 1, 0>} : (tensor<8x4xf32>) -> tensor<4x8xf32>
  %y = "onnx.MatMul"(%x, %t) : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// Written out, a returned constant that repeats is ConstantOfShape of its
// value (one value) or Expand of its distinct values: Expand of a scalar
// to [2000, 1000] stays a few bytes in the file.
// EXPORT-LABEL: func.func @expanded
// EXPORT-DAG:     %[[S:.*]] = "onnx.Constant"() {value = dense<{{\[}}2000, 1000]> : tensor<2xi64>}
// EXPORT-DAG:     %[[A:.*]] = "onnx.ConstantOfShape"(%[[S]]) {value = dense<1.5{{.*}}> : tensor<1xf32>}
// EXPORT-DAG:     %[[R:.*]] = "onnx.Constant"() {value = dense<{{\[\[}}1, 2, 3]]> : tensor<1x3xi32>}
// EXPORT-DAG:     %[[T:.*]] = "onnx.Constant"() {value = dense<{{\[}}500, 3]> : tensor<2xi64>}
// EXPORT-DAG:     %[[B:.*]] = "onnx.Expand"(%[[R]], %[[T]])
// EXPORT:         return %[[A]], %[[B]]
func.func @expanded() -> (tensor<2000x1000xf32>, tensor<500x3xi32>) {
  %v = "onnx.Constant"() {value = dense<1.5> : tensor<f32>} : () -> tensor<f32>
  %s = "onnx.Constant"() {value = dense<[2000, 1000]> : tensor<2xi64>} : () -> tensor<2xi64>
  %a = "onnx.Expand"(%v, %s) : (tensor<f32>, tensor<2xi64>) -> tensor<2000x1000xf32>
  %r = "onnx.Constant"() {value = dense<[1, 2, 3]> : tensor<3xi32>} : () -> tensor<3xi32>
  %t = "onnx.Constant"() {value = dense<[500, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %b = "onnx.Expand"(%r, %t) : (tensor<3xi32>, tensor<2xi64>) -> tensor<500x3xi32>
  return %a, %b : tensor<2000x1000xf32>, tensor<500x3xi32>
}
