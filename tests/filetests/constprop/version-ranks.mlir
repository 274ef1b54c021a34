// RUN: onnxc opt %s -p 'constprop{version-ranks}' --verify-each | filecheck

// Branches of ranks 2 and 3: the reads after the If (ReduceMax, Shape, and
// the Add of one of them) are copied into each branch, where they see one
// rank; what does not read the If (Exp, its ReduceMax) moves before it;
// the new If yields what the function returns.
// CHECK-LABEL: func.func @if_ranks
// CHECK:         "onnx.Exp"
// CHECK-NEXT:    "onnx.ReduceMax"
// CHECK:         %[[IF:.*]]:2 = "onnx.If"
// CHECK:           "onnx.Relu"
// CHECK-NEXT:      "onnx.ReduceMax"{{.*}} : (tensor<?x4xf32{{.*}}>) -> tensor<f32>
// CHECK-NEXT:      "onnx.Add"
// CHECK-NEXT:      "onnx.Shape"({{.*}}) -> tensor<2xi64>
// CHECK-NEXT:      "onnx.Yield"
// CHECK:           "onnx.Reshape"
// CHECK-NEXT:      "onnx.ReduceMax"{{.*}} : (tensor<?x2x2xf32{{.*}}>) -> tensor<f32>
// CHECK-NEXT:      "onnx.Add"
// CHECK-NEXT:      "onnx.Shape"({{.*}}) -> tensor<3xi64>
// CHECK-NEXT:      "onnx.Yield"
// CHECK:         onnxc.versioned = true
// CHECK-NEXT:    return %[[IF]]#0, %[[IF]]#1 : tensor<f32>, tensor<?xi64>
// CHECK-NOT:     onnxc.output_rank_results
func.func @if_ranks(%x: tensor<?x4xf32>, %c: tensor<i1>) -> (tensor<f32>, tensor<?xi64>) {
  %s = "onnx.Constant"() {value = dense<[-1, 2, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %k = "onnx.Exp"(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %f = "onnx.If"(%c) ({
    %t = "onnx.Relu"(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
    "onnx.Yield"(%t) : (tensor<?x4xf32>) -> ()
  }, {
    %e = "onnx.Reshape"(%x, %s) : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<?x2x2xf32>
    "onnx.Yield"(%e) : (tensor<?x2x2xf32>) -> ()
  }) : (tensor<i1>) -> tensor<*xf32>
  %m = "onnx.ReduceMax"(%f) {keepdims = 0 : i64} : (tensor<*xf32>) -> tensor<f32>
  %a = "onnx.ReduceMax"(%k) {keepdims = 0 : i64} : (tensor<?x4xf32>) -> tensor<f32>
  %sum = "onnx.Add"(%m, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %sh = "onnx.Shape"(%f) : (tensor<*xf32>) -> tensor<?xi64>
  return %sum, %sh : tensor<f32>, tensor<?xi64>
}

// A Squeeze without axes of [N, 1, T] (opset < 13): a chain of
// If(dim == 1) over T and N, the static 1 squeezed outright. The result
// has rank 0, 1 or 2 by the call: it is returned in rank 2 (leading 1s
// added in each version below it), with its rank as an extra result.
// CHECK-LABEL: func.func @squeeze_no_axes
// CHECK-SAME:    -> (tensor<?x?xf32>, tensor<i64>)
// CHECK-SAME:    onnxc.output_rank_results = [1]
// CHECK:         "onnx.Shape"
// CHECK:         "onnx.Gather"
// CHECK:         "onnx.Equal"
// CHECK:         "onnx.If"
// CHECK:           "onnx.Squeeze"
// CHECK:           "onnx.If"
// CHECK:             "onnx.Unsqueeze"({{.*}}) : (tensor<f32>, tensor<2xi64>) -> tensor<1x1xf32>
// CHECK:             "onnx.Unsqueeze"({{.*}}) : (tensor<?xf32{{.*}}>, tensor<1xi64>) -> tensor<1x?xf32
// CHECK:         return %{{.*}}#0, %{{.*}}#1 : tensor<?x?xf32>, tensor<i64>
func.func @squeeze_no_axes(%x: tensor<?x1x?xf32>) -> tensor<*xf32> {
  %s = "onnx.Squeeze"(%x) : (tensor<?x1x?xf32>) -> tensor<*xf32>
  %r = "onnx.Relu"(%s) : (tensor<*xf32>) -> tensor<*xf32>
  return %r : tensor<*xf32>
}

// torch's opset-11 `x.squeeze()` of [N, 1] declared [N] (the traced rank)
// and returned as is: versioned all the same (rank 0 at N = 1, as
// onnxruntime runs it); the else branch yields the value made before the
// If, which the Shape reads too (returned padded: rank 1 already).
// CHECK-LABEL: func.func @squeeze_declared_rank
// CHECK-SAME:    -> (tensor<?xf32>, tensor<i64>)
// CHECK-SAME:    onnxc.output_rank_results = [1]
// CHECK:         %[[N:.*]] = "onnx.Squeeze"({{.*}}) : (tensor<?x1xf32>, tensor<1xi64>) -> tensor<?xf32>
// CHECK:         "onnx.If"
// CHECK:           "onnx.Squeeze"(%[[N]], {{.*}}) -> tensor<f32>
// CHECK:           "onnx.Unsqueeze"({{.*}}) : (tensor<f32>, tensor<1xi64>) -> tensor<1xf32>
// CHECK:           "onnx.Yield"
// CHECK:           "onnx.Yield"(%[[N]], %{{.*}}) : (tensor<?xf32>, tensor<i64>)
// CHECK:         return %{{.*}}#0, %{{.*}}#1 : tensor<?xf32>, tensor<i64>
func.func @squeeze_declared_rank(%x: tensor<?x1xf32>) -> tensor<?xf32> {
  %s = "onnx.Squeeze"(%x) : (tensor<?x1xf32>) -> tensor<?xf32>
  return %s : tensor<?xf32>
}

// Static dims decide it alone: no versions.
// CHECK-LABEL: func.func @squeeze_static
// CHECK-NOT:     onnx.If
// CHECK:         "onnx.Squeeze"({{.*}}) -> tensor<3x5xf32>
func.func @squeeze_static(%x: tensor<3x1x5xf32>) -> tensor<*xf32> {
  %s = "onnx.Squeeze"(%x) : (tensor<3x1x5xf32>) -> tensor<*xf32>
  return %s : tensor<*xf32>
}
