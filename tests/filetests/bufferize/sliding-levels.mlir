// RUN: onnxc opt %s -p "bufferize{vector-bits=256,x86-levels=1}" | filecheck

// The portable build's windows (a dense conv on planes, a depthwise conv,
// a pool) are each a function per x86-64 level at its level's vector
// width: the baseline's width ran at level 4 too, a 3->16 stem and the
// depthwise convs of small CNNs at about half the native speed.
// CHECK-LABEL: func.func @windows
// CHECK:         call @__onnxc_cpu_level() : () -> index
// CHECK:         func.call @[[D:__onnxc_dense_conv_[0-9a-f]+]]_v4(%arg0, %arg1,
// CHECK:         func.call @[[D]]_v3(%arg0, %arg1,
// CHECK:         func.call @[[D]]_v2(%arg0, %arg1,
// CHECK:         func.call @[[W:__onnxc_sliding_[0-9a-f]+]]_v4(%{{.*}}, %{{.*}}, %arg2,
// CHECK:         func.call @[[P:__onnxc_sliding_[0-9a-f]+]]_v4(
// CHECK:       func.func private @[[D]]_v2({{.*}}) attributes {onnxc.target_cpu = "x86-64-v2"}
// CHECK:         vector.fma %{{.*}} : vector<4xf32>
// CHECK:       func.func private @[[D]]_v3({{.*}}) attributes {onnxc.target_cpu = "x86-64-v3"}
// CHECK:         vector.fma %{{.*}} : vector<8xf32>
// CHECK:       func.func private @[[D]]_v4({{.*}}) attributes {onnxc.target_cpu = "x86-64-v4"}
// CHECK:         vector.fma %{{.*}} : vector<16xf32>
// CHECK:       func.func private @[[W]]_v4({{.*}}) attributes {onnxc.target_cpu = "x86-64-v4"}
// CHECK:         vector.fma %{{.*}} : vector<16xf32>
// CHECK:       func.func private @[[P]]_v4({{.*}}) attributes {onnxc.target_cpu = "x86-64-v4"}
// CHECK:         arith.maximumf %{{.*}} : vector<16xf32>
func.func @windows(%x: tensor<?x3x?x?xf32>, %w: tensor<16x3x3x3xf32>, %d: tensor<16x1x3x3xf32>) -> tensor<?x16x?x?xf32> {
  %0 = "onnx.Conv"(%x, %w) {pads = [1, 1, 1, 1], kernel_shape = [3, 3]} : (tensor<?x3x?x?xf32>, tensor<16x3x3x3xf32>) -> tensor<?x16x?x?xf32>
  %1 = "onnx.Conv"(%0, %d) {pads = [1, 1, 1, 1], kernel_shape = [3, 3], group = 16 : i64} : (tensor<?x16x?x?xf32>, tensor<16x1x3x3xf32>) -> tensor<?x16x?x?xf32>
  %2 = "onnx.MaxPool"(%1) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<?x16x?x?xf32>) -> tensor<?x16x?x?xf32>
  return %2 : tensor<?x16x?x?xf32>
}
