// RUN: onnxc opt %s -p bufferize | filecheck

// Float reductions over the trailing dims (LayerNorm as exporters write
// it before opset 17: ReduceMean over the last axis) fold each row of the
// contiguous input in vectors: a vector accumulator over whole vectors,
// the tail under a mask with the identity in its idle lanes, then one
// lane reduction; Mean divides once per row. Max starts from the lowest
// value and keeps NaNs (maximumf).
// CHECK-LABEL: func.func @mean_rows
// CHECK:         %[[X:.*]] = memref.reinterpret_cast %arg0 {{.*}} to memref<?xf32>
// CHECK:         %[[N:.*]] = arith.sitofp %{{.*}} : i64 to f32
// CHECK:         scf.for
// CHECK:           scf.for {{.*}} -> (vector<8xf32>) {
// CHECK:             vector.load %[[X]][%{{.*}}] : memref<?xf32>, vector<8xf32>
// CHECK-NEXT:        arith.addf %{{.*}} : vector<8xf32>
// CHECK:           vector.maskedload %[[X]]
// CHECK:           %[[S:.*]] = vector.reduction <add>, %{{.*}} : vector<8xf32> into f32
// CHECK-NEXT:      arith.divf %[[S]], %[[N]] : f32
// CHECK-NOT:     memref.load %arg0
// CHECK-LABEL: func.func @max_rows
// CHECK:         scf.for {{.*}} -> (vector<8xf32>) {
// CHECK:           arith.maximumf %{{.*}} : vector<8xf32>
// CHECK:         vector.reduction <maximumf>, %{{.*}} : vector<8xf32> into f32
// CHECK-NOT:     arith.divf
func.func @mean_rows(%x: tensor<?x3x50xf32>) -> tensor<?x3x1xf32> {
  %a = "onnx.Constant"() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %y = "onnx.ReduceMean"(%x, %a) : (tensor<?x3x50xf32>, tensor<1xi64>) -> tensor<?x3x1xf32>
  return %y : tensor<?x3x1xf32>
}

func.func @max_rows(%x: tensor<4x?xf32>) -> tensor<4xf32> {
  %a = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %y = "onnx.ReduceMax"(%x, %a) {keepdims = 0 : si64} : (tensor<4x?xf32>, tensor<1xi64>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
