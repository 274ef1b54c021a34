// RUN: onnxc opt %s -p "bufferize{vector-bits=256,x86-levels=1}" | filecheck

// The portable build's Winograd convolution is a function per x86-64
// level, each at its own vector width (the 256-bit code's 4 tiles per
// vector ran at level 4 too), called by the CPU level; the level-4 copy
// takes as many tiles per vector as a row has, up to 16: 16 on a 32-wide
// image (16 tiles a row), 8 on a 14-wide one (7 tiles).
// CHECK-LABEL: func.func @wide
// CHECK:         %[[LEVEL:.*]] = call @__onnxc_cpu_level() : () -> index
// CHECK:         func.call @[[W:__onnxc_winograd_[0-9a-f]+]]_v4(
// CHECK:         func.call @[[W]]_v3(
// CHECK:         func.call @[[W]]_v2(
// CHECK-LABEL: func.func @narrow
// CHECK:         func.call @[[N:__onnxc_winograd_[0-9a-f]+]]_v4(
// CHECK:       func.func private @[[W]]_v2({{.*}}) attributes {onnxc.target_cpu = "x86-64-v2"}
// CHECK:       func.func private @[[W]]_v3({{.*}}) attributes {onnxc.target_cpu = "x86-64-v3"}
// CHECK-NOT:     func.func
// CHECK:         vector.maskedstore %{{.*}} : memref<?xf32>, vector<4xi1>, vector<4xf32>
// CHECK:       func.func private @[[W]]_v4({{.*}}) attributes {onnxc.target_cpu = "x86-64-v4"}
// CHECK-NOT:     func.func
// CHECK:         vector.maskedstore %{{.*}} : memref<?xf32>, vector<16xi1>, vector<16xf32>
// CHECK:       func.func private @[[N]]_v4({{.*}}) attributes {onnxc.target_cpu = "x86-64-v4"}
// CHECK-NOT:     func.func
// CHECK:         vector.maskedstore %{{.*}} : memref<?xf32>, vector<8xi1>, vector<8xf32>
func.func @wide(%x: tensor<?x8x32x32xf32>) -> tensor<?x40x32x32xf32> {
  %w = "onnx.Constant"() {value = dense<0.5> : tensor<40x8x3x3xf32>} : () -> tensor<40x8x3x3xf32>
  %n = "onnx.NoValue"() : () -> none
  %0 = "onnx.Conv"(%x, %w, %n) {pads = [1, 1, 1, 1], kernel_shape = [3, 3]} : (tensor<?x8x32x32xf32>, tensor<40x8x3x3xf32>, none) -> tensor<?x40x32x32xf32>
  return %0 : tensor<?x40x32x32xf32>
}

func.func @narrow(%x: tensor<1x8x14x14xf32>) -> tensor<1x40x14x14xf32> {
  %w = "onnx.Constant"() {value = dense<0.25> : tensor<40x8x3x3xf32>} : () -> tensor<40x8x3x3xf32>
  %n = "onnx.NoValue"() : () -> none
  %0 = "onnx.Conv"(%x, %w, %n) {pads = [1, 1, 1, 1], kernel_shape = [3, 3]} : (tensor<1x8x14x14xf32>, tensor<40x8x3x3xf32>, none) -> tensor<1x40x14x14xf32>
  return %0 : tensor<1x40x14x14xf32>
}
