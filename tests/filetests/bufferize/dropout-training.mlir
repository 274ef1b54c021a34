// RUN: onnxc opt %s -p bufferize | filecheck

// Dropout drops nothing when not training or when its ratio is 0; with
// the mode or the ratio known only at run time, that is asserted there
// (random drops are not supported), and the result is the input.
// CHECK-LABEL: func.func @runtime
// CHECK:         %[[T:.*]] = memref.load %arg2[] : memref<i1>
// CHECK:         %[[R:.*]] = memref.load %arg1[] : memref<f32>
// CHECK:         %[[NZ:.*]] = arith.cmpf une, %[[R]], %{{.*}} : f32
// CHECK:         %[[D:.*]] = arith.andi %[[T]], %[[NZ]] : i1
// CHECK:         %[[OK:.*]] = arith.xori %[[D]], %{{.*}} : i1
// CHECK:         cf.assert %[[OK]], "onnx.Dropout at {{.*}}: training-mode Dropout with a ratio other than 0 is not supported"
// CHECK:         return %arg0
func.func @runtime(%x: tensor<4xf32>, %r: tensor<f32>, %t: tensor<i1>) -> tensor<4xf32> {
  %0 = "onnx.Dropout"(%x, %r, %t) : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// Inference (no training_mode): nothing to check.
// CHECK-LABEL: func.func @inference
// CHECK-NOT:     cf.assert
// CHECK:         return %arg0
func.func @inference(%x: tensor<4xf32>, %r: tensor<f32>) -> tensor<4xf32> {
  %0 = "onnx.Dropout"(%x, %r) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
