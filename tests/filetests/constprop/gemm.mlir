// RUN: onnxc opt %s -p constprop | filecheck

// MatMul by a constant weight plus a constant row bias is one Gemm.

// CHECK-LABEL: func.func @dense
// CHECK:         %[[G:.*]] = "onnx.Gemm"(%arg0, %{{.*}}, %{{.*}}) : (tensor<?x4xf32{{.*}}>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<?x3xf32
// CHECK-NEXT:    return %[[G]]
func.func @dense(%x: tensor<?x4xf32, #onnx.dims<"N, 4">>) -> tensor<?x3xf32> {
  %w = "onnx.Constant"() {value = dense<0.5> : tensor<4x3xf32>} : () -> tensor<4x3xf32>
  %b = "onnx.Constant"() {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %y = "onnx.MatMul"(%x, %w) : (tensor<?x4xf32, #onnx.dims<"N, 4">>, tensor<4x3xf32>) -> tensor<?x3xf32, #onnx.dims<"N, 3">>
  %z = "onnx.Add"(%y, %b) : (tensor<?x3xf32, #onnx.dims<"N, 3">>, tensor<3xf32>) -> tensor<?x3xf32>
  return %z : tensor<?x3xf32>
}

// Q and K projections of one static [1, 7, 16] state that feed the head
// split: the state is viewed as [7, 16] once, each projection is a Gemm
// whose result the head split reshapes directly.
// CHECK-LABEL: func.func @projections
// CHECK:         %[[R:.*]] = "onnx.Reshape"(%arg0, %{{.*}}) : {{.*}} -> tensor<7x16xf32>
// CHECK:         %[[Q:.*]] = "onnx.Gemm"(%[[R]],
// CHECK:         "onnx.Reshape"(%[[Q]], %{{.*}}) : {{.*}} -> tensor<1x7x2x8xf32>
// CHECK:         %[[K:.*]] = "onnx.Gemm"(%[[R]],
// CHECK:         "onnx.Reshape"(%[[K]], %{{.*}}) : {{.*}} -> tensor<1x7x2x8xf32>
// CHECK-NOT:     "onnx.MatMul"
func.func @projections(%x: tensor<1x7x16xf32>) -> (tensor<1x7x2x8xf32>, tensor<1x7x2x8xf32>) {
  %wq = "onnx.Constant"() {value = dense<0.5> : tensor<16x16xf32>} : () -> tensor<16x16xf32>
  %wk = "onnx.Constant"() {value = dense<0.25> : tensor<16x16xf32>} : () -> tensor<16x16xf32>
  %b = "onnx.Constant"() {value = dense<1.0> : tensor<16xf32>} : () -> tensor<16xf32>
  %heads = "onnx.Constant"() {value = dense<[1, 7, 2, 8]> : tensor<4xi64>} : () -> tensor<4xi64>
  %q = "onnx.MatMul"(%x, %wq) : (tensor<1x7x16xf32>, tensor<16x16xf32>) -> tensor<1x7x16xf32>
  %qb = "onnx.Add"(%q, %b) : (tensor<1x7x16xf32>, tensor<16xf32>) -> tensor<1x7x16xf32>
  %qh = "onnx.Reshape"(%qb, %heads) : (tensor<1x7x16xf32>, tensor<4xi64>) -> tensor<1x7x2x8xf32>
  %k = "onnx.MatMul"(%x, %wk) : (tensor<1x7x16xf32>, tensor<16x16xf32>) -> tensor<1x7x16xf32>
  %kb = "onnx.Add"(%k, %b) : (tensor<1x7x16xf32>, tensor<16xf32>) -> tensor<1x7x16xf32>
  %kh = "onnx.Reshape"(%kb, %heads) : (tensor<1x7x16xf32>, tensor<4xi64>) -> tensor<1x7x2x8xf32>
  return %qh, %kh : tensor<1x7x2x8xf32>, tensor<1x7x2x8xf32>
}

// A dynamic [B, S, 16] state keeps its MatMul (the view back would need
// the runtime sizes); so does an integer MatMul.
// CHECK-LABEL: func.func @kept
// CHECK:         "onnx.MatMul"
// CHECK:         "onnx.MatMul"
func.func @kept(%x: tensor<?x?x16xf32, #onnx.dims<"B, S, 16">>, %i: tensor<2x4xi32>) -> (tensor<?x?x16xf32>, tensor<2x3xi32>) {
  %w = "onnx.Constant"() {value = dense<0.5> : tensor<16x16xf32>} : () -> tensor<16x16xf32>
  %b = "onnx.Constant"() {value = dense<1.0> : tensor<16xf32>} : () -> tensor<16xf32>
  %y = "onnx.MatMul"(%x, %w) : (tensor<?x?x16xf32, #onnx.dims<"B, S, 16">>, tensor<16x16xf32>) -> tensor<?x?x16xf32>
  %z = "onnx.Add"(%y, %b) : (tensor<?x?x16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  %wi = "onnx.Constant"() {value = dense<2> : tensor<4x3xi32>} : () -> tensor<4x3xi32>
  %bi = "onnx.Constant"() {value = dense<1> : tensor<3xi32>} : () -> tensor<3xi32>
  %yi = "onnx.MatMul"(%i, %wi) : (tensor<2x4xi32>, tensor<4x3xi32>) -> tensor<2x3xi32>
  %zi = "onnx.Add"(%yi, %bi) : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  return %z, %zi : tensor<?x?x16xf32>, tensor<2x3xi32>
}
