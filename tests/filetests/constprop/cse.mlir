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

// Large weights merge when equal (tied weights: an embedding and its copy),
// compared in full only after their sampled bytes agree; one that differs
// in its last element stays.
// CHECK-LABEL: func.func @tied_weights
// CHECK:         %[[W:.*]] = "onnx.Constant"() {value = dense<"0x
// CHECK-NEXT:    %[[V:.*]] = "onnx.Constant"() {value = dense<"0x
// CHECK-NEXT:    %[[A:.*]] = "onnx.Gather"(%[[W]], %arg0)
// CHECK-NEXT:    %[[C:.*]] = "onnx.Gather"(%[[V]], %arg0)
// CHECK-NEXT:    %[[Z:.*]] = "onnx.Constant"() {value = dense<[2.5e-01]> : tensor<1xf32>}
// CHECK-NEXT:    %[[S:.*]] = "onnx.Add"(%arg1, %[[Z]])
// CHECK-NEXT:    return %[[A]], %[[A]], %[[C]], %[[S]], %[[S]]
func.func @tied_weights(%i: tensor<2xi64>, %x: tensor<4096xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<4096xf32>, tensor<4096xf32>) {
  %w = "onnx.Constant"() {value = dense<[[0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5], [8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5], [16.5, 17.5, 18.5, 19.5, 20.5, 21.5, 22.5, 23.5], [24.5, 25.5, 26.5, 27.5, 28.5, 29.5, 30.5, 31.5], [32.5, 33.5, 34.5, 35.5, 36.5, 37.5, 38.5, 39.5], [40.5, 41.5, 42.5, 43.5, 44.5, 45.5, 46.5, 47.5], [48.5, 49.5, 50.5, 51.5, 52.5, 53.5, 54.5, 55.5], [56.5, 57.5, 58.5, 59.5, 60.5, 61.5, 62.5, 63.5], [64.5, 65.5, 66.5, 67.5, 68.5, 69.5, 70.5, 71.5], [72.5, 73.5, 74.5, 75.5, 76.5, 77.5, 78.5, 79.5]]> : tensor<10x8xf32>} : () -> tensor<10x8xf32>
  %tied = "onnx.Constant"() {value = dense<[[0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5], [8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5], [16.5, 17.5, 18.5, 19.5, 20.5, 21.5, 22.5, 23.5], [24.5, 25.5, 26.5, 27.5, 28.5, 29.5, 30.5, 31.5], [32.5, 33.5, 34.5, 35.5, 36.5, 37.5, 38.5, 39.5], [40.5, 41.5, 42.5, 43.5, 44.5, 45.5, 46.5, 47.5], [48.5, 49.5, 50.5, 51.5, 52.5, 53.5, 54.5, 55.5], [56.5, 57.5, 58.5, 59.5, 60.5, 61.5, 62.5, 63.5], [64.5, 65.5, 66.5, 67.5, 68.5, 69.5, 70.5, 71.5], [72.5, 73.5, 74.5, 75.5, 76.5, 77.5, 78.5, 79.5]]> : tensor<10x8xf32>} : () -> tensor<10x8xf32>
  %other = "onnx.Constant"() {value = dense<[[0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5], [8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5], [16.5, 17.5, 18.5, 19.5, 20.5, 21.5, 22.5, 23.5], [24.5, 25.5, 26.5, 27.5, 28.5, 29.5, 30.5, 31.5], [32.5, 33.5, 34.5, 35.5, 36.5, 37.5, 38.5, 39.5], [40.5, 41.5, 42.5, 43.5, 44.5, 45.5, 46.5, 47.5], [48.5, 49.5, 50.5, 51.5, 52.5, 53.5, 54.5, 55.5], [56.5, 57.5, 58.5, 59.5, 60.5, 61.5, 62.5, 63.5], [64.5, 65.5, 66.5, 67.5, 68.5, 69.5, 70.5, 71.5], [72.5, 73.5, 74.5, 75.5, 76.5, 77.5, 78.5, 0.0]]> : tensor<10x8xf32>} : () -> tensor<10x8xf32>
  %a = "onnx.Gather"(%w, %i) {axis = 0 : i64} : (tensor<10x8xf32>, tensor<2xi64>) -> tensor<2x8xf32>
  %b = "onnx.Gather"(%tied, %i) {axis = 0 : i64} : (tensor<10x8xf32>, tensor<2xi64>) -> tensor<2x8xf32>
  %c = "onnx.Gather"(%other, %i) {axis = 0 : i64} : (tensor<10x8xf32>, tensor<2xi64>) -> tensor<2x8xf32>
  %z1 = "onnx.Constant"() {value = dense<0.25> : tensor<4096xf32>} : () -> tensor<4096xf32>
  %z2 = "onnx.Constant"() {value = dense<0.25> : tensor<4096xf32>} : () -> tensor<4096xf32>
  %s = "onnx.Add"(%x, %z1) : (tensor<4096xf32>, tensor<4096xf32>) -> tensor<4096xf32>
  %t = "onnx.Add"(%x, %z2) : (tensor<4096xf32>, tensor<4096xf32>) -> tensor<4096xf32>
  return %a, %b, %c, %s, %t : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<4096xf32>, tensor<4096xf32>
}
