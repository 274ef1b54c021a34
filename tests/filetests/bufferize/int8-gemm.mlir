// RUN: onnxc opt %s -p "bufferize{vector-bits=512,int8-dot=1}" | filecheck
// NO-MLIR-OPT: ui8 operands (ONNX uint8); upstream arith takes signless integers only.

// MatMulInteger of u8 activations by constant s8 weights on a VNNI target.
// B is packed at compile time: one panel of NR = 48 columns, two depth
// quads (K = 6), each column's four bytes one i32 word (2s: 0x02020202,
// then 0x0202 for the last two rows), zero past N and K; colsum(B') = 12
// per column. A's rows are read in place, four bytes at a time, broadcast
// into `vpdpbusd` against the panel's words; the partial last quad is a
// masked load. Symmetric weights need no row sums of A, so the only
// correction is `- α·colsum(B')` with α the activations' zero point. N = 3
// fits one vector: the tile is 8 rows of one accumulator.
// CHECK:       memref.global "private" constant @[[SUMS:__constant_[0-9]+]] : memref<48xi32> = dense<[12, 12, 12, 0,
// CHECK:       memref.global "private" constant @[[PACKED:__constant_[0-9]+]] : memref<96xi32> = dense<"0x020202020202020202020202000000
// CHECK-LABEL: func.func @dense_int8
// CHECK:         %[[ZP:.*]] = memref.load %arg1[] : memref<ui8>
// CHECK:         %[[ALPHA:.*]] = arith.extui %[[ZP]] : ui8 to i32
// CHECK:         call @[[K:__onnxc_qgemm_k6_n3_v16_[0-9a-f]+]]({{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<?xui8>, memref<?xi32>, memref<?xi32>, memref<?xi32>, index, i32) -> ()
// CHECK:       func.func private @[[K]](
// CHECK-NOT:     scf.if
// CHECK:         scf.for {{.*}} -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>) {
// CHECK:           %[[B:.*]] = vector.load %arg1[%{{.*}}] : memref<?xi32>, vector<16xi32>
// CHECK:           %[[Q:.*]] = vector.load %arg0[%{{.*}}] : memref<?xui8>, vector<4xui8>
// CHECK-NEXT:      %[[W:.*]] = vector.bitcast %[[Q]] : vector<4xui8> to vector<1xi32>
// CHECK-NEXT:      %[[X:.*]] = vector.extract %[[W]][0] : i32 from vector<1xi32>
// CHECK-NEXT:      %[[BX:.*]] = vector.broadcast %[[X]] : i32 to vector<16xi32>
// CHECK-NEXT:      x86vector.vpdpbusd %{{.*}}, %[[BX]], %[[B]] : vector<16xi32>
// CHECK-COUNT-7:   x86vector.vpdpbusd
// CHECK:         vector.maskedload %arg0
// CHECK-COUNT-8: x86vector.vpdpbusd
// CHECK:         vector.load %arg2[%{{.*}}] : memref<?xi32>, vector<16xi32>
// CHECK:         arith.muli %{{.*}} : vector<16xi32>
// CHECK:         vector.maskedstore %arg3
// CHECK-NOT:     x86vector.vpdpbusd
// CHECK:         return
func.func @dense_int8(%x: tensor<?x6xui8>, %z: tensor<ui8>) -> tensor<?x3xi32> {
  %w = "onnx.Constant"() {value = dense<2> : tensor<6x3xi8>} : () -> tensor<6x3xi8>
  %n = "onnx.NoValue"() : () -> none
  %y = "onnx.MatMulInteger"(%x, %w, %z, %n) : (tensor<?x6xui8>, tensor<6x3xi8>, tensor<ui8>, none) -> tensor<?x3xi32>
  return %y : tensor<?x3xi32>
}
