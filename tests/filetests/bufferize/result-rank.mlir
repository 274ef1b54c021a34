// RUN: onnxc opt %s -p bufferize --verify-diagnostics

// A memref has one rank. Where an operand's length decides the result's
// rank and inference could not tell it, the diagnostic says so (kernels
// take every other size at run time).

func.func @expand_shape_length(%x: tensor<?xf32>, %s: tensor<?xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{the length of the shape input determines the result rank and must be known at compile time}}
  %0 = "onnx.Expand"(%x, %s) : (tensor<?xf32>, tensor<?xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

func.func @gather_nd_index_depth(%x: tensor<?x?xf32>, %i: tensor<?x?xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{the last dim of indices determines the result rank and must be known at compile time}}
  %0 = "onnx.GatherND"(%x, %i) : (tensor<?x?xf32>, tensor<?x?xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

func.func @squeeze_axes_length(%x: tensor<?x1x?xf32>, %a: tensor<?xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{the length of the axes input determines the result rank and must be known at compile time}}
  %0 = "onnx.Squeeze"(%x, %a) : (tensor<?x1x?xf32>, tensor<?xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
