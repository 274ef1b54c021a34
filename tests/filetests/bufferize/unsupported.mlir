// RUN: onnxc opt %s -p bufferize --verify-diagnostics

// An op without a bufferization is a diagnostic that names it.
func.func @no_kernel(%x: tensor<4xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{no bufferization for this op yet}}
  %0 = "onnx.MelWeightMatrix"(%x) : (tensor<4xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
