// RUN: onnxc opt %s -p bufferize | filecheck

// Pools and depthwise convolutions over runtime extents: each axis loops
// over the taps inside the input only (no per-tap select); along the last
// axis the interior outputs go a vector at a time (contiguous loads for
// stride 1, a gather for stride 2) between scalar borders; a max or a
// convolution over a row too short for one interior vector goes a masked
// vector at a time (taps outside the input and lanes past the row read
// -inf or 0). The output extents come from ONNX's formulas at run time,
// checked to be positive.

// CHECK-LABEL: func.func @pools
// CHECK:         cf.assert %{{.*}}, "onnx.MaxPool at {{.*}}: the pooling window is larger than the padded input"
// CHECK:         %[[MAX:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x4x?x?xf32>
// CHECK:         scf.if
// CHECK-NOT:     arith.select
// CHECK:         vector.gather %arg0[%{{.*}}] [%{{.*}}], %{{.*}}, %{{.*}} : memref<?x4x?x?xf32>, vector<8xi64>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK:         arith.maximumf %{{.*}} : vector<8xf32>
// CHECK:         vector.maskedstore %[[MAX]][%{{.*}}], %{{.*}}, %{{.*}} : memref<?x4x?x?xf32>, vector<8xi1>, vector<8xf32>
// CHECK:         } else {
// CHECK:         arith.maximumf %{{.*}} : f32
// CHECK:         vector.gather %arg0[%{{.*}}] [%{{.*}}], %{{.*}}, %{{.*}} : memref<?x4x?x?xf32>, vector<8xi64>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK:         arith.maximumf %{{.*}} : vector<8xf32>
// CHECK:         vector.store %{{.*}}, %[[MAX]][%{{.*}}] : memref<?x4x?x?xf32>, vector<8xf32>
// CHECK:         arith.maximumf %{{.*}} : f32
// CHECK:         cf.assert %{{.*}}, "onnx.AveragePool at {{.*}}: the pooling window is larger than the padded input"
// CHECK:         %[[AVG:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x4x?x?xf32>
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

// Depthwise: weighted taps of channel m / multiplier, the Relu that
// consumes the conv applied as each result is stored (no second pass).
// CHECK-LABEL: func.func @depthwise_relu
// CHECK:         %[[OUT:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x4x?x?xf32>
// CHECK:         scf.if
// CHECK:         vector.maskedload %arg0[%{{.*}}], %{{.*}}, %{{.*}} : memref<?x4x?x?xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK:         vector.fma %{{.*}} : vector<8xf32>
// CHECK:         arith.maximumf %{{.*}} : vector<8xf32>
// CHECK:         vector.maskedstore %[[OUT]]
// CHECK:         } else {
// CHECK:         arith.maximumf %{{.*}} : f32
// CHECK:         vector.load %arg0[%{{.*}}] : memref<?x4x?x?xf32>, vector<8xf32>
// CHECK:         vector.fma %{{.*}} : vector<8xf32>
// CHECK:         arith.maximumf %{{.*}} : vector<8xf32>
// CHECK:         vector.store %{{.*}}, %[[OUT]][%{{.*}}] : memref<?x4x?x?xf32>, vector<8xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         return %[[OUT]]
func.func @depthwise_relu(%x: tensor<?x4x?x?xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<?x4x?x?xf32> {
  %0 = "onnx.Conv"(%x, %w) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], group = 4 : i64} : (tensor<?x4x?x?xf32>, tensor<4x1x3x3xf32>) -> tensor<?x4x?x?xf32>
  %1 = "onnx.Relu"(%0) : (tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  return %1 : tensor<?x4x?x?xf32>
}
