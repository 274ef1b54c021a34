// RUN: onnxc opt %s -p 'constprop{lazy-min-elements=0}' | filecheck

// Element-wise folds over one operand chain lazily (forced here for every
// size): Neg, Mul by a splat, Clip, Cast, Sub from a splat, Greater than a
// splat and Where between two splats become one view over %x's buffer,
// computed when read, with each step rounded to its dtype.
// x = [-2.5, -1, 0.5, 3.7] → -x * 2 = [5, 2, -1, -7.4] → clip [-3, 4]
// = [4, 2, -1, -3] → i8 → 10 - d = [6, 8, 11, 13] → > 7 → where.
// CHECK-LABEL: func.func @chain
// CHECK-DAG:     "onnx.Constant"() {value = dense<[4, 2, -1, -3]> : tensor<4xi8>}
// CHECK-DAG:     "onnx.Constant"() {value = dense<[-1.5e+00, 1.5e+00, 1.5e+00, 1.5e+00]> : tensor<4xf32>}
// CHECK-NOT:     onnx.Neg
// CHECK-NOT:     onnx.Where
func.func @chain() -> (tensor<4xi8>, tensor<4xf32>) {
  %x = "onnx.Constant"() {value = dense<[-2.5, -1.0, 0.5, 3.7]> : tensor<4xf32>} : () -> tensor<4xf32>
  %two = "onnx.Constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %lo = "onnx.Constant"() {value = dense<-3.0> : tensor<f32>} : () -> tensor<f32>
  %hi = "onnx.Constant"() {value = dense<4.0> : tensor<f32>} : () -> tensor<f32>
  %ten = "onnx.Constant"() {value = dense<10> : tensor<i8>} : () -> tensor<i8>
  %seven = "onnx.Constant"() {value = dense<7> : tensor<i8>} : () -> tensor<i8>
  %p = "onnx.Constant"() {value = dense<1.5> : tensor<f32>} : () -> tensor<f32>
  %n = "onnx.Constant"() {value = dense<-1.5> : tensor<f32>} : () -> tensor<f32>
  %a = "onnx.Neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = "onnx.Mul"(%a, %two) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %c = "onnx.Clip"(%b, %lo, %hi) : (tensor<4xf32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  %d = "onnx.Cast"(%c) {to = 3 : si64} : (tensor<4xf32>) -> tensor<4xi8>
  %e = "onnx.Sub"(%ten, %d) : (tensor<i8>, tensor<4xi8>) -> tensor<4xi8>
  %f = "onnx.Greater"(%e, %seven) : (tensor<4xi8>, tensor<i8>) -> tensor<4xi1>
  %g = "onnx.Where"(%f, %p, %n) : (tensor<4xi1>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  return %d, %g : tensor<4xi8>, tensor<4xf32>
}
