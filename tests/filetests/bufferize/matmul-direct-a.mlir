// RUN: onnxc opt %s -p bufferize | filecheck

// MatMul of row-major activations: the GEMM packs only B; the
// micro-kernel reads A's rows in place (a scalar load per row and depth
// step, broadcast), each row index clamped to the block's last row so an
// edge tile never reads past A. The tile is then stored in straight-line
// code: the first depth block's flag selects whether C is read back, and
// rows past M store under an all-off mask.
// CHECK-LABEL: func.func @dense_layer
// CHECK:         call @[[G:__onnxc_gemm_f32_v8_m1_[0-9a-f]+]](
// CHECK:       func.func private @[[G]](
// CHECK:         %[[BP:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         arith.minsi
// CHECK:         scf.for {{.*}} -> (vector<8xf32>
// CHECK:           vector.load %[[BP]][%{{.*}}] : memref<?xf32>, vector<8xf32>
// CHECK:           memref.load %arg0[%{{.*}}] : memref<?xf32>
// CHECK-NEXT:      vector.broadcast
// CHECK-NEXT:      vector.fma
// CHECK:           scf.yield
// CHECK-NEXT:    }
// CHECK-NOT:     scf.if
// CHECK:         vector.maskedload %arg2[
// CHECK-NEXT:    arith.addf
// CHECK-NEXT:    arith.select %{{.*}} : vector<8xi1>, vector<8xf32>
// CHECK-NOT:     scf.if
// CHECK:         vector.maskedstore %arg2
func.func @dense_layer(%x: tensor<?x64xf32>, %w: tensor<64x40xf32>) -> tensor<?x40xf32> {
  %0 = "onnx.MatMul"(%x, %w) : (tensor<?x64xf32>, tensor<64x40xf32>) -> tensor<?x40xf32>
  return %0 : tensor<?x40xf32>
}
