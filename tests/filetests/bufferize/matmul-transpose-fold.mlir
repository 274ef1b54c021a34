// RUN: onnxc opt %s -p bufferize | filecheck

// Attention scores as exporters write them: Q · Transpose(K). The
// Transpose is not copied: the GEMM reads K through permuted strides
// (B's columns at K's row stride, hence the strided-B variant `ms`).
// CHECK-LABEL: func.func @scores
// CHECK-NOT:     memref.alloc({{.*}}) {{.*}} : memref<?x4x8x?xf32>
// CHECK:         call @__onnxc_gemm_f32_v8_ms_
// CHECK:         return
func.func @scores(%q: tensor<?x4x?x8xf32>, %k: tensor<?x?x4x8xf32>) -> tensor<?x4x?x?xf32> {
  %kt = "onnx.Transpose"(%k) {perm = [0, 2, 3, 1]} : (tensor<?x?x4x8xf32>) -> tensor<?x4x8x?xf32>
  %s = "onnx.MatMul"(%q, %kt) : (tensor<?x4x?x8xf32>, tensor<?x4x8x?xf32>) -> tensor<?x4x?x?xf32>
  return %s : tensor<?x4x?x?xf32>
}

// A Transpose that keeps its last dim as A: rows at a permuted stride, the
// micro-kernel still reads A in place (`m1`: B is plain).
// CHECK-LABEL: func.func @heads
// CHECK-NOT:     memref.alloc({{.*}}) {{.*}} : memref<2x?x?x8xf32>
// CHECK:         call @__onnxc_gemm_f32_v8_m1_
// CHECK:         return
func.func @heads(%x: tensor<?x?x2x8xf32>, %w: tensor<8x16xf32>) -> tensor<2x?x?x16xf32> {
  %t = "onnx.Transpose"(%x) {perm = [2, 0, 1, 3]} : (tensor<?x?x2x8xf32>) -> tensor<2x?x?x8xf32>
  %y = "onnx.MatMul"(%t, %w) : (tensor<2x?x?x8xf32>, tensor<8x16xf32>) -> tensor<2x?x?x16xf32>
  return %y : tensor<2x?x?x16xf32>
}

// A Transpose with another use is copied once, for both.
// CHECK-LABEL: func.func @shared
// CHECK:         memref.alloc({{.*}}) {{.*}} : memref<?x4x8x?xf32>
// CHECK:         call @__onnxc_gemm_f32_v8_m1_
func.func @shared(%q: tensor<?x4x?x8xf32>, %k: tensor<?x?x4x8xf32>) -> (tensor<?x4x?x?xf32>, tensor<?x4x8x?xf32>) {
  %kt = "onnx.Transpose"(%k) {perm = [0, 2, 3, 1]} : (tensor<?x?x4x8xf32>) -> tensor<?x4x8x?xf32>
  %s = "onnx.MatMul"(%q, %kt) : (tensor<?x4x?x8xf32>, tensor<?x4x8x?xf32>) -> tensor<?x4x?x?xf32>
  return %s, %kt : tensor<?x4x?x?xf32>, tensor<?x4x8x?xf32>
}

// The heads merge after attention: the GEMM writes each head's rows into
// the Transpose's result through its strides; the Transpose is absorbed.
// CHECK-LABEL: func.func @merge
// CHECK:         %[[OUT:.*]] = memref.alloc({{.*}}) {{.*}} : memref<?x?x4x8xf32>
// CHECK-NOT:     memref.alloc({{.*}}) {{.*}} : memref<?x4x?x8xf32>
// CHECK:         call @__onnxc_gemm_f32_v8_m1_
// CHECK:         return %[[OUT]]
func.func @merge(%p: tensor<?x4x?x?xf32>, %v: tensor<?x4x?x8xf32>) -> tensor<?x?x4x8xf32> {
  %c = "onnx.MatMul"(%p, %v) : (tensor<?x4x?x?xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x8xf32>
  %t = "onnx.Transpose"(%c) {perm = [0, 2, 1, 3]} : (tensor<?x4x?x8xf32>) -> tensor<?x?x4x8xf32>
  return %t : tensor<?x?x4x8xf32>
}
