// RUN: onnxc opt %s -p bufferize | filecheck

// ConvTranspose of f32: the output starts as the bias; per image and
// group one GEMM computes every input position's products
// (`cols[(m, k…), p] = Σ_c W[c, m, k…]·X[c, p]`: A is W's group block read
// transposed, a_rs 1 and a_cs the rows), and a scatter adds each column
// where its position and tap land in the output, output channels in
// parallel. Of f16 the products stay one scalar scatter nest.
// CHECK-LABEL: func.func @upsample
// CHECK:         %[[OUT:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x4x?x?xf32>
// CHECK:         memref.load %arg2[%{{.*}}] : memref<4xf32>
// CHECK:         memref.store %{{.*}}, %[[OUT]]
// CHECK:         %[[COLS:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xf32>
// CHECK:         %[[COLSV:.*]] = memref.cast %[[COLS]] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
// CHECK:         call @{{__onnxc_gemm_f32_v8_m1_[0-9a-f]+}}(%{{.*}}, %{{.*}}, %[[COLSV]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE:[^,]*]], %{{.*}}
// CHECK:         scf.for
// CHECK:         scf.if
// CHECK:         memref.load %[[COLS]][%{{.*}}] : memref<?xf32>
// CHECK:         arith.addf
// CHECK:         memref.store %{{.*}}, %[[OUT]]
// CHECK:         } {onnxc.parallel}
// CHECK-LABEL: func.func @upsample_f16
// CHECK-NOT:     call @__onnxc_gemm
// CHECK:         arith.mulf %{{.*}} : f16
// CHECK:         return
func.func @upsample(%x: tensor<?x8x?x?xf32>, %w: tensor<8x4x2x2xf32>, %b: tensor<4xf32>) -> tensor<?x4x?x?xf32> {
  %0 = "onnx.ConvTranspose"(%x, %w, %b) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<?x8x?x?xf32>, tensor<8x4x2x2xf32>, tensor<4xf32>) -> tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
}
func.func @upsample_f16(%x: tensor<?x8x?x?xf16>, %w: tensor<8x4x2x2xf16>) -> tensor<?x4x?x?xf16> {
  %0 = "onnx.ConvTranspose"(%x, %w) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<?x8x?x?xf16>, tensor<8x4x2x2xf16>) -> tensor<?x4x?x?xf16>
  return %0 : tensor<?x4x?x?xf16>
}
