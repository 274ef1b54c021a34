// RUN: onnxc opt %s -p constprop | filecheck

// A Reshape or Expand target built at run time from symbolic sizes becomes
// a constant the op resolves from its input: Reshape's 0 copies the input
// dim at that index, one -1 infers the rest; Expand's 1 keeps the aligned
// input dim.

// Heads split from [B, S, 64] by Concat(Shape(x)[0], Shape(x)[1], 2, 32):
// [0, 0, 2, 32]; merged back to [B, S, 64] after a Transpose to
// [B, 2, S, 32], where S is not at index 1: [0, -1, 64].
// CHECK-LABEL: func.func @heads
// CHECK:         %[[T1:.*]] = "onnx.Constant"() {value = dense<[0, 0, 2, 32]> : tensor<4xi64>}
// CHECK:         "onnx.Reshape"(%arg0, %[[T1]])
// CHECK:         %[[T2:.*]] = "onnx.Constant"() {value = dense<[0, -1, 64]> : tensor<3xi64>}
// CHECK:         "onnx.Reshape"(%{{.*}}, %[[T2]])
// CHECK-NOT:     onnx.Shape
func.func @heads(%x: tensor<?x?x64xf32, #onnx.dims<"B, S, 64">>) -> tensor<?x?x?xf32> {
  %s = "onnx.Shape"(%x) : (tensor<?x?x64xf32, #onnx.dims<"B, S, 64">>) -> tensor<3xi64>
  %i0 = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %i1 = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %b = "onnx.Gather"(%s, %i0) {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %q = "onnx.Gather"(%s, %i1) {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %two = "onnx.Constant"() {value = dense<[2, 32]> : tensor<2xi64>} : () -> tensor<2xi64>
  %t1 = "onnx.Concat"(%b, %q, %two) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<2xi64>) -> tensor<4xi64>
  %h = "onnx.Reshape"(%x, %t1) : (tensor<?x?x64xf32, #onnx.dims<"B, S, 64">>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  %p = "onnx.Transpose"(%h) {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %c64 = "onnx.Constant"() {value = dense<[64]> : tensor<1xi64>} : () -> tensor<1xi64>
  %t2 = "onnx.Concat"(%b, %q, %c64) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %y = "onnx.Reshape"(%p, %t2) : (tensor<?x?x?x?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  return %y : tensor<?x?x?xf32>
}

// Two dynamic entries neither of which the input has at its index stay
// a runtime target (ShuffleNet's channel shuffle on dynamic H and W).
// CHECK-LABEL: func.func @shuffle
// CHECK:         "onnx.Concat"
// CHECK:         "onnx.Reshape"(%arg0, %{{.*}}) {{.*}}tensor<5xi64>
func.func @shuffle(%x: tensor<?x8x?x?xf32, #onnx.dims<"N, 8, H, W">>) -> tensor<?x?x?x?x?xf32> {
  %s = "onnx.Shape"(%x) : (tensor<?x8x?x?xf32, #onnx.dims<"N, 8, H, W">>) -> tensor<4xi64>
  %i0 = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %hw = "onnx.Constant"() {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %n = "onnx.Gather"(%s, %i0) {axis = 0 : i64} : (tensor<4xi64>, tensor<1xi64>) -> tensor<1xi64>
  %d = "onnx.Gather"(%s, %hw) {axis = 0 : i64} : (tensor<4xi64>, tensor<2xi64>) -> tensor<2xi64>
  %g = "onnx.Constant"() {value = dense<[2, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %t = "onnx.Concat"(%n, %g, %d) {axis = 0 : i64} : (tensor<1xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<5xi64>
  %y = "onnx.Reshape"(%x, %t) : (tensor<?x8x?x?xf32, #onnx.dims<"N, 8, H, W">>, tensor<5xi64>) -> tensor<?x?x?x?x?xf32>
  return %y : tensor<?x?x?x?x?xf32>
}

// Expand of a mask [B, 1, 1, S] to [B, 4, 1, S]: B and S are the mask's
// own dims, so the target is [1, 4, 1, 1].
// CHECK-LABEL: func.func @expand
// CHECK:         %[[T:.*]] = "onnx.Constant"() {value = dense<[1, 4, 1, 1]> : tensor<4xi64>}
// CHECK:         "onnx.Expand"(%arg0, %[[T]])
func.func @expand(%m: tensor<?x1x1x?xf32, #onnx.dims<"B, 1, 1, S">>) -> tensor<?x?x?x?xf32> {
  %s = "onnx.Shape"(%m) : (tensor<?x1x1x?xf32, #onnx.dims<"B, 1, 1, S">>) -> tensor<4xi64>
  %i0 = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %i3 = "onnx.Constant"() {value = dense<[3]> : tensor<1xi64>} : () -> tensor<1xi64>
  %b = "onnx.Gather"(%s, %i0) {axis = 0 : i64} : (tensor<4xi64>, tensor<1xi64>) -> tensor<1xi64>
  %q = "onnx.Gather"(%s, %i3) {axis = 0 : i64} : (tensor<4xi64>, tensor<1xi64>) -> tensor<1xi64>
  %k = "onnx.Constant"() {value = dense<[4, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %t = "onnx.Concat"(%b, %k, %q) {axis = 0 : i64} : (tensor<1xi64>, tensor<2xi64>, tensor<1xi64>) -> tensor<4xi64>
  %y = "onnx.Expand"(%m, %t) : (tensor<?x1x1x?xf32, #onnx.dims<"B, 1, 1, S">>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  return %y : tensor<?x?x?x?xf32>
}
