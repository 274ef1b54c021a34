// RUN: onnxc opt %s -p bufferize | filecheck

// Conv (static shapes): an im2col copy of the input into a [1, C·KH·KW,
// OH·OW] scratch buffer (padded taps clamped and masked by select), then a
// blocked GEMM with the weight viewed as [M, C·KH·KW] and the output as
// [N, M, OH·OW]; both are private functions shared by convs of one shape.
// MaxPool: a window nest, with -inf as the neutral.

// CHECK-LABEL: func.func @conv_pool
// CHECK:         %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x4x4xf32>
// CHECK:         %[[COL:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x27x16xf32>
// CHECK:         %[[O3:.*]] = memref.reinterpret_cast %[[OUT]] {{.*}} to memref<1x2x16xf32>
// CHECK:         %[[W2:.*]] = memref.reinterpret_cast %arg1 {{.*}} to memref<2x27xf32>
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             func.call @[[IM2COL:__onnxc_im2col_[a-z0-9_]*]](%arg0, %[[COL]],
// CHECK:             func.call @[[GEMM:__onnxc_gemm_[a-z0-9_]*]](%[[W2]], %[[COL]], %[[O3]], %arg2,
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<1x2x2x2xf32>
// CHECK:         arith.constant 0xFF800000 : f32
// CHECK:         arith.maximumf
// CHECK:       func.func private @[[IM2COL]](
// CHECK:         arith.cmpi sge
// CHECK:         arith.cmpi slt
// CHECK:         arith.select
// CHECK:       func.func private @[[GEMM]](
// CHECK:         %[[PROD:.*]] = arith.mulf
// CHECK-NEXT:    arith.addf %{{.*}}, %[[PROD]]
// CHECK:         } {onnxc.vectorize}
func.func @conv_pool(%x: tensor<1x3x4x4xf32>, %w: tensor<2x3x3x3xf32>, %b: tensor<2xf32>) -> tensor<1x2x2x2xf32> {
  %0 = "onnx.Conv"(%x, %w, %b) {pads = [1, 1, 1, 1], kernel_shape = [3, 3]} : (tensor<1x3x4x4xf32>, tensor<2x3x3x3xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %1 = "onnx.MaxPool"(%0) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  return %1 : tensor<1x2x2x2xf32>
}
