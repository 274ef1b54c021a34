// RUN: onnxc opt %s -p constprop | filecheck

// An LSTM's initial state of zeros built from the batch size at run time
// (PyTorch and tf2onnx: Shape → Gather → Concat → Expand(0), or
// ConstantOfShape) is the default: the inputs are omitted and the shape
// arithmetic goes.
// CHECK-LABEL: func.func @lstm_state
// CHECK-NOT:     onnx.Shape
// CHECK-NOT:     onnx.Expand
// CHECK-NOT:     onnx.ConstantOfShape
// CHECK:         %[[N:.*]] = "onnx.NoValue"
// CHECK:         "onnx.LSTM"(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[N]], %[[N]])
func.func @lstm_state(%x: tensor<?x?x4xf32, #onnx.dims<"S, N, 4">>) -> tensor<?x1x?x3xf32> {
  %w = "onnx.Constant"() {value = dense<0.5> : tensor<1x12x4xf32>} : () -> tensor<1x12x4xf32>
  %r = "onnx.Constant"() {value = dense<0.25> : tensor<1x12x3xf32>} : () -> tensor<1x12x3xf32>
  %b = "onnx.Constant"() {value = dense<0.125> : tensor<1x24xf32>} : () -> tensor<1x24xf32>
  %none = "onnx.NoValue"() : () -> none
  %s = "onnx.Shape"(%x) : (tensor<?x?x4xf32, #onnx.dims<"S, N, 4">>) -> tensor<3xi64>
  %i1 = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %n = "onnx.Gather"(%s, %i1) {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %h = "onnx.Constant"() {value = dense<[3]> : tensor<1xi64>} : () -> tensor<1xi64>
  %shape = "onnx.Concat"(%i1, %n, %h) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %zero = "onnx.Constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %h0 = "onnx.Expand"(%zero, %shape) : (tensor<f32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %c0 = "onnx.ConstantOfShape"(%shape) : (tensor<3xi64>) -> tensor<?x?x?xf32>
  %y, %yh, %yc = "onnx.LSTM"(%x, %w, %r, %b, %none, %h0, %c0) {hidden_size = 3 : si64} : (tensor<?x?x4xf32, #onnx.dims<"S, N, 4">>, tensor<1x12x4xf32>, tensor<1x12x3xf32>, tensor<1x24xf32>, none, tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> (tensor<?x1x?x3xf32>, tensor<1x?x3xf32>, tensor<1x?x3xf32>)
  return %y : tensor<?x1x?x3xf32>
}

// A state that is not known to be zeros stays.
// CHECK-LABEL: func.func @given_state
// CHECK:         "onnx.GRU"(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg1)
func.func @given_state(%x: tensor<2x1x4xf32>, %h0: tensor<1x1x3xf32>) -> tensor<2x1x1x3xf32> {
  %w = "onnx.Constant"() {value = dense<0.5> : tensor<1x9x4xf32>} : () -> tensor<1x9x4xf32>
  %r = "onnx.Constant"() {value = dense<0.25> : tensor<1x9x3xf32>} : () -> tensor<1x9x3xf32>
  %b = "onnx.Constant"() {value = dense<0.125> : tensor<1x18xf32>} : () -> tensor<1x18xf32>
  %none = "onnx.NoValue"() : () -> none
  %y, %yh = "onnx.GRU"(%x, %w, %r, %b, %none, %h0) {hidden_size = 3 : si64} : (tensor<2x1x4xf32>, tensor<1x9x4xf32>, tensor<1x9x3xf32>, tensor<1x18xf32>, none, tensor<1x1x3xf32>) -> (tensor<2x1x1x3xf32>, tensor<1x1x3xf32>)
  return %y : tensor<2x1x1x3xf32>
}
