// RUN: onnxc opt %s -p bufferize | filecheck

// Pools and depthwise convolutions over runtime extents. Two-axis
// windows run on padded polyphase planes: per channel the input rows are
// copied into a scratch buffer (a stride-2 row deinterleaved by two
// loads and a shuffle; padding rows the neutral value, filled as one
// flat span; which rows and columns lie in the input is worked out per
// plane, so no row branches). A column vector crossing the input's edge
// takes its masks once and then runs down the rows with masked loads;
// the columns inside are plain loads, also a column vector at a time
// down the rows (a row-long copy loop would become a `memcpy` call per
// row). Then every tap is one unmasked load at a fixed offset from the
// output's position at the planes' pitch, and the rows are copied out
// the same way. An average sums over zero padding
// and divides as it copies out: by its row's tap count times its
// columns' (two small tables, computed once for every channel before the
// parallel loop). The output extents come from ONNX's formulas at run
// time, checked to be positive.

func.func @pools(%x: tensor<?x4x?x?xf32>) -> (tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>) {
  %0 = "onnx.MaxPool"(%x) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], ceil_mode = 1 : i64} : (tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %1 = "onnx.AveragePool"(%x) {kernel_shape = [3, 3], auto_pad = "SAME_UPPER"} : (tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  return %0, %1 : tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>
}
// CHECK-LABEL: func.func @pools
// CHECK:         cf.assert %{{.*}}, "onnx.MaxPool at {{.*}}: the pooling window is larger than the padded input"
// CHECK:         %[[MAX:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x4x?x?xf32>
// CHECK:         scf.for
// CHECK:         %[[PLANES:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xf32>
// CHECK-NOT:     scf.if
// CHECK:         vector.maskedstore %[[PLANES]][%{{.*}}], %{{.*}}, %{{.*}} : memref<?xf32>, vector<8xi1>, vector<8xf32>
// CHECK:         vector.maskedstore %[[PLANES]][%{{.*}}], %{{.*}}, %{{.*}} : memref<?xf32>, vector<8xi1>, vector<8xf32>
// CHECK-NOT:     scf.if
// CHECK:         %[[STORE_MASK:.*]] = vector.create_mask %{{.*}} : vector<8xi1>
// CHECK-NEXT:    scf.for
// CHECK-NOT:     vector.create_mask
// CHECK:         vector.maskedload %arg0[%{{.*}}], %{{.*}}, %{{.*}} : memref<?x4x?x?xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK:         vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14] : vector<8xf32>, vector<8xf32>
// CHECK:         vector.maskedstore %[[PLANES]][%{{.*}}], %[[STORE_MASK]], %{{.*}} : memref<?xf32>, vector<8xi1>, vector<8xf32>
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
// CHECK:         %[[ROWS:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK-NEXT:    %[[COLS:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:         arith.sitofp
// CHECK-NEXT:    memref.store %{{.*}}, %[[ROWS]]
// CHECK:         arith.sitofp
// CHECK-NEXT:    memref.store %{{.*}}, %[[COLS]]
// CHECK:         %[[SUMS:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xf32>
// CHECK-NOT:     vector.gather
// CHECK:         vector.load %[[SUMS]][%{{.*}}] : memref<?xf32>, vector<8xf32>
// CHECK-NEXT:    arith.addf %{{.*}} : vector<8xf32>
// CHECK-COUNT-8: arith.addf %{{.*}} : vector<8xf32>
// CHECK:         %[[COL_N:.*]] = vector.load %[[COLS]][%{{.*}}] : memref<?xf32>, vector<8xf32>
// CHECK-NEXT:    scf.for
// CHECK:         vector.load %[[SUMS]]
// CHECK-NEXT:    %[[ROW_N:.*]] = memref.load %[[ROWS]][%{{.*}}] : memref<?xf32>
// CHECK-NEXT:    %[[ROW_NV:.*]] = vector.broadcast %[[ROW_N]] : f32 to vector<8xf32>
// CHECK-NEXT:    %[[N:.*]] = arith.mulf %[[COL_N]], %[[ROW_NV]] : vector<8xf32>
// CHECK-NEXT:    %[[Q:.*]] = arith.divf %{{.*}}, %[[N]] : vector<8xf32>
// CHECK-NEXT:    vector.store %[[Q]], %[[AVG]]
// CHECK:         vector.maskedstore %[[AVG]]
// CHECK:         } {onnxc.parallel}
// CHECK:         return %[[MAX]], %[[AVG]]

// One axis keeps the direct form: the loop over the taps inside the
// input only, the interior a vector at a time between scalar borders; a
// row too short for a whole vector goes a masked vector at a time, each
// lane dividing by its own count of taps.
func.func @average_1d(%x: tensor<?x4x?xf32>) -> tensor<?x4x?xf32> {
  %0 = "onnx.AveragePool"(%x) {kernel_shape = [3], pads = [1, 1], count_include_pad = 0 : i64} : (tensor<?x4x?xf32>) -> tensor<?x4x?xf32>
  return %0 : tensor<?x4x?xf32>
}
// CHECK-LABEL: func.func @average_1d
// CHECK:         %[[AVG:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x4x?xf32>
// CHECK:         scf.if
// CHECK:         vector.maskedload %arg0[%{{.*}}], %{{.*}}, %{{.*}} : memref<?x4x?xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK-COUNT-3: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xf32>
// CHECK:         %[[N:.*]] = arith.mulf %{{.*}} : vector<8xf32>
// CHECK-NEXT:    arith.divf %{{.*}}, %[[N]] : vector<8xf32>
// CHECK:         vector.maskedstore %[[AVG]]
// CHECK:         } else {
// CHECK:         arith.divf %{{.*}} : f32
// CHECK:         vector.load %arg0[%{{.*}}] : memref<?x4x?xf32>, vector<8xf32>
// CHECK:         arith.divf %{{.*}} : vector<8xf32>
// CHECK:         vector.store %{{.*}}, %[[AVG]][%{{.*}}] : memref<?x4x?xf32>, vector<8xf32>
// CHECK:         return %[[AVG]]

// Depthwise: weighted taps of channel m / multiplier (the weights
// broadcast once per channel), the Relu that consumes the conv applied as
// each result is stored (no second pass).
// CHECK-LABEL: func.func @depthwise_relu
// CHECK:         %[[OUT:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x4x?x?xf32>
// CHECK:         %[[PLANES:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xf32>
// CHECK:         vector.maskedload %arg0[%{{.*}}], %{{.*}}, %{{.*}} : memref<?x4x?x?xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK-NOT:     vector.shuffle
// CHECK:         %[[ROW:.*]] = vector.load %arg0[%{{.*}}] : memref<?x4x?x?xf32>, vector<8xf32>
// CHECK-COUNT-3: arith.{{muli|addi}}
// CHECK-NEXT:    vector.store %[[ROW]], %[[PLANES]][%{{.*}}] : memref<?xf32>, vector<8xf32>
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
