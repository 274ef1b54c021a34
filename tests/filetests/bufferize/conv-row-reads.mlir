// RUN: onnxc opt %s -p bufferize | filecheck

// Stride 2 along the row: a vector in one row reads its lanes as the even
// elements of two masked loads (the mask spread to every other lane), not
// as a gather. A vector over two rows reads each row so, its lanes picked
// into the first's.

// CHECK:       func.func private @__onnxc_gemm_f32_v8_ck3x3s2x2d1x1_{{[0-9a-f]*}}(
// CHECK:         scf.if %{{.*}} -> (vector<8xf32>) {
// CHECK:           %[[LOM:.*]] = vector.shuffle %[[M:.*]], %[[NONE:.*]] [0, 8, 1, 8, 2, 8, 3, 8] : vector<8xi1>, vector<8xi1>
// CHECK-NEXT:      %[[HIM:.*]] = vector.shuffle %[[M]], %[[NONE]] [4, 8, 5, 8, 6, 8, 7, 8] : vector<8xi1>, vector<8xi1>
// CHECK-NEXT:      %[[LO:.*]] = vector.maskedload %arg1[%{{.*}}], %[[LOM]]
// CHECK:           %[[HI:.*]] = vector.maskedload %arg1[%{{.*}}], %[[HIM]]
// CHECK-NEXT:      %[[EVENS:.*]] = vector.shuffle %[[LO]], %[[HI]] [0, 2, 4, 6, 8, 10, 12, 14] : vector<8xf32>, vector<8xf32>
// CHECK-NEXT:      scf.yield %[[EVENS]]
// CHECK-NEXT:    } else {
// CHECK:             scf.if %{{.*}} -> (vector<8xf32>) {
// CHECK:               %[[R0:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14] : vector<8xf32>, vector<8xf32>
// CHECK-NEXT:          %[[A0:.*]] = arith.select %{{.*}}, %[[R0]], %{{.*}} : vector<8xi1>, vector<8xf32>
// CHECK:               %[[R1:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14] : vector<8xf32>, vector<8xf32>
// CHECK-NEXT:          %[[A1:.*]] = arith.select %{{.*}}, %[[R1]], %[[A0]] : vector<8xi1>, vector<8xf32>
// CHECK-NEXT:          scf.yield %[[A1]]
func.func @stride2(%x: tensor<1x16x9x9xf32>, %w: tensor<40x16x3x3xf32>) -> tensor<1x40x5x5xf32> {
  %0 = "onnx.Conv"(%x, %w) {pads = [1, 1, 1, 1], strides = [2, 2], kernel_shape = [3, 3]} : (tensor<1x16x9x9xf32>, tensor<40x16x3x3xf32>) -> tensor<1x40x5x5xf32>
  return %0 : tensor<1x40x5x5xf32>
}
