// RUN: onnxc opt %s -p bufferize | filecheck

// f16 dot products widen each product to f32, accumulate in f32 and round
// once (numpy's f16 dot does the same); f32 ones stay in f32.
// CHECK-LABEL: func.func @matmul_f16
// CHECK:         scf.for {{.*}} iter_args({{.*}}) -> (f32)
// CHECK:           arith.extf {{.*}} : f16 to f32
// CHECK:           arith.extf {{.*}} : f16 to f32
// CHECK:           arith.mulf {{.*}} : f32
// CHECK:           arith.addf {{.*}} : f32
// CHECK:         arith.truncf {{.*}} : f32 to f16
// CHECK-LABEL: func.func @matmul_f32
// CHECK-NOT:     arith.extf
// CHECK-NOT:     arith.truncf
// CHECK:         return
func.func @matmul_f16(%a: tensor<2x3xf16>, %b: tensor<3x2xf16>) -> tensor<2x2xf16> {
  %0 = "onnx.MatMul"(%a, %b) : (tensor<2x3xf16>, tensor<3x2xf16>) -> tensor<2x2xf16>
  return %0 : tensor<2x2xf16>
}
func.func @matmul_f32(%a: tensor<?x3xf32>, %b: tensor<3x2xf32>) -> tensor<?x2xf32> {
  %0 = "onnx.MatMul"(%a, %b) : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}
