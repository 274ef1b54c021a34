// RUN: onnxc opt %s -p bufferize | filecheck

// Bilinear upsampling of NCHW f32: when batch and channels keep their
// size at scale 1 (checked at run time), the columns' taps become a
// table (i32 offsets and weights) once per call; per output row the two
// input rows are blended into a row buffer in vectors, and each output
// vector gathers its two taps from that row. Otherwise the element-wise
// nest of every dim's taps.

// CHECK-LABEL: func.func @upsample
// CHECK:         %[[UNSCALED:.*]] = arith.cmpf oeq, %{{.*}}, %{{.*}} : f64
// CHECK:         scf.if %[[KEPT:.*]] {
// CHECK:           %[[X0:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xi32>
// CHECK-NEXT:      %[[W0:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xf32>
// CHECK-NEXT:      %[[X1:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xi32>
// CHECK-NEXT:      %[[W1:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xf32>
// CHECK:           memref.store %{{.*}}, %[[X0]][%{{.*}}] : memref<?xi32>
// The row buffer, per image and channel.
// CHECK:           %[[ROW:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xf32>
// CHECK:           vector.maskedload
// CHECK:           vector.maskedload
// CHECK:           vector.maskedstore %[[ROW]][%{{.*}}], %{{.*}}, %{{.*}}
// CHECK:           %[[O0:.*]] = vector.maskedload %[[X0]][%{{.*}}]
// CHECK-NEXT:      vector.gather %[[ROW]][%{{.*}}] [%[[O0]]], {{.*}} : memref<?xf32>, vector<8xi32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK-NEXT:      vector.maskedload %[[W0]]
// CHECK:           %[[O1:.*]] = vector.maskedload %[[X1]][%{{.*}}]
// CHECK-NEXT:      vector.gather %[[ROW]][%{{.*}}] [%[[O1]]]
// CHECK:           vector.maskedstore
// CHECK:         } else {
// CHECK:           math.floor %{{.*}} : f64
// CHECK:         return
func.func @upsample(%x: tensor<?x21x28x28xf32>, %sizes: tensor<4xi64>) -> tensor<?x21x?x?xf32> {
  %none = "onnx.NoValue"() : () -> none
  %0 = "onnx.Resize"(%x, %none, %none, %sizes) {mode = "linear", coordinate_transformation_mode = "half_pixel"} : (tensor<?x21x28x28xf32>, none, none, tensor<4xi64>) -> tensor<?x21x?x?xf32>
  return %0 : tensor<?x21x?x?xf32>
}
