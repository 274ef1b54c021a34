// RUN: onnxc opt %s -p bufferize | filecheck

// Pools and depthwise convolutions over runtime extents. Two-axis max
// pools and depthwise convs run on padded polyphase planes: per channel
// the input rows are copied into a scratch buffer (a stride-2 row
// deinterleaved by two loads and a shuffle; masked loads only where a
// vector crosses the input's edge, padding rows the neutral value; which
// rows and columns lie in the input is worked out per plane, so no row
// branches), then
// every tap is one unmasked load at a fixed offset from the output's
// position at the planes' pitch, and the rows are copied out. Averages
// keep the direct form: each axis loops over the taps inside the input
// only, the interior a vector at a time between scalar borders; a row
// too short for a whole vector goes a masked vector at a time, each lane
// dividing by its own count of taps. The
// output extents come from ONNX's formulas at run time, checked to be
// positive.

// CHECK-LABEL: func.func @pools
// CHECK:         cf.assert %{{.*}}, "onnx.MaxPool at {{.*}}: the pooling window is larger than the padded input"
// CHECK:         %[[MAX:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x4x?x?xf32>
// CHECK:         scf.for
// CHECK:         %[[PLANES:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xf32>
// CHECK-NOT:     scf.if
// CHECK:         vector.maskedstore %[[PLANES]][%{{.*}}], %{{.*}}, %{{.*}} : memref<?xf32>, vector<8xi1>, vector<8xf32>
// CHECK-NOT:     scf.if
// CHECK:         vector.maskedload %arg0[%{{.*}}], %{{.*}}, %{{.*}} : memref<?x4x?x?xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK:         vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14] : vector<8xf32>, vector<8xf32>
// CHECK:         vector.maskedstore %[[PLANES]][%{{.*}}], %{{.*}}, %{{.*}} : memref<?xf32>, vector<8xi1>, vector<8xf32>
// CHECK:         vector.load %arg0[%{{.*}}] : memref<?x4x?x?xf32>, vector<8xf32>
// CHECK:         vector.load %arg0[%{{.*}}] : memref<?x4x?x?xf32>, vector<8xf32>
// CHECK:         vector.shuffle
// CHECK:         vector.store %{{.*}}, %[[PLANES]][%{{.*}}] : memref<?xf32>, vector<8xf32>
// CHECK-NOT:     vector.gather
// CHECK:         vector.load %[[PLANES]][%{{.*}}] : memref<?xf32>, vector<8xf32>
// CHECK-NEXT:    arith.maximumf %{{.*}} : vector<8xf32>
// CHECK-COUNT-8: arith.maximumf %{{.*}} : vector<8xf32>
// CHECK:         vector.store %{{.*}}, %[[PLANES]][%{{.*}}] : memref<?xf32>, vector<8xf32>
// CHECK:         vector.store %{{.*}}, %[[MAX]][%{{.*}}] : memref<?x4x?x?xf32>, vector<8xf32>
// CHECK:         vector.maskedstore %[[MAX]][%{{.*}}], %{{.*}}, %{{.*}} : memref<?x4x?x?xf32>, vector<8xi1>, vector<8xf32>
// CHECK:         } {onnxc.parallel}
// CHECK:         cf.assert %{{.*}}, "onnx.AveragePool at {{.*}}: the pooling window is larger than the padded input"
// CHECK:         %[[AVG:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x4x?x?xf32>
// CHECK:         scf.if
// CHECK:         vector.maskedload %arg0[%{{.*}}], %{{.*}}, %{{.*}} : memref<?x4x?x?xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK-COUNT-3: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xf32>
// CHECK:         %[[N:.*]] = arith.mulf %{{.*}} : vector<8xf32>
// CHECK-NEXT:    arith.divf %{{.*}}, %[[N]] : vector<8xf32>
// CHECK:         vector.maskedstore %[[AVG]]
// CHECK:         } else {
// CHECK:         arith.divf %{{.*}} : f32
// CHECK:         vector.load %arg0[%{{.*}}] : memref<?x4x?x?xf32>, vector<8xf32>
// CHECK:         arith.divf %{{.*}} : vector<8xf32>
// CHECK:         vector.store %{{.*}}, %[[AVG]][%{{.*}}] : memref<?x4x?x?xf32>, vector<8xf32>
// CHECK:         return %[[MAX]], %[[AVG]]
func.func @pools(%x: tensor<?x4x?x?xf32>) -> (tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>) {
  %0 = "onnx.MaxPool"(%x) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], ceil_mode = 1 : i64} : (tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %1 = "onnx.AveragePool"(%x) {kernel_shape = [3, 3], auto_pad = "SAME_UPPER"} : (tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  return %0, %1 : tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>
}

// Depthwise: weighted taps of channel m / multiplier (the weights
// broadcast once per channel), the Relu that consumes the conv applied as
// each result is stored (no second pass).
// CHECK-LABEL: func.func @depthwise_relu
// CHECK:         %[[OUT:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x4x?x?xf32>
// CHECK:         %[[PLANES:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xf32>
// CHECK:         vector.maskedload %arg0[%{{.*}}], %{{.*}}, %{{.*}} : memref<?x4x?x?xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK-NOT:     vector.shuffle
// CHECK:         vector.load %arg0[%{{.*}}] : memref<?x4x?x?xf32>, vector<8xf32>
// CHECK-NEXT:    arith.addi
// CHECK-NEXT:    vector.store %{{.*}}, %[[PLANES]][%{{.*}}] : memref<?xf32>, vector<8xf32>
// CHECK-COUNT-9: memref.load %arg1[%{{.*}}] : memref<4x1x3x3xf32>
// CHECK:         scf.for
// CHECK-COUNT-9: vector.fma %{{.*}} : vector<8xf32>
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    vector.broadcast
// CHECK-NEXT:    arith.maximumf %{{.*}} : vector<8xf32>
// CHECK:         vector.store %{{.*}}, %[[PLANES]][%{{.*}}] : memref<?xf32>, vector<8xf32>
// CHECK:         vector.store %{{.*}}, %[[OUT]][%{{.*}}] : memref<?x4x?x?xf32>, vector<8xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         return %[[OUT]]
func.func @depthwise_relu(%x: tensor<?x4x?x?xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<?x4x?x?xf32> {
  %0 = "onnx.Conv"(%x, %w) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], group = 4 : i64} : (tensor<?x4x?x?xf32>, tensor<4x1x3x3xf32>) -> tensor<?x4x?x?xf32>
  %1 = "onnx.Relu"(%0) : (tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  return %1 : tensor<?x4x?x?xf32>
}
