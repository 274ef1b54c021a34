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

// If whose branches yield different ranks for one output: the diagnostic
// names the If, the output and what each branch yields.
func.func @if_branch_ranks(%c: tensor<i1>, %x: tensor<?x4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{output 0 ('feats'): the then branch yields rank 2 (tensor<?x4xf32>), the else branch rank 3 (tensor<?x2x2xf32>); a value needs one rank at compile time}}
  %0 = "onnx.If"(%c) ({
    %1 = "onnx.Relu"(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
    "onnx.Yield"(%1) : (tensor<?x4xf32>) -> ()
  }, {
    %s = "onnx.Constant"() {value = dense<[-1, 2, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
    %2 = "onnx.Reshape"(%x, %s) : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<?x2x2xf32>
    "onnx.Yield"(%2) : (tensor<?x2x2xf32>) -> ()
  }) {onnx.names = ["feats"]} : (tensor<i1>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// A Loop-carried value whose rank the body changes (an Unsqueeze per
// iteration): its rank would follow the trip count. The diagnostic names
// the Loop, the value and both ranks.
func.func @loop_carried_rank(%n: tensor<i64>, %x: tensor<3xf32>) -> tensor<*xf32> {
  %c = "onnx.NoValue"() : () -> none
  // expected-error @+1 {{carried value 0 ('y') enters the body with rank 1 (tensor<3xf32>) and leaves it with rank 2 (tensor<1x3xf32>): its rank would follow the trip count, and a value needs one rank at compile time}}
  %0 = "onnx.Loop"(%n, %c, %x) ({
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %v: tensor<3xf32>):
    %ax = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
    %1 = "onnx.Unsqueeze"(%v, %ax) : (tensor<3xf32>, tensor<1xi64>) -> tensor<1x3xf32>
    "onnx.Yield"(%cond, %1) : (tensor<i1>, tensor<1x3xf32>) -> ()
  }) {onnx.names = ["y"]} : (tensor<i64>, none, tensor<3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
