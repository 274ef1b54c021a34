// RUN: onnxc opt %s -p "bufferize{vector-bits=128}" | filecheck
// NO-MLIR-OPT: ui8 operands (ONNX uint8); upstream arith takes signless integers only.

// QLinearMatMul of s8 activations by constant u8 weights with per-column
// scales and zero points, on a target without VNNI (128-bit vectors).
// B' = B - 128 is packed: column 0's first quad (1, 3, 5, 7) - 128 is the
// word 0x87858381; colsum(B') = -615, -610; β = zb - 128 = 0, 2 is not all
// zero, so the tile also sums A's shifted bytes per row (3 rows, not 4,
// to leave the registers for those sums; N = 2 is one vector: 3 product
// accumulators and 3 row sums). A's words get +128 per byte by
// an xor. The dot is exact without VNNI: bytes widened to i16, the
// products of each i16 pair summed in i32 (x86vector.pmaddwd), then each
// lane's two pair sums added. The epilogue subtracts α·colsum(B'), adds
// β·(K·α - rowsum(A')), scales by sa·sb[n]/sy in f32, rounds to even,
// adds zy, saturates to [0, 255] and stores u8 under the column mask.
// CHECK:       memref.global "private" constant @[[SB:__constant_[0-9]+]] : memref<8xf32> = dense<[5.0e-01, 2.5e-01, 0.0e+00,
// CHECK:       memref.global "private" constant @[[SUMS:__constant_[0-9]+]] : memref<8xi32> = dense<[-615, -610, 0,
// CHECK:       memref.global "private" constant @[[BETA:__constant_[0-9]+]] : memref<8xi32> = dense<[0, 2, 0,
// CHECK:       memref.global "private" constant @[[PACKED:__constant_[0-9]+]] : memref<16xi32> = dense<[-2021293183, -2004450174, 0, 0, 0, 0, 0, 0, 137, 138,
// CHECK-LABEL: func.func @qlinear
// CHECK:         call @[[K:__onnxc_qgemm_k5_n2_v4_[0-9a-f]+]]({{.*}}) : (memref<?xi8>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xf32>, memref<?xui8>, index, i32, f32, f32, f32) -> ()
// CHECK:       func.func private @[[K]](
// CHECK-NOT:     x86vector
// CHECK:         scf.for {{.*}} -> (vector<4xi32>, vector<4xi32>, vector<4xi32>, vector<4xi32>, vector<4xi32>, vector<4xi32>) {
// CHECK:           vector.bitcast %{{.*}} : vector<4xi8> to vector<1xi32>
// CHECK:           arith.xori %{{.*}}, %{{.*}} : i32
// CHECK:           %[[U:.*]] = arith.extui %{{.*}} : vector<16xi8> to vector<16xi16>
// CHECK:           %[[S:.*]] = arith.extsi %{{.*}} : vector<16xi8> to vector<16xi16>
// CHECK-NEXT:      %[[PAIRS:.*]] = "x86vector.pmaddwd"(%[[U]], %[[S]]) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// CHECK-NEXT:      %[[LO:.*]] = vector.shuffle %[[PAIRS]], %[[PAIRS]] [0, 2, 4, 6] : vector<8xi32>, vector<8xi32>
// CHECK-NEXT:      %[[HI:.*]] = vector.shuffle %[[PAIRS]], %[[PAIRS]] [1, 3, 5, 7] : vector<8xi32>, vector<8xi32>
// CHECK-NEXT:      arith.addi %[[LO]], %[[HI]] : vector<4xi32>
// CHECK:         vector.maskedload %arg0
// CHECK:         vector.extract %{{.*}}[0] : i32 from vector<4xi32>
// CHECK:         vector.load %arg3[%{{.*}}] : memref<?xi32>, vector<4xi32>
// CHECK:         arith.sitofp %{{.*}} : vector<4xi32> to vector<4xf32>
// CHECK-NEXT:    arith.mulf
// CHECK-NEXT:    math.roundeven
// CHECK:         arith.maxnumf
// CHECK-NEXT:    arith.minnumf
// CHECK-NEXT:    arith.fptosi
// CHECK-NEXT:    arith.trunci %{{.*}} : vector<4xi32> to vector<4xui8>
// CHECK:         vector.maskedstore %arg5[%{{.*}}], %{{.*}}, %{{.*}} : memref<?xui8>, vector<4xi1>, vector<4xui8>
func.func @qlinear(%x: tensor<?x5xi8>, %xs: tensor<f32>, %xz: tensor<i8>, %ys: tensor<f32>, %yz: tensor<ui8>) -> tensor<?x2xui8> {
  %w = "onnx.Constant"() {value = dense<[[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]]> : tensor<5x2xui8>} : () -> tensor<5x2xui8>
  %ws = "onnx.Constant"() {value = dense<[0.5, 0.25]> : tensor<2xf32>} : () -> tensor<2xf32>
  %wz = "onnx.Constant"() {value = dense<[128, 130]> : tensor<2xui8>} : () -> tensor<2xui8>
  %y = "onnx.QLinearMatMul"(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) : (tensor<?x5xi8>, tensor<f32>, tensor<i8>, tensor<5x2xui8>, tensor<2xf32>, tensor<2xui8>, tensor<f32>, tensor<ui8>) -> tensor<?x2xui8>
  return %y : tensor<?x2xui8>
}
