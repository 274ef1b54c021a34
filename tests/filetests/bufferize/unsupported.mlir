// RUN: onnxc opt %s -p bufferize --verify-diagnostics

// An op without a bufferization is a diagnostic that names it.
func.func @no_kernel(%n: tensor<i64>, %d: tensor<i64>, %r: tensor<i64>, %lo: tensor<f32>, %hi: tensor<f32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{no bufferization for this op yet}}
  %0 = "onnx.MelWeightMatrix"(%n, %d, %r, %lo, %hi) : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
