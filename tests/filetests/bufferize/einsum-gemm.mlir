// RUN: onnxc opt %s -p bufferize | filecheck

// A two-operand contraction is a batched GEMM over strided views: here
// rows i of q, columns j of k (read transposed: the `ms` variant packs
// them by strides), depth d; one call per batch entry, after the checks
// that the batch dims agree. Nothing is transposed into a copy.
// CHECK-LABEL: func.func @scores
// CHECK-NOT:     memref.copy
// CHECK:         cf.assert {{.*}} "onnx.Einsum {{.*}} input 0 dim 0 is not 1 and differs from the output's"
// CHECK:         cf.assert {{.*}} "onnx.Einsum {{.*}} input 1 dim 0 is not 1 and differs from the output's"
// CHECK:         scf.for
// CHECK:           func.call @[[G:__onnxc_gemm_f32_v8_ms_[0-9a-f]+]](
// CHECK:         return
func.func @scores(%q: tensor<?x?x40xf32>, %k: tensor<?x?x40xf32>) -> tensor<?x?x?xf32> {
  %0 = "onnx.Einsum"(%q, %k) {equation = "bid,bjd->bij"} : (tensor<?x?x40xf32>, tensor<?x?x40xf32>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

// A label summed within one input is not a product: a loop nest.
// CHECK-LABEL: func.func @row_sums
// CHECK-NOT:     call @__onnxc_gemm
// CHECK:         scf.for
// CHECK:           scf.for {{.*}} iter_args({{.*}}) -> (f32)
// CHECK:         return
func.func @row_sums(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %0 = "onnx.Einsum"(%x) {equation = "ij->i"} : (tensor<?x?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// Rows in place against B (a_direct): a tile of at most half the rows
// left takes a micro-kernel of half the height. At 256 bits the tile is
// 6 rows × 2 vectors, 6 × 1 for a narrow last panel; the half-height
// ones hold 3 × 2 and 3 × 1 accumulators: only those have 3.
// CHECK:       func.func private @[[G]](
// CHECK:         scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK:         scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>) {
