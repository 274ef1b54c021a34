// RUN: onnxc opt %s -p bufferize | filecheck

// A Gemm whose constant weights are stored [N, K] (transB = 1) gets them
// packed once, at compile time, from the transposed source into the
// panels the micro-kernel reads (`gemm::PackedB`: 40 deep, 20 columns
// padded to two 16-wide panels, 1280 elements), so no call packs or
// transposes them. The GEMM function reads those panels in place when M
// is 1 at run time: per panel the depth steps front to back, then the
// epilogue (the bias here) and the store under the panel's lane masks;
// otherwise the blocked path, B still packed.
// CHECK-LABEL: func.func @classifier_head
// CHECK:         memref.get_global @{{__constant_[0-9]+}} : memref<1280xf32>
// CHECK:         call @[[G:__onnxc_gemm_f32_v8_m1_[0-9a-f]+]](
// CHECK:       func.func private @[[G]](%arg0: memref<?xf32>, %arg1: memref<?xf32>, %arg2: memref<?xf32, strided<[1], offset: ?>>, %arg3: memref<?xf32>, %arg4: index
// CHECK:         %[[ONE:.*]] = arith.cmpi eq, %arg4, %{{.*}} : index
// CHECK:         scf.if %[[ONE]] {
// CHECK:           memref.load %arg0
// CHECK:           vector.load %arg1[%{{.*}}] : memref<?xf32>, vector<8xf32>
// CHECK:           vector.fma
// CHECK:           vector.maskedload %arg3
// CHECK:           vector.maskedstore %arg2[%{{.*}}]
// CHECK:         } else {
// CHECK-NOT:       vector.maskedload %arg1
// CHECK:       }
func.func @classifier_head(%x: tensor<1x40xf32>) -> tensor<1x20xf32> {
  %w = "onnx.Constant"() {value = dense<0.25> : tensor<20x40xf32>} : () -> tensor<20x40xf32>
  %c = "onnx.Constant"() {value = dense<1.0> : tensor<20xf32>} : () -> tensor<20xf32>
  %y = "onnx.Gemm"(%x, %w, %c) {transB = 1 : i64} : (tensor<1x40xf32>, tensor<20x40xf32>, tensor<20xf32>) -> tensor<1x20xf32>
  return %y : tensor<1x20xf32>
}
