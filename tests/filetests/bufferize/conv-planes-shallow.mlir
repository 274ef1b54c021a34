// RUN: onnxc opt %s -p bufferize | filecheck

// A stem over three channels (products 27 deep) runs on planes up to 64
// output channels; 147 deep (a 7x7 stem) it stays a GEMM.

// CHECK-LABEL: func.func @stem_3x3
// CHECK-NOT:     call @__onnxc_gemm
// CHECK:         vector.shuffle
// CHECK-COUNT-8: vector.fma
// CHECK:         return
func.func @stem_3x3(%x: tensor<1x3x32x32xf32>, %w: tensor<64x3x3x3xf32>) -> tensor<1x64x16x16xf32> {
  %0 = "onnx.Conv"(%x, %w) {pads = [1, 1, 1, 1], strides = [2, 2], kernel_shape = [3, 3]} : (tensor<1x3x32x32xf32>, tensor<64x3x3x3xf32>) -> tensor<1x64x16x16xf32>
  return %0 : tensor<1x64x16x16xf32>
}

// CHECK-LABEL: func.func @stem_7x7
// CHECK:         call @__onnxc_gemm_f32_v8_ck7x7s2x2d1x1_
// CHECK:         return
func.func @stem_7x7(%x: tensor<1x3x32x32xf32>, %w: tensor<64x3x7x7xf32>) -> tensor<1x64x16x16xf32> {
  %0 = "onnx.Conv"(%x, %w) {pads = [3, 3, 3, 3], strides = [2, 2], kernel_shape = [7, 7]} : (tensor<1x3x32x32xf32>, tensor<64x3x7x7xf32>) -> tensor<1x64x16x16xf32>
  return %0 : tensor<1x64x16x16xf32>
}
