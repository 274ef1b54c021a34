// RUN: onnxc opt %s -p bufferize | filecheck

// A grouped 3x3 conv on a 7-wide image: an 8-lane panel vector spans up
// to three output rows. Each row piece is one masked load at its own
// start (a row's lanes are contiguous in the input), merged into the
// previous pieces' lanes; only vectors over more rows than four gather.
// The depth loop runs taps outer and channels inner: a tap's padding
// masks are made once for all the block's channels.

// CHECK:       func.func private @__onnxc_gemm_f32_v8_ck3x3s1x1d1x1_{{[0-9a-f]*}}(
// Each later row's start: the most of its lanes' starts (all equal).
// CHECK:         vector.reduction <maxsi>, %{{.*}} : vector<8xi64> into i64
// The taps, then the channels with that tap.
// CHECK:         scf.for %[[TAP:.*]] = %{{.*}} to %{{.*}} step
// CHECK:           arith.cmpi ult
// CHECK:           scf.for %[[CH:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NOT:         arith.cmpi ult
// One row: a single load.
// CHECK:             scf.if %{{.*}} -> (vector<8xf32>) {
// CHECK-NEXT:          arith.addi
// CHECK-NEXT:          %[[ONE:.*]] = vector.maskedload %arg1[%{{.*}}], %[[M:.*]], %[[Z:.*]] :
// CHECK-NEXT:          scf.yield %[[ONE]]
// CHECK-NEXT:        } else {
// Two rows: two loads, the second merged into the first.
// CHECK:               scf.if %{{.*}} -> (vector<8xf32>) {
// CHECK:                 %[[R0:.*]] = vector.maskedload %arg1[%{{.*}}], %{{.*}}, %[[Z]] :
// CHECK:                 %[[R1:.*]] = vector.maskedload %arg1[%{{.*}}], %{{.*}}, %[[R0]] :
// CHECK-NEXT:            scf.yield %[[R1]]
// CHECK-NEXT:          } else {
// Up to four rows, else a gather.
// CHECK:                 scf.if %{{.*}} -> (vector<8xf32>) {
// CHECK:                   %[[P0:.*]] = vector.maskedload %arg1[%{{.*}}], %{{.*}}, %[[Z]] :
// CHECK:                   %[[P1:.*]] = vector.maskedload %arg1[%{{.*}}], %{{.*}}, %[[P0]] :
// CHECK:                   %[[P2:.*]] = vector.maskedload %arg1[%{{.*}}], %{{.*}}, %[[P1]] :
// CHECK:                   %[[P3:.*]] = vector.maskedload %arg1[%{{.*}}], %{{.*}}, %[[P2]] :
// CHECK-NEXT:              scf.yield %[[P3]]
// CHECK-NEXT:            } else {
// CHECK-NEXT:              vector.gather
// A panel's later vectors are packed only where it has columns.
// CHECK:             vector.store
// CHECK-NEXT:        arith.constant 8 : index
// CHECK-NEXT:        arith.cmpi slt
// CHECK-NEXT:        scf.if
func.func @grouped(%x: tensor<1x32x7x7xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<1x32x7x7xf32> {
  %0 = "onnx.Conv"(%x, %w) {group = 2 : i64, pads = [1, 1, 1, 1], kernel_shape = [3, 3]} : (tensor<1x32x7x7xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x7x7xf32>
  return %0 : tensor<1x32x7x7xf32>
}
