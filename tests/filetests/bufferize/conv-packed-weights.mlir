// RUN: onnxc opt %s -p bufferize | filecheck

// A pointwise conv with constant weights: the weights are packed once, at
// compile time, into the micro-kernel's panel order (10 rows padded to 12
// for MR = 6 at 256 bits: 12 · 4 = 48 elements, value 0.5, padding 0), so
// the GEMM function allocates no A buffer and packs only B. The last
// panel of columns gets a micro-kernel as wide as it needs: 16 columns
// (2 vectors of 8) in full panels, one vector when 8 or fewer are left.

// CHECK:       memref.global "private" constant @[[PACKED:__constant_[0-9]+]] : memref<48xf32> = dense<[5.0e-01, {{(5\.0e-01, ){26}5\.0e-01}}, 0.0e+00, 0.0e+00, 5.0e-01,
// CHECK-LABEL: func.func @pointwise
// CHECK:         %[[G:.*]] = memref.get_global @[[PACKED]] : memref<48xf32>
// CHECK:         %[[A:.*]] = memref.reinterpret_cast %[[G]] {{.*}} to memref<?xf32>
// CHECK:         call @[[GEMM:__onnxc_gemm_f32_v8_m1_[0-9a-f]*]](%[[A]],
// CHECK:       func.func private @[[GEMM]](
// CHECK-NOT:     scf.if
// CHECK:         %[[BP:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         vector.maskedload %arg1
// CHECK:         vector.store %{{.*}}, %[[BP]][%{{.*}}] : memref<?xf32>, vector<8xf32>
// CHECK:         %[[WIDE:.*]] = arith.cmpi sgt, %{{.*}}, %{{.*}} : index
// CHECK:         scf.if %[[WIDE]] {
// CHECK-COUNT-12: vector.fma %{{.*}} : vector<8xf32>
// CHECK:         } else {
// CHECK-COUNT-6: vector.fma %{{.*}} : vector<8xf32>
// CHECK-NOT:     vector.fma
// CHECK:         return
func.func @pointwise(%x: tensor<1x4x?x?xf32>) -> tensor<1x10x?x?xf32> {
  %w = "onnx.Constant"() {value = dense<0.5> : tensor<10x4x1x1xf32>} : () -> tensor<10x4x1x1xf32>
  %y = "onnx.Conv"(%x, %w) {kernel_shape = [1, 1]} : (tensor<1x4x?x?xf32>, tensor<10x4x1x1xf32>) -> tensor<1x10x?x?xf32>
  return %y : tensor<1x10x?x?xf32>
}
