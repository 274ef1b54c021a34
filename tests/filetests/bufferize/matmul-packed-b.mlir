// RUN: onnxc opt %s -p bufferize | filecheck

// A MatMul against constant weights [K, N] gets them packed at compile
// time into the micro-kernel's panels (depth blocks of KC, panels of NR =
// 16 columns, N = 20 padded to 32: 64 × 32 elements), so the GEMM packs
// nothing at run time: with A read in place, its function allocates no
// buffer. One row at run time (M = 1) reads each panel front to back,
// whole vectors (the padding is zeros), and stores under the edge masks.
// CHECK:       memref.global "private" constant @[[P:__constant_[0-9]+]] : memref<2048xf32>
// CHECK-LABEL: func.func @dense
// CHECK:         %[[G:.*]] = memref.get_global @[[P]] : memref<2048xf32>
// CHECK:         %[[B:.*]] = memref.reinterpret_cast %[[G]] to offset: [0], sizes: [%{{.*}}], strides: [1] : memref<2048xf32> to memref<?xf32>
// CHECK:         call @[[F:__onnxc_gemm_f32_v8_m1_[0-9a-f]+]](%{{.*}}, %[[B]],
// CHECK:       func.func private @[[F]](
// CHECK-NOT:     memref.alloc
// CHECK:         scf.if
// CHECK-NOT:     vector.maskedload %arg1
// CHECK:         vector.load %arg1[%{{.*}}] : memref<?xf32>, vector<8xf32>
// CHECK:         vector.fma
// CHECK:         vector.maskedstore %arg2
// CHECK:       } else {
// CHECK-NOT:     memref.alloc
// CHECK:         vector.load %arg1[%{{.*}}] : memref<?xf32>, vector<8xf32>
// CHECK:         vector.fma
// CHECK:         return
func.func @dense(%x: tensor<?x64xf32>) -> tensor<?x20xf32> {
  %w = "onnx.Constant"() {value = dense<0.5> : tensor<64x20xf32>} : () -> tensor<64x20xf32>
  %0 = "onnx.MatMul"(%x, %w) : (tensor<?x64xf32>, tensor<64x20xf32>) -> tensor<?x20xf32>
  return %0 : tensor<?x20xf32>
}
