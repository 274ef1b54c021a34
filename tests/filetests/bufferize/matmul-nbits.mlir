// RUN: onnxc opt %s -p bufferize | filecheck

// MatMulNBits (4-bit codes, blocks of 32, K = 40: one whole block and a
// partial one of 8) never makes a dequantized copy of its weights: few
// rows take register tiles, whose steps load 8 bytes of codes, split
// their nibbles, interleave them back into K order and widen them to 16
// f32 lanes, dequantize with one FMA (q · scale + shift) and feed the
// tile's accumulators; the partial block's step reads A under a mask.
// Many rows (12 or more) dequantize a panel of columns at a time straight
// into the GEMM's packed layout (16 columns × 16 codes transposed in
// registers; the partial block stores its 8 rows whole, no mask), then
// call the GEMM on it.
// CHECK-LABEL: func.func @nbits
// CHECK:         %[[MANY:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : index
// CHECK:         scf.if %[[MANY]] {
// CHECK:           %[[PANEL:.*]] = memref.alloc() {{.*}} : memref<{{[0-9]+}}xf32>
// CHECK:           vector.shuffle %{{.*}} [0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30] : vector<16xf32>, vector<16xf32>
// CHECK:           vector.shuffle %{{.*}} [0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29] : vector<16xf32>, vector<16xf32>
// CHECK:           vector.store %{{.*}}, %[[PANEL]][%{{.*}}] : memref<{{[0-9]+}}xf32>, vector<16xf32>
// CHECK-NOT:       vector.maskedstore
// CHECK:           call @__onnxc_gemm_f32
// CHECK:         } else {
// CHECK:           vector.load %{{.*}} : memref<6x2x16xui8>, vector<8xui8>
// CHECK:           vector.bitcast %{{.*}} : vector<8xui8> to vector<8xi8>
// CHECK:           arith.shrui %{{.*}} : vector<8xi8>
// CHECK:           vector.shuffle %{{.*}} [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15]
// CHECK:           arith.extui %{{.*}} : vector<16xi8> to vector<16xi32>
// CHECK:           arith.uitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK:           vector.fma
// CHECK:           vector.maskedload %arg0
// CHECK:           vector.reduction <add>
// CHECK-NOT:     memref.alloc() {{.*}}x40xf32>
func.func @nbits(%a: tensor<?x40xf32>) -> tensor<?x6xf32> {
  %b = "onnx.Constant"() {value = dense<17> : tensor<6x2x16xui8>} : () -> tensor<6x2x16xui8>
  %s = "onnx.Constant"() {value = dense<0.5> : tensor<12xf32>} : () -> tensor<12xf32>
  %y = "ms.MatMulNBits"(%a, %b, %s) {K = 40 : i64, N = 6 : i64, bits = 4 : i64, block_size = 32 : i64} : (tensor<?x40xf32>, tensor<6x2x16xui8>, tensor<12xf32>) -> tensor<?x6xf32>
  return %y : tensor<?x6xf32>
}
