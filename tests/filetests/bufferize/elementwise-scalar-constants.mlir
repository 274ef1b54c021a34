// RUN: onnxc opt %s -p bufferize | filecheck

// A single-element constant operand of an element-wise op is a number in
// the loop body, not a load: GPT-2's GELU raises to a constant 3.0, which
// `expand-math` then turns into multiplies (it cannot see through a load
// of a global). A constant of several elements is still loaded.
// CHECK-LABEL: func.func @gelu_cube
// CHECK:         %[[ROW:.*]] = memref.get_global @{{.*}} : memref<4xf32>
// CHECK:         %[[THREE:.*]] = arith.constant 3.0{{.*}} : f32
// CHECK:         scf.for
// CHECK:         %[[X:.*]] = memref.load %arg0[%{{.*}}] : memref<?x4xf32>
// CHECK-NEXT:    math.powf %[[X]], %[[THREE]] : f32
// CHECK:         memref.load %[[ROW]][%{{.*}}] : memref<4xf32>
// CHECK:         arith.mulf
func.func @gelu_cube(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %c = "onnx.Constant"() {value = dense<3.0> : tensor<f32>} : () -> tensor<f32>
  %s = "onnx.Constant"() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = "onnx.Pow"(%x, %c) : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %1 = "onnx.Mul"(%x, %s) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %0, %1 : tensor<?x4xf32>, tensor<?x4xf32>
}
