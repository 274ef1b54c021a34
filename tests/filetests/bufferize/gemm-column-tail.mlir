// RUN: onnxc opt %s -p bufferize | filecheck

// A 7x7 image's 49 columns: at 256 bits (8 lanes, panels of 16 columns)
// three panels and one column. A last panel of at most a quarter of a
// vector (2 columns here) takes the tail kernel: rows as lanes (a vector
// of the packed A panel's 6 rows per depth step), each column's B value
// broadcast, four row panels at a time (8 sums), then a pair (4 sums),
// then a single panel; the sums go through a small buffer and are stored one
// element at a time, C read only after the first depth block.

// CHECK-LABEL: func.func @pointwise_7x7
// CHECK:       func.func private @__onnxc_gemm_f32_v8_m1_{{[0-9a-f]+}}(
// CHECK:         %[[NARROW:.*]] = arith.cmpi sle, %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    scf.if %[[NARROW]] {
// CHECK:           %{{.*}}:8 = scf.for {{.*}} -> (vector<6xf32>, vector<6xf32>, vector<6xf32>, vector<6xf32>, vector<6xf32>, vector<6xf32>, vector<6xf32>, vector<6xf32>) {
// CHECK:             %[[B0:.*]] = vector.broadcast %{{.*}} : f32 to vector<6xf32>
// CHECK:             %[[B1:.*]] = vector.broadcast %{{.*}} : f32 to vector<6xf32>
// CHECK:             %[[A:.*]] = vector.load %{{.*}} : memref<?xf32>, vector<6xf32>
// CHECK-NEXT:        vector.fma %[[A]], %[[B0]], %{{.*}} : vector<6xf32>
// CHECK-NEXT:        vector.fma %[[A]], %[[B1]], %{{.*}} : vector<6xf32>
// CHECK:           %[[T:.*]] = memref.alloc() {alignment = 64 : i64} : memref<48xf32>
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               memref.load %[[T]]
// CHECK:               scf.if %{{.*}} -> (f32) {
// CHECK-NEXT:            scf.yield %{{.*}} : f32
// CHECK-NEXT:          } else {
// CHECK-NEXT:            memref.load %arg2
// CHECK:               memref.store %{{.*}}, %arg2
// CHECK:           %{{.*}}:4 = scf.for {{.*}} -> (vector<6xf32>, vector<6xf32>, vector<6xf32>, vector<6xf32>) {
// CHECK:           %{{.*}}:2 = scf.for {{.*}} -> (vector<6xf32>, vector<6xf32>) {
// CHECK:         } else {
// CHECK:           vector.fma %{{.*}} : vector<8xf32>
func.func @pointwise_7x7(%x: tensor<1x64x7x7xf32>, %w: tensor<64x64x1x1xf32>) -> tensor<1x64x7x7xf32> {
  %0 = "onnx.Conv"(%x, %w) {kernel_shape = [1, 1]} : (tensor<1x64x7x7xf32>, tensor<64x64x1x1xf32>) -> tensor<1x64x7x7xf32>
  return %0 : tensor<1x64x7x7xf32>
}
