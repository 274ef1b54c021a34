// RUN: onnxc opt %s -p bufferize | filecheck

// Constants become private memref.globals read with get_global; Flatten is
// a reinterpret_cast view of its input (no copy).

// CHECK:       memref.global "private" constant @__constant_0 : memref<2xf32> = dense<[5.0e-01, 2.5e-01]>
// CHECK-LABEL: func.func @scale_flatten(%arg0: memref<1x2x1xf32>) -> memref<1x2xf32>
// CHECK:         %[[W:.*]] = memref.get_global @__constant_0 : memref<2xf32>
// CHECK:         %[[F:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [1, 2], strides: [2, 1] : memref<1x2x1xf32> to memref<1x2xf32>
// CHECK:         memref.load %[[F]]
// CHECK:         memref.load %[[W]]
// CHECK:         arith.mulf
func.func @scale_flatten(%x: tensor<1x2x1xf32>) -> tensor<1x2xf32> {
  %w = "onnx.Constant"() {value = dense<[0.5, 0.25]> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "onnx.Flatten"(%x) {axis = 1 : i64} : (tensor<1x2x1xf32>) -> tensor<1x2xf32>
  %1 = "onnx.Mul"(%0, %w) : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  return %1 : tensor<1x2xf32>
}

