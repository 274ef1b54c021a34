// RUN: onnxc opt %s -p bufferize | filecheck

// LayerNormalization over the trailing dims: the group is contiguous, so
// the mean and the variance are sums a vector at a time over a flat view
// (the last partial vector masked, its idle lanes selected to 0), each
// reduced once per row; the normalized values are then written by the
// element loop.
// CHECK-LABEL: func.func @layer_norm
// CHECK:         %[[FLAT:.*]] = memref.reinterpret_cast %arg0 {{.*}} to memref<?xf32>
// CHECK:         scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<8xf32>) {
// CHECK:           vector.load %[[FLAT]][%{{.*}}] : memref<?xf32>, vector<8xf32>
// CHECK:           arith.addf %{{.*}} : vector<8xf32>
// CHECK:         vector.maskedload %[[FLAT]]
// CHECK:         vector.reduction <add>
// CHECK:         arith.divf %{{.*}} : f32
// CHECK:         scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<8xf32>) {
// CHECK:           arith.subf %{{.*}} : vector<8xf32>
// CHECK:           arith.mulf %{{.*}} : vector<8xf32>
// CHECK:         vector.reduction <add>
// CHECK:         math.sqrt
func.func @layer_norm(%x: tensor<?x?x64xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<?x?x64xf32> {
  %0 = "onnx.LayerNormalization"(%x, %s, %b) {axis = -1 : si64, epsilon = 1.0e-05 : f32} : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}
