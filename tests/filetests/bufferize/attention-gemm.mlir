// RUN: onnxc opt %s -p bufferize | filecheck

// Attention on f32: per image and head, the scores Q·Kᵀ are one call of
// the packed GEMM (B read with columns a head size apart: Kᵀ), scaled and
// biased element by element, softmaxed row by row in vectors (a row of
// -inf gives zeros: its max counts as 0, its sum of zeros as 1), and P·V
// is a second GEMM call writing Y in Q's [batch, seq, heads·size] layout.

// CHECK-LABEL: func.func @attention
// CHECK:         %[[SCORES:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [%{{.*}}], strides: [1] : memref<2x2x5x7xf32> to memref<?xf32>
// CHECK:         scf.for
// CHECK-NEXT:      scf.for
// CHECK:             %[[C:.*]] = memref.cast %[[SCORES]]
// CHECK-NEXT:        func.call @[[QK:__onnxc_gemm_f32_v8_ms_[0-9a-f]*]](%{{.*}}, %{{.*}}, %[[C]],
// CHECK:         arith.mulf
// The vector softmax rows.
// CHECK:         vector.reduction <maximumf>
// CHECK:         arith.select %{{.*}} : f32
// CHECK:         math.exp %{{.*}} : vector<8xf32>
// CHECK:         vector.reduction <add>
// CHECK:         arith.select %{{.*}} : f32
// CHECK:         %[[Y:.*]] = memref.reinterpret_cast %{{.*}} : memref<2x5x8xf32> to memref<?xf32>
// CHECK:         scf.for
// CHECK-NEXT:      scf.for
// CHECK:             %[[YV:.*]] = memref.cast %[[Y]]
// CHECK-NEXT:        func.call @[[PV:__onnxc_gemm_f32_v8_m1_[0-9a-f]*]](%{{.*}}, %{{.*}}, %[[YV]],
// CHECK:         return
// CHECK:       func.func private @[[QK]](
// CHECK:       func.func private @[[PV]](
func.func @attention(%q: tensor<2x5x16xf32>, %k: tensor<2x7x16xf32>, %v: tensor<2x7x8xf32>) -> tensor<2x5x8xf32> {
  %0 = "onnx.Attention"(%q, %k, %v) {q_num_heads = 2 : i64, kv_num_heads = 2 : i64} : (tensor<2x5x16xf32>, tensor<2x7x16xf32>, tensor<2x7x8xf32>) -> tensor<2x5x8xf32>
  return %0 : tensor<2x5x8xf32>
}
