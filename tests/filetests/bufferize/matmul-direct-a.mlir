// RUN: onnxc opt %s -p bufferize | filecheck

// MatMul of row-major activations: the GEMM packs only B; the
// micro-kernel reads A's rows in place (a scalar load per row and depth
// step, broadcast), each row index clamped to the block's last row so an
// edge tile never reads past A. The tile is then stored in straight-line
// code but for one branch: the first depth block reads nothing from C
// (-0.0 lanes, which add nothing), later ones read every row before any
// is stored, and rows past M go to the last row, stored first.
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
// CHECK:         %[[NZ:.*]] = arith.constant -0.0{{.*}} : f32
// CHECK:         %[[P:.*]] = vector.broadcast %[[NZ]] : f32 to vector<8xf32>
// CHECK:         %[[OLD:.*]]:12 = scf.if %{{.*}} -> (vector<8xf32>,
// CHECK-NEXT:      scf.yield %[[P]], %[[P]],
// CHECK-NEXT:    } else {
// CHECK-NOT:       vector.maskedstore
// CHECK:           vector.maskedload %arg2[%{{.*}}], %{{.*}}, %[[P]]
// CHECK-NOT:       vector.maskedstore
// CHECK:           scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    arith.addf %[[OLD]]#0
// CHECK-NOT:     scf.if
// CHECK:         vector.maskedstore %arg2
func.func @dense_layer(%x: tensor<?x64xf32>, %w: tensor<64x40xf32>) -> tensor<?x40xf32> {
  %0 = "onnx.MatMul"(%x, %w) : (tensor<?x64xf32>, tensor<64x40xf32>) -> tensor<?x40xf32>
  return %0 : tensor<?x40xf32>
}
