// RUN: onnxc opt %s -p "bufferize{vector-bits=256,x86-levels=1}" | filecheck
// NO-MLIR-OPT: ui8 operands (ONNX uint8); upstream arith takes signless integers only.

// The portable build's int8 kernels (int8-conv.mlir's QLinearConv): the
// generic kernel at the module's 256 bits (bytes widened to i16, pairs
// summed by x86vector.pmaddwd, which every x86-64 CPU has), built for the
// baseline (`_v2`) and as `_v3` for x86-64-v3 (not left to multiversion: at level
// 4 LLVM joined the pmaddwd parts into 512 bits and split them again,
// slower than the AVX2 code), and a `_v5` variant with vpdpbusd at 512
// bits for CPUs with AVX512-VNNI (built for cascadelake), over the same
// packed weights (one argument list). The call takes the VNNI one at
// level 5, `_v3` at levels 3 and 4, the baseline below.
// CHECK-LABEL: func.func @qconv
// CHECK:         %[[LEVEL:.*]] = call @__onnxc_cpu_level() : () -> index
// CHECK-NEXT:    %[[FIVE:.*]] = arith.constant 5 : index
// CHECK-NEXT:    %[[VNNI:.*]] = arith.cmpi sge, %[[LEVEL]], %[[FIVE]] : index
// CHECK-NEXT:    scf.if %[[VNNI]] {
// CHECK-NEXT:      func.call @[[K:__onnxc_qconv_k3x3s2x2d1x1_[0-9a-f]+]]_v5(%[[ARGS:.*]]) :
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[THREE:.*]] = arith.constant 3 : index
// CHECK-NEXT:      %[[AVX2:.*]] = arith.cmpi sge, %[[LEVEL]], %[[THREE]] : index
// CHECK-NEXT:      scf.if %[[AVX2]] {
// CHECK-NEXT:        func.call @[[K]]_v3(%[[ARGS]]) :
// CHECK-NEXT:      } else {
// CHECK-NEXT:        func.call @[[K]]_v2(%[[ARGS]]) :
// The generic panel holds two planes of byte pairs (rows 0 and 1 of a
// depth quad, then rows 2 and 3: the two pair vectors concatenated), and
// the weights' broadcast word is split the same way, so each plane's
// pmaddwd sums land in their own lanes: the two halves are added.
// CHECK:       func.func private @[[K]]_v2({{.*}}) attributes {onnxc.target_cpu = "x86-64-v2"}
// CHECK-NOT:     vpdpbusd
// CHECK:         vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31] : vector<16xui8>, vector<16xui8>
// CHECK:         scf.for {{.*}} -> (vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>) {
// CHECK:           %[[U:.*]] = arith.extui %{{.*}} : vector<32xi8> to vector<32xi16>
// CHECK:           %[[SP:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3] : vector<32xi8>, vector<32xi8>
// CHECK-NEXT:      %[[S:.*]] = arith.extsi %[[SP]] : vector<32xi8> to vector<32xi16>
// CHECK-NEXT:      %[[P:.*]] = "x86vector.pmaddwd"(%[[U]], %[[S]]) : (vector<32xi16>, vector<32xi16>) -> vector<16xi32>
// CHECK-NEXT:      %[[LO:.*]] = vector.shuffle %[[P]], %[[P]] [0, 1, 2, 3, 4, 5, 6, 7] : vector<16xi32>, vector<16xi32>
// CHECK-NEXT:      %[[HI:.*]] = vector.shuffle %[[P]], %[[P]] [8, 9, 10, 11, 12, 13, 14, 15] : vector<16xi32>, vector<16xi32>
// CHECK-NOT:     vpdpbusd
// CHECK:       func.func private @[[K]]_v3({{.*}}) attributes {onnxc.target_cpu = "x86-64-v3"}
// CHECK:           "x86vector.pmaddwd"
// CHECK-NOT:     vpdpbusd
// CHECK:       func.func private @[[K]]_v5({{.*}}) attributes {onnxc.target_cpu = "cascadelake"}
// CHECK:           x86vector.vpdpbusd %{{.*}}, %{{.*}}, %{{.*}} : vector<16xi32>

func.func @qconv(%x: tensor<?x2x?x?xui8>, %xs: tensor<f32>, %xz: tensor<ui8>, %ys: tensor<f32>, %yz: tensor<ui8>, %bias: tensor<3xi32>) -> tensor<?x3x?x?xui8> {
  %w = "onnx.Constant"() {value = dense<1> : tensor<3x2x3x3xi8>} : () -> tensor<3x2x3x3xi8>
  %ws = "onnx.Constant"() {value = dense<[0.5, 0.25, 0.125]> : tensor<3xf32>} : () -> tensor<3xf32>
  %wz = "onnx.Constant"() {value = dense<0> : tensor<3xi8>} : () -> tensor<3xi8>
  %y = "onnx.QLinearConv"(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %bias) {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<?x2x?x?xui8>, tensor<f32>, tensor<ui8>, tensor<3x2x3x3xi8>, tensor<3xf32>, tensor<3xi8>, tensor<f32>, tensor<ui8>, tensor<3xi32>) -> tensor<?x3x?x?xui8>
  return %y : tensor<?x3x?x?xui8>
}
