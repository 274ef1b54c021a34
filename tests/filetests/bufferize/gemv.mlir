// RUN: onnxc opt %s -p bufferize | filecheck

// A Gemm whose constant weights are stored [N, K] (transB = 1) gets them
// transposed once, at compile time, into a [K, N] global: the GEMM reads
// B's rows with vector loads (`m1`), not gathers. The GEMM function
// takes an unpacked path when M is 1 at run time: B is read in place,
// column blocks of vectors, then the epilogue (the bias here) and the
// store. Only the block reaching past N loads and stores under masks.
// CHECK-LABEL: func.func @classifier_head
// CHECK:         memref.get_global @{{__constant_[0-9]+}} : memref<40x20xf32>
// CHECK:         call @[[G:__onnxc_gemm_f32_v8_m1_[0-9a-f]+]](
// CHECK:       func.func private @[[G]](%arg0: memref<?xf32>, %arg1: memref<?xf32>, %arg2: memref<?xf32, strided<[1], offset: ?>>, %arg3: memref<?xf32>, %arg4: index
// CHECK:         %[[ONE:.*]] = arith.cmpi eq, %arg4, %{{.*}} : index
// CHECK:         scf.if %[[ONE]] {
// CHECK:           %[[WHOLE:.*]] = arith.cmpi sle, %{{.*}}, %arg5 : index
// CHECK:           scf.if %[[WHOLE]] {
// CHECK:             vector.load %arg1[%{{.*}}] : memref<?xf32>, vector<8xf32>
// CHECK:             vector.fma
// CHECK-NOT:         vector.maskedstore
// CHECK:             vector.store %{{.*}}, %arg2[%{{.*}}] : memref<?xf32, strided<[1], offset: ?>>, vector<8xf32>
// CHECK:           } else {
// CHECK:             vector.maskedload %arg1[%{{.*}}], %{{.*}}, %{{.*}} : memref<?xf32>, vector<8xi1>, vector<8xf32>
// CHECK:             vector.fma
// CHECK:             vector.maskedstore %arg2[%{{.*}}]
// CHECK:         } else {
func.func @classifier_head(%x: tensor<1x40xf32>) -> tensor<1x20xf32> {
  %w = "onnx.Constant"() {value = dense<0.25> : tensor<20x40xf32>} : () -> tensor<20x40xf32>
  %c = "onnx.Constant"() {value = dense<1.0> : tensor<20xf32>} : () -> tensor<20xf32>
  %y = "onnx.Gemm"(%x, %w, %c) {transB = 1 : i64} : (tensor<1x40xf32>, tensor<20x40xf32>, tensor<20xf32>) -> tensor<1x20xf32>
  return %y : tensor<1x20xf32>
}
