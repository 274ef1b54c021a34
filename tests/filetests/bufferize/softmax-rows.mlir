// RUN: onnxc opt %s -p bufferize | filecheck

// Softmax along the last axis goes a vector at a time: a vector max
// reduced once per row (the last partial vector loaded under a mask with
// -inf in the idle lanes), then exp(x - max) stored and summed in a
// vector (idle lanes selected to 0), then the division; LogSoftmax
// subtracts log(sum) instead of storing the exps. Along another axis the
// scalar nest remains.
// CHECK-LABEL: func.func @rows
// CHECK:         %[[OUT:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x?xf32>
// CHECK:         %[[MAX:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<8xf32>) {
// CHECK:           vector.load %arg0[%{{.*}}] : memref<?x?xf32>, vector<8xf32>
// CHECK:           arith.maximumf %{{.*}} : vector<8xf32>
// CHECK:         vector.maskedload %arg0[%{{.*}}], %{{.*}}, %{{.*}} : memref<?x?xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK:         vector.reduction <maximumf>
// CHECK:         scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<8xf32>) {
// CHECK:           math.exp %{{.*}} : vector<8xf32>
// CHECK:           vector.store %{{.*}}, %[[OUT]][%{{.*}}] : memref<?x?xf32>, vector<8xf32>
// CHECK:           arith.addf %{{.*}} : vector<8xf32>
// CHECK:         arith.select %{{.*}} : vector<8xi1>, vector<8xf32>
// CHECK:         vector.reduction <add>
// CHECK:         arith.divf %{{.*}} : vector<8xf32>
// CHECK:         vector.maskedstore %[[OUT]]
// CHECK-LABEL: func.func @log_rows
// CHECK:         vector.reduction <add>
// CHECK:         math.log %{{.*}} : f32
// CHECK:         arith.subf %{{.*}} : vector<8xf32>
// CHECK-LABEL: func.func @columns
// CHECK-NOT:     vector.reduction
// CHECK:         math.exp %{{.*}} : f32
func.func @rows(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = "onnx.Softmax"(%x) {axis = -1 : si64} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
func.func @log_rows(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = "onnx.LogSoftmax"(%x) {axis = 1 : si64} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
func.func @columns(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = "onnx.Softmax"(%x) {axis = 0 : si64} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
