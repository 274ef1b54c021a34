// RUN: onnxc opt %s -p bufferize --verify-diagnostics

// An op without a bufferization is a diagnostic that names it.
func.func @no_kernel(%n: tensor<i64>, %d: tensor<i64>, %r: tensor<i64>, %lo: tensor<f32>, %hi: tensor<f32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{no bufferization for this op yet}}
  %0 = "onnx.MelWeightMatrix"(%n, %d, %r, %lo, %hi) : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// An If branch without a bufferization aborts if taken; both branches
// failing is the compile error (the first branch's).
func.func @if_both_branches(%c: tensor<i1>, %n: tensor<i64>, %d: tensor<i64>, %r: tensor<i64>, %lo: tensor<f32>, %hi: tensor<f32>) -> tensor<?x?xf32> {
  %0 = "onnx.If"(%c) ({
    // expected-error @+1 {{no bufferization for this op yet}}
    %1 = "onnx.MelWeightMatrix"(%n, %d, %r, %lo, %hi) : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<?x?xf32>
    "onnx.Yield"(%1) : (tensor<?x?xf32>) -> ()
  }, {
    %2 = "onnx.MelWeightMatrix"(%n, %d, %r, %lo, %hi) : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<?x?xf32>
    "onnx.Yield"(%2) : (tensor<?x?xf32>) -> ()
  }) : (tensor<i1>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
