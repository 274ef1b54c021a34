// RUN: onnxc opt %s -p bufferize | filecheck

// Conv: a loop nest over the output (n, m, oh, ow) with a reduction nest
// over (c, kh, kw) carrying the accumulator; padded taps are clamped and
// masked by select. MaxPool: the same window, with -inf as the neutral.

// CHECK-LABEL: func.func @conv_pool
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<1x2x4x4xf32>
// CHECK:         scf.for
// CHECK:           %{{.*}} = scf.for %{{.*}} iter_args
// CHECK:             arith.cmpi sge
// CHECK:             arith.cmpi slt
// CHECK:             arith.select
// CHECK:             arith.mulf
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<1x2x2x2xf32>
// CHECK:         arith.constant 0xFF800000 : f32
// CHECK:         arith.maximumf
func.func @conv_pool(%x: tensor<1x3x4x4xf32>, %w: tensor<2x3x3x3xf32>, %b: tensor<2xf32>) -> tensor<1x2x2x2xf32> {
  %0 = "onnx.Conv"(%x, %w, %b) {pads = [1, 1, 1, 1], kernel_shape = [3, 3]} : (tensor<1x3x4x4xf32>, tensor<2x3x3x3xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %1 = "onnx.MaxPool"(%0) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  return %1 : tensor<1x2x2x2xf32>
}
