// RUN: onnxc opt %s -p constprop | filecheck

// Shape arithmetic over the static part of a partly dynamic shape folds
// (onnx::shape_value): the dynamic dims are symbols, the static ones
// constants.

// Shape(x)[1:] with only the batch dynamic is a constant, and so is the
// Reshape to [N, -1] built from Shape(x)[0] (`[0, -1]`, see
// constant-target.mlir).
// CHECK-LABEL: func.func @static_tail
// CHECK-NEXT:    "onnx.Constant"() {value = dense<[3, 8]> : tensor<2xi64>}
// CHECK-NEXT:    %[[T:.*]] = "onnx.Constant"() {value = dense<[0, -1]> : tensor<2xi64>}
// CHECK-NEXT:    "onnx.Reshape"(%arg0, %[[T]])
// CHECK-NOT:     onnx.Shape
func.func @static_tail(%x: tensor<?x3x8xf32, #onnx.dims<"N, 3, 8">>) -> (tensor<2xi64>, tensor<?x?xf32>) {
  %s = "onnx.Shape"(%x) : (tensor<?x3x8xf32, #onnx.dims<"N, 3, 8">>) -> tensor<3xi64>
  %c1 = "onnx.Constant"() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %c9 = "onnx.Constant"() {value = dense<9> : tensor<1xi64>} : () -> tensor<1xi64>
  %tail = "onnx.Slice"(%s, %c1, %c9) : (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %i0 = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %n = "onnx.Gather"(%s, %i0) {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %m1 = "onnx.Constant"() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %shape = "onnx.Concat"(%n, %m1) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = "onnx.Reshape"(%x, %shape) : (tensor<?x3x8xf32, #onnx.dims<"N, 3, 8">>, tensor<2xi64>) -> tensor<?x?xf32>
  return %tail, %r : tensor<2xi64>, tensor<?x?xf32>
}

// A head size read from a partly dynamic shape, cast to float and turned
// into the attention scale 1/sqrt(64) (timm's ViT) folds to one constant.
// CHECK-LABEL: func.func @attention_scale
// CHECK-NEXT:    %[[C:.*]] = "onnx.Constant"() {value = dense<1.25e-01> : tensor<1xf32>}
// CHECK-NEXT:    %[[M:.*]] = "onnx.Mul"(%arg0, %[[C]])
// CHECK-NEXT:    return %[[M]]
func.func @attention_scale(%q: tensor<?x3x?x64xf32, #onnx.dims<"B, 3, S, 64">>) -> tensor<?x3x?x64xf32> {
  %s = "onnx.Shape"(%q) : (tensor<?x3x?x64xf32, #onnx.dims<"B, 3, S, 64">>) -> tensor<4xi64>
  %m1 = "onnx.Constant"() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %big = "onnx.Constant"() {value = dense<9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  %d = "onnx.Slice"(%s, %m1, %big) : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %f = "onnx.Cast"(%d) {to = 1 : si64} : (tensor<1xi64>) -> tensor<1xf32>
  %sq = "onnx.Sqrt"(%f) : (tensor<1xf32>) -> tensor<1xf32>
  %one = "onnx.Constant"() {value = dense<1.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %k = "onnx.Div"(%one, %sq) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  %y = "onnx.Mul"(%q, %k) : (tensor<?x3x?x64xf32, #onnx.dims<"B, 3, S, 64">>, tensor<1xf32>) -> tensor<?x3x?x64xf32>
  return %y : tensor<?x3x?x64xf32>
}

// Equal/Where over known sizes (the Expand shape guard exporters write):
// `Where(shape == -1, 1, shape)` of [N, 1, 4] with N dynamic keeps N.
// Static entries compared with constants fold; an int32 Cast of a static
// Gather folds; a bool Cast of a size stays (it is not a size any more).
// CHECK-LABEL: func.func @guards
// CHECK-DAG:     "onnx.Constant"() {value = dense<4> : tensor<i32>}
// CHECK-DAG:     "onnx.Constant"() {value = dense<[false, true]> : tensor<2xi1>}
// CHECK-DAG:     "onnx.Cast"(%{{.*}}) {to = 9 : si64}
func.func @guards(%x: tensor<?x1x4xf32, #onnx.dims<"N, 1, 4">>) -> (tensor<i32>, tensor<2xi1>, tensor<1xi1>) {
  %s = "onnx.Shape"(%x) : (tensor<?x1x4xf32, #onnx.dims<"N, 1, 4">>) -> tensor<3xi64>
  %i2 = "onnx.Constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %w = "onnx.Gather"(%s, %i2) {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %w32 = "onnx.Cast"(%w) {to = 6 : si64} : (tensor<i64>) -> tensor<i32>
  %c1 = "onnx.Constant"() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %c3 = "onnx.Constant"() {value = dense<3> : tensor<1xi64>} : () -> tensor<1xi64>
  %t = "onnx.Slice"(%s, %c1, %c3) : (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %four = "onnx.Constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
  %eq = "onnx.Equal"(%t, %four) : (tensor<2xi64>, tensor<i64>) -> tensor<2xi1>
  %c0 = "onnx.Constant"() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %n = "onnx.Slice"(%s, %c0, %c1) : (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %b = "onnx.Cast"(%n) {to = 9 : si64} : (tensor<1xi64>) -> tensor<1xi1>
  return %w32, %eq, %b : tensor<i32>, tensor<2xi1>, tensor<1xi1>
}

// Position ids as exporters build them, Range(0, Shape(x)[1], 1), have
// the sequence's symbol for their length, so the embeddings they gather
// add to the tokens' without a broadcast: [B, S, 4].
// CHECK-LABEL: func.func @position_ids
// CHECK:         "onnx.Range"({{.*}}) -> tensor<?xi64, #onnx.dims<"S">>
// CHECK:         "onnx.Add"({{.*}}) -> tensor<?x?x4xf32, #onnx.dims<"B, S, 4">>
func.func @position_ids(%ids: tensor<?x?xi64, #onnx.dims<"B, S">>, %tok: tensor<?x?x4xf32, #onnx.dims<"B, S, 4">>, %table: tensor<16x4xf32>) -> tensor<?x?x4xf32> {
  %s = "onnx.Shape"(%ids) : (tensor<?x?xi64, #onnx.dims<"B, S">>) -> tensor<2xi64>
  %one = "onnx.Constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %zero = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %len = "onnx.Gather"(%s, %one) {axis = 0 : i64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %pos = "onnx.Range"(%zero, %len, %one) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %ax = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %pos2 = "onnx.Unsqueeze"(%pos, %ax) : (tensor<?xi64>, tensor<1xi64>) -> tensor<1x?xi64>
  %emb = "onnx.Gather"(%table, %pos2) {axis = 0 : i64} : (tensor<16x4xf32>, tensor<1x?xi64>) -> tensor<1x?x4xf32>
  %sum = "onnx.Add"(%tok, %emb) : (tensor<?x?x4xf32, #onnx.dims<"B, S, 4">>, tensor<1x?x4xf32>) -> tensor<?x?x4xf32>
  return %sum : tensor<?x?x4xf32>
}
