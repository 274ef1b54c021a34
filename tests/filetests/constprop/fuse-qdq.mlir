// RUN: onnxc opt %s -p fuse-qdq | filecheck

// QDQ groups become int8 ops: a Conv between DequantizeLinears (input per
// tensor, weights per output channel, an i32 bias whose scale is x_scale ·
// w_scale) and a QuantizeLinear is one QLinearConv with the Conv's
// attributes and the bias last; a MatMul group is one QLinearMatMul. The
// DequantizeLinears and the float op are gone.
// CHECK-LABEL: func.func @qdq_conv
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK:         %{{.*}} = "onnx.QLinearConv"(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x2x5x5xui8>, tensor<f32>, tensor<ui8>, tensor<3x2x3x3xi8>, tensor<3xf32>, tensor<3xi8>, tensor<f32>, tensor<ui8>, tensor<3xi32>) -> tensor<1x3x5x5xui8>
// CHECK-NOT:     onnx.Conv
// CHECK-NOT:     onnx.QuantizeLinear
// CHECK:         return
func.func @qdq_conv(%xq: tensor<1x2x5x5xui8>) -> tensor<1x3x5x5xui8> {
  %xs = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %xz = "onnx.Constant"() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %wq = "onnx.Constant"() {value = dense<3> : tensor<3x2x3x3xi8>} : () -> tensor<3x2x3x3xi8>
  %ws = "onnx.Constant"() {value = dense<[0.25, 0.5, 1.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %wz = "onnx.Constant"() {value = dense<0> : tensor<3xi8>} : () -> tensor<3xi8>
  %bq = "onnx.Constant"() {value = dense<[10, 20, 30]> : tensor<3xi32>} : () -> tensor<3xi32>
  %bs = "onnx.Constant"() {value = dense<[0.125, 0.25, 0.5]> : tensor<3xf32>} : () -> tensor<3xf32>
  %bz = "onnx.Constant"() {value = dense<0> : tensor<3xi32>} : () -> tensor<3xi32>
  %ys = "onnx.Constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %yz = "onnx.Constant"() {value = dense<100> : tensor<ui8>} : () -> tensor<ui8>
  %x = "onnx.DequantizeLinear"(%xq, %xs, %xz) : (tensor<1x2x5x5xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x5x5xf32>
  %w = "onnx.DequantizeLinear"(%wq, %ws, %wz) {axis = 0 : si64} : (tensor<3x2x3x3xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<3x2x3x3xf32>
  %b = "onnx.DequantizeLinear"(%bq, %bs, %bz) {axis = 0 : si64} : (tensor<3xi32>, tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  %y = "onnx.Conv"(%x, %w, %b) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x5x5xf32>
  %yq = "onnx.QuantizeLinear"(%y, %ys, %yz) : (tensor<1x3x5x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x5x5xui8>
  return %yq : tensor<1x3x5x5xui8>
}

// A bias whose scale is not x_scale · w_scale cannot be added to the i32
// sums as it is: the group stays.
// CHECK-LABEL: func.func @bias_scale_differs
// CHECK:         onnx.Conv
// CHECK:         onnx.QuantizeLinear
// CHECK-NOT:     onnx.QLinearConv
func.func @bias_scale_differs(%xq: tensor<1x2x5x5xui8>) -> tensor<1x3x5x5xui8> {
  %xs = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %xz = "onnx.Constant"() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %wq = "onnx.Constant"() {value = dense<3> : tensor<3x2x3x3xi8>} : () -> tensor<3x2x3x3xi8>
  %ws = "onnx.Constant"() {value = dense<[0.25, 0.5, 1.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %wz = "onnx.Constant"() {value = dense<0> : tensor<3xi8>} : () -> tensor<3xi8>
  %bq = "onnx.Constant"() {value = dense<[10, 20, 30]> : tensor<3xi32>} : () -> tensor<3xi32>
  %bs = "onnx.Constant"() {value = dense<[0.1, 0.25, 0.5]> : tensor<3xf32>} : () -> tensor<3xf32>
  %bz = "onnx.Constant"() {value = dense<0> : tensor<3xi32>} : () -> tensor<3xi32>
  %ys = "onnx.Constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %yz = "onnx.Constant"() {value = dense<100> : tensor<ui8>} : () -> tensor<ui8>
  %x = "onnx.DequantizeLinear"(%xq, %xs, %xz) : (tensor<1x2x5x5xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x5x5xf32>
  %w = "onnx.DequantizeLinear"(%wq, %ws, %wz) {axis = 0 : si64} : (tensor<3x2x3x3xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<3x2x3x3xf32>
  %b = "onnx.DequantizeLinear"(%bq, %bs, %bz) {axis = 0 : si64} : (tensor<3xi32>, tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  %y = "onnx.Conv"(%x, %w, %b) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x5x5xf32>
  %yq = "onnx.QuantizeLinear"(%y, %ys, %yz) : (tensor<1x3x5x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x5x5xui8>
  return %yq : tensor<1x3x5x5xui8>
}

// MatMul against per-column weights.
// CHECK-LABEL: func.func @qdq_matmul
// CHECK:         "onnx.QLinearMatMul"(%arg0, %{{.*}}) : (tensor<?x4xui8>, tensor<f32>, tensor<ui8>, tensor<4x6xi8>, tensor<6xf32>, tensor<6xi8>, tensor<f32>, tensor<i8>) -> tensor<?x6xi8>
// CHECK-NOT:     onnx.MatMul
func.func @qdq_matmul(%aq: tensor<?x4xui8>) -> tensor<?x6xi8> {
  %as = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %az = "onnx.Constant"() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %bq = "onnx.Constant"() {value = dense<7> : tensor<4x6xi8>} : () -> tensor<4x6xi8>
  %bs = "onnx.Constant"() {value = dense<0.125> : tensor<6xf32>} : () -> tensor<6xf32>
  %bz = "onnx.Constant"() {value = dense<0> : tensor<6xi8>} : () -> tensor<6xi8>
  %ys = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %yz = "onnx.Constant"() {value = dense<-3> : tensor<i8>} : () -> tensor<i8>
  %a = "onnx.DequantizeLinear"(%aq, %as, %az) : (tensor<?x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<?x4xf32>
  %b = "onnx.DequantizeLinear"(%bq, %bs, %bz) {axis = 1 : si64} : (tensor<4x6xi8>, tensor<6xf32>, tensor<6xi8>) -> tensor<4x6xf32>
  %y = "onnx.MatMul"(%a, %b) : (tensor<?x4xf32>, tensor<4x6xf32>) -> tensor<?x6xf32>
  %yq = "onnx.QuantizeLinear"(%y, %ys, %yz) : (tensor<?x6xf32>, tensor<f32>, tensor<i8>) -> tensor<?x6xi8>
  return %yq : tensor<?x6xi8>
}
