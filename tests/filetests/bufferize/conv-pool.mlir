// RUN: onnxc opt %s -p bufferize | filecheck

// Few output channels (a stem conv): the direct conv on planes. Per
// image each input channel is copied once into its four stride-2 phase
// planes; then a block of 4 output channels (256-bit vectors) keeps 4 × 2
// vectors of flat outputs while it walks the input channels (a loop) and
// the 9 taps (unrolled): two loads per tap, 8 FMAs; the fused Relu is
// applied as the block is stored, and its rows are copied out.
// CHECK-LABEL: func.func @stem
// CHECK:         %[[OUT:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x6x?x?xf32>
// CHECK:         %[[PLANES:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xf32>
// CHECK:         vector.shuffle
// CHECK:         vector.store %{{.*}}, %[[PLANES]][%{{.*}}] : memref<?xf32>, vector<8xf32>
// CHECK:         %[[FLAT:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xf32>
// CHECK:         scf.for %{{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-COUNT-2: vector.load %[[PLANES]][%{{.*}}] : memref<?xf32>, vector<8xf32>
// CHECK-COUNT-8: vector.fma
// CHECK:         arith.maximumf %{{.*}} : vector<8xf32>
// CHECK:         vector.store %{{.*}}, %[[FLAT]][%{{.*}}] : memref<?xf32>, vector<8xf32>
// CHECK:         vector.store %{{.*}}, %[[OUT]][%{{.*}}] : memref<?x6x?x?xf32>, vector<8xf32>
// CHECK:         vector.maskedstore %[[OUT]]
// The last 2 channels: a block of 2 × 2 accumulators.
// CHECK:         scf.for %{{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK:         return %[[OUT]]
func.func @stem(%x: tensor<?x3x?x?xf32>, %w: tensor<6x3x3x3xf32>, %b: tensor<6xf32>) -> tensor<?x6x?x?xf32> {
  %0 = "onnx.Conv"(%x, %w, %b) {pads = [1, 1, 1, 1], strides = [2, 2], kernel_shape = [3, 3]} : (tensor<?x3x?x?xf32>, tensor<6x3x3x3xf32>, tensor<6xf32>) -> tensor<?x6x?x?xf32>
  %1 = "onnx.Relu"(%0) : (tensor<?x6x?x?xf32>) -> tensor<?x6x?x?xf32>
  return %1 : tensor<?x6x?x?xf32>
}

// Conv (f32, more output channels than the direct conv on planes takes,
// 64 for a product this shallow):
// one call per image and group of a packed GEMM specialized
// for the 3x3 stride-1 window; every extent is a runtime argument. The
// B packer reads the implicit im2col columns under a mask (zero padding):
// a vector whose lanes lie in one output row with one masked load, one
// that wraps to the next rows with a masked load per row (see
// conv-row-pieces.mlir), more rows than four with a gather. The micro-kernel accumulates
// with vector FMAs and stores edge tiles under lane masks. The bias is
// the epilogue.
// MaxPool: a window nest, with -inf as the neutral.

// CHECK-LABEL: func.func @conv_pool
// CHECK:         %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x72x4x4xf32>
// CHECK:         %[[X:.*]] = memref.reinterpret_cast %arg0 {{.*}} to memref<?xf32>
// CHECK:         %[[W:.*]] = memref.reinterpret_cast %arg1 {{.*}} to memref<?xf32>
// CHECK:         %[[O:.*]] = memref.reinterpret_cast %[[OUT]] {{.*}} to memref<?xf32>
// CHECK:         %[[B:.*]] = memref.reinterpret_cast %arg2 {{.*}} to memref<?xf32>
// CHECK-NOT:     scf.for
// CHECK:         %[[OV:.*]] = memref.cast %[[O]] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
// CHECK-NOT:     scf.for
// CHECK:         call @[[GEMM:__onnxc_gemm_f32_v8_ck3x3s1x1d1x1_[0-9a-f]*]](%[[W]], %[[X]], %[[OV]], %[[B]],
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<1x72x2x2xf32>
// CHECK:         arith.constant 0xFF800000 : f32
// CHECK:         arith.maximumf
// CHECK:       func.func private @[[GEMM]](
// CHECK:         %[[AP:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xf32>
// CHECK:         %[[BP:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xf32>
// CHECK:         %[[COL:.*]] = arith.remui %{{.*}}, %arg14 : index
// CHECK:         %[[ROWS:.*]] = arith.ceildivsi %{{.*}}, %arg14 : index
// CHECK:         %[[ROW:.*]] = arith.cmpi sle, %[[ROWS]], %{{.*}} : index
// CHECK-NEXT:    %[[PICK:.*]] = scf.if %[[ROW]] -> (vector<8xf32>) {
// CHECK-NEXT:      %[[AT:.*]] = arith.addi
// CHECK-NEXT:      %[[ROWV:.*]] = vector.maskedload %arg1[%[[AT]]], %{{.*}}, %{{.*}} : memref<?xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK-NEXT:      scf.yield %[[ROWV]]
// CHECK-NEXT:    } else {
// CHECK:             %[[WRAP:.*]] = vector.gather %arg1[%{{.*}}] [%{{.*}}], %{{.*}}, %{{.*}} : memref<?xf32>, vector<8xi64>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK-NEXT:        scf.yield %[[WRAP]]
// CHECK:         vector.store %[[PICK]], %[[BP]][%{{.*}}] : memref<?xf32>, vector<8xf32>
// CHECK:         vector.fma %{{.*}} : vector<8xf32>
// CHECK:         vector.maskedstore %arg2[%{{.*}}], %{{.*}}, %{{.*}} : memref<?xf32, strided<[1], offset: ?>>, vector<8xi1>, vector<8xf32>
func.func @conv_pool(%x: tensor<1x3x4x4xf32>, %w: tensor<72x3x3x3xf32>, %b: tensor<72xf32>) -> tensor<1x72x2x2xf32> {
  %0 = "onnx.Conv"(%x, %w, %b) {pads = [1, 1, 1, 1], kernel_shape = [3, 3]} : (tensor<1x3x4x4xf32>, tensor<72x3x3x3xf32>, tensor<72xf32>) -> tensor<1x72x4x4xf32>
  %1 = "onnx.MaxPool"(%0) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x72x4x4xf32>) -> tensor<1x72x2x2xf32>
  return %1 : tensor<1x72x2x2xf32>
}

