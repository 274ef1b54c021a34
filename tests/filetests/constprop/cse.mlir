// RUN: onnxc opt %s -p constprop | filecheck

// Equal ops merge (the names the importer keeps do not count), round after
// round: the two Gathers are equal once their Shapes and indices merged.
// CHECK-LABEL: func.func @merge
// CHECK:         %[[S:.*]] = "onnx.Shape"(%arg0)
// CHECK-NOT:     "onnx.Shape"
// CHECK:         %[[G:.*]] = "onnx.Gather"(%[[S]]
// CHECK-NOT:     "onnx.Gather"
// CHECK:         return %[[G]], %[[G]]
func.func @merge(%x: tensor<?x?xf32, #onnx.dims<"N, M">>) -> (tensor<1xi64>, tensor<1xi64>) {
  %s1 = "onnx.Shape"(%x) {onnx.names = ["s1"]} : (tensor<?x?xf32, #onnx.dims<"N, M">>) -> tensor<2xi64>
  %s2 = "onnx.Shape"(%x) {onnx.names = ["s2"]} : (tensor<?x?xf32, #onnx.dims<"N, M">>) -> tensor<2xi64>
  %i = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %j = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %a = "onnx.Gather"(%s1, %i) {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  %b = "onnx.Gather"(%s2, %j) {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  return %a, %b : tensor<1xi64>, tensor<1xi64>
}

// A Dropout that may be in training mode is random: two never merge.
// CHECK-LABEL: func.func @training_dropout
// CHECK-COUNT-2: "onnx.Dropout"
func.func @training_dropout(%x: tensor<4xf32>, %t: tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %a, %am = "onnx.Dropout"(%x, %r, %t) : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xi1>)
  %b, %bm = "onnx.Dropout"(%x, %r, %t) : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xi1>)
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}
