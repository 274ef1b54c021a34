// RUN: onnxc opt %s -p "bufferize{vector-bits=512,int8-dot=1}" | filecheck
// NO-MLIR-OPT: ui8 operands (ONNX uint8); upstream arith takes signless integers only.

// QLinearConv of u8 activations by constant s8 weights (per-channel
// scales, a bias) on a VNNI target. The weights are packed at compile
// time, one i32 word per output row and depth quad (K = 2·3·3 = 18: four
// quads of 0x01010101, then 0x0101), 3 rows: a group of 3 outputs takes
// a 3-row tile. Symmetric weights have α = 0, so the per-row constant is
// K·α - rowsum(W') = -18 and no column sums are needed. Per panel of 48
// output positions, the im2col view is gathered (padding lanes read the
// input's zero point), four depth rows at a time, and interleaved into
// words by two rounds of byte shuffles. The tile then takes, per quad,
// 3 panel vectors and one broadcast weight word per row: 9 `vpdpbusd`.
// The epilogue adds β·rowfix + bias, scales by xs·ws[c]/ys and stores u8
// rows of positions under the lane masks.
// CHECK:       memref.global "private" constant @[[FIX:__constant_[0-9]+]] : memref<3xi32> = dense<[-18, -18, -18]>
// CHECK:       memref.global "private" constant @[[W:__constant_[0-9]+]] : memref<15xi32> = dense<[16843009, {{(16843009, ){10}16843009}}, 257, 257, 257]>
// CHECK-LABEL: func.func @qconv
// CHECK:         call @[[K:__onnxc_qconv_k3x3s2x2d1x1_[0-9a-f]+]](
// CHECK:       func.func private @[[K]](
// CHECK:         scf.for
// CHECK:           %[[BUF:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xi32>
// CHECK:           scf.for
// CHECK:             scf.for {{.*}} {
// CHECK:               vector.gather %arg0[%{{.*}}] [%{{.*}}], %{{.*}}, %{{.*}} : memref<?xui8>, vector<16xi64>, vector<16xi1>, vector<16xui8> into vector<16xui8>
// CHECK:               vector.shuffle %{{.*}}, %{{.*}} [0, 16, 1, 17, {{.*}}] : vector<16xui8>, vector<16xui8>
// CHECK:               %[[Q:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 1, 32, 33, 2, 3, 34, 35, {{.*}}] : vector<32xui8>, vector<32xui8>
// CHECK-NEXT:          %[[WD:.*]] = vector.bitcast %[[Q]] : vector<64xui8> to vector<16xi32>
// CHECK:               vector.store %[[WD]], %[[BUF]][%{{.*}}] : memref<?xi32>, vector<16xi32>
// CHECK:             scf.for
// CHECK:               scf.for {{.*}} -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>) {
// CHECK:                 %[[P:.*]] = vector.load %[[BUF]][%{{.*}}] : memref<?xi32>, vector<16xi32>
// CHECK:                 %[[WW:.*]] = memref.load %arg1[%{{.*}}] : memref<?xi32>
// CHECK-NEXT:            %[[WB:.*]] = vector.broadcast %[[WW]] : i32 to vector<16xi32>
// CHECK-NEXT:            x86vector.vpdpbusd %{{.*}}, %[[P]], %[[WB]] : vector<16xi32>
// CHECK-COUNT-8:         x86vector.vpdpbusd
// CHECK-NOT:             x86vector.vpdpbusd
// CHECK:               scf.if
// CHECK:                 memref.load %arg2[%{{.*}}] : memref<?xi32>
// CHECK:                 memref.load %arg3[%{{.*}}] : memref<?xi32>
// CHECK:                 arith.sitofp
// CHECK:                 math.roundeven
// CHECK:                 arith.trunci %{{.*}} : vector<16xi32> to vector<16xui8>
// CHECK:                 vector.maskedstore %arg5[%{{.*}}], %{{.*}}, %{{.*}} : memref<?xui8>, vector<16xi1>, vector<16xui8>
func.func @qconv(%x: tensor<?x2x?x?xui8>, %xs: tensor<f32>, %xz: tensor<ui8>, %ys: tensor<f32>, %yz: tensor<ui8>, %bias: tensor<3xi32>) -> tensor<?x3x?x?xui8> {
  %w = "onnx.Constant"() {value = dense<1> : tensor<3x2x3x3xi8>} : () -> tensor<3x2x3x3xi8>
  %ws = "onnx.Constant"() {value = dense<[0.5, 0.25, 0.125]> : tensor<3xf32>} : () -> tensor<3xf32>
  %wz = "onnx.Constant"() {value = dense<0> : tensor<3xi8>} : () -> tensor<3xi8>
  %y = "onnx.QLinearConv"(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %bias) {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<?x2x?x?xui8>, tensor<f32>, tensor<ui8>, tensor<3x2x3x3xi8>, tensor<3xf32>, tensor<3xi8>, tensor<f32>, tensor<ui8>, tensor<3xi32>) -> tensor<?x3x?x?xui8>
  return %y : tensor<?x3x?x?xui8>
}
