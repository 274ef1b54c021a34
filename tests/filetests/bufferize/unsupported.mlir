// RUN: onnxc opt %s -p bufferize --verify-diagnostics

// An op without a bufferization is a diagnostic that names it.
func.func @no_kernel(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{no bufferization for this op yet}}
  %0 = "onnx.Hardmax"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
