// RUN: onnxc opt %s -p bufferize | filecheck

// QuantizeLinear and DequantizeLinear loop over x with its dims merged
// around the parameter's axis, so the inner loop spans whole contiguous
// stretches whatever dims are dynamic: one flat loop for a per-tensor
// scale, [before, axis, after] for a per-channel one.
// CHECK-LABEL: func.func @per_tensor
// CHECK:         %[[X:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%[[N:.*]]], strides: [1] : memref<?x4x?x?xf32> to memref<?xf32>
// CHECK:         %[[Y:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [%[[N]]], strides: [1] : memref<?x4x?x?xi8> to memref<?xi8>
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %[[N]] step
// CHECK-NOT:     scf.for
// CHECK:           memref.load %[[X]][%[[I]]] : memref<?xf32>
// CHECK:           math.roundeven
// CHECK:           memref.store %{{.*}}, %[[Y]][%[[I]]] : memref<?xi8>
func.func @per_tensor(%x: tensor<?x4x?x?xf32>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<?x4x?x?xi8> {
  %0 = "onnx.QuantizeLinear"(%x, %s, %z) : (tensor<?x4x?x?xf32>, tensor<f32>, tensor<i8>) -> tensor<?x4x?x?xi8>
  return %0 : tensor<?x4x?x?xi8>
}

// CHECK-LABEL: func.func @per_channel
// CHECK:         %[[X:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%{{.*}}, 4, %[[HW:.*]]], strides: [%{{.*}}, %{{.*}}, 1] : memref<?x4x?x?xi8> to memref<?x4x?xi8, strided<[?, ?, 1]>>
// CHECK:         scf.for
// CHECK:           scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step
// CHECK:             scf.for %[[P:.*]] = %{{.*}} to %[[HW]] step
// CHECK:               memref.load %[[X]][%{{.*}}, %[[C]], %[[P]]]
// CHECK:               memref.load %arg2[%[[C]]] : memref<4xi8>
// CHECK:               memref.load %arg1[%[[C]]] : memref<4xf32>
func.func @per_channel(%x: tensor<?x4x?x?xi8>, %s: tensor<4xf32>, %z: tensor<4xi8>) -> tensor<?x4x?x?xf32> {
  %0 = "onnx.DequantizeLinear"(%x, %s, %z) {axis = 1 : si64} : (tensor<?x4x?x?xi8>, tensor<4xf32>, tensor<4xi8>) -> tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
}
