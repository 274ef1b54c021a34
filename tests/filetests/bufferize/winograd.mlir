// RUN: onnxc opt %s -p bufferize | filecheck

// A 3x3 stride-1 Conv with constant weights, at least 8 input channels
// and more output channels than the direct conv on planes takes (32),
// runs on Winograd F(2x2, 3x3): the weights' transform U is a global
// computed at compile time and packed there into the GEMM's A panels
// (16 positions x 40 rows padded to 42, the 6-row panels at 256 bits, x
// 8 channels), so
// no call packs it again; per image, the input transform reads each
// input row as two masked vectors (zero padding) split into the tiles'
// columns by shuffles and stores V under a mask for the last tiles; 16
// GEMMs M = U · V; the output transform adds the bias, applies the fused
// Relu and stores two output columns per tile, interleaved, under a mask.
// At 256 bits a vector holds 4 tiles, as at 128 (Plan::lanes: clang's
// AVX2 code for 8 read past a row of a 7-wide image).
// CHECK-LABEL: func.func @static_sizes
// CHECK:         %[[U:.*]] = memref.get_global @{{__constant_[0-9]+}} : memref<5376xf32>
// CHECK-NOT:     scf.if
// CHECK:         vector.maskedload %arg0[{{.*}}], %{{.*}}, %{{.*}} : memref<1x8x8x8xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK:         vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6] : vector<8xf32>, vector<8xf32>
// CHECK:         vector.shuffle %{{.*}}, %{{.*}} [3, 5, 7, 9] : vector<8xf32>, vector<8xf32>
// CHECK:         vector.maskedstore %{{.*}}[%{{.*}}], %{{.*}}, %{{.*}} : memref<?xf32>, vector<4xi1>, vector<4xf32>
// CHECK-COUNT-16: call @{{__onnxc_gemm_f32_v8_m1_[0-9a-f]+}}(%{{.*}}
// CHECK:         vector.maskedload %{{.*}} : memref<?xf32>, vector<4xi1>, vector<4xf32> into vector<4xf32>
// CHECK:         arith.maximumf
// CHECK:         vector.shuffle %{{.*}}, %{{.*}} [0, 4, 1, 5, 2, 6, 3, 7]
// CHECK:         vector.maskedstore %{{.*}} : memref<1x40x8x8xf32>, vector<8xi1>, vector<8xf32>
// CHECK:         return
func.func @static_sizes(%x: tensor<1x8x8x8xf32>) -> tensor<1x40x8x8xf32> {
  %w = "onnx.Constant"() {value = dense<0.5> : tensor<40x8x3x3xf32>} : () -> tensor<40x8x3x3xf32>
  %n = "onnx.NoValue"() : () -> none
  %0 = "onnx.Conv"(%x, %w, %n) {pads = [1, 1, 1, 1], kernel_shape = [3, 3]} : (tensor<1x8x8x8xf32>, tensor<40x8x3x3xf32>, none) -> tensor<1x40x8x8xf32>
  %1 = "onnx.Relu"(%0) : (tensor<1x40x8x8xf32>) -> tensor<1x40x8x8xf32>
  return %1 : tensor<1x40x8x8xf32>
}

// Runtime sizes: the tile count picks Winograd or the im2col GEMM.
// CHECK-LABEL: func.func @runtime_choice
// CHECK:         %[[TILES:.*]] = arith.muli
// CHECK:         %[[MANY:.*]] = arith.cmpi sge, %[[TILES]], %{{.*}} : index
// CHECK:         scf.if %[[MANY]] {
// CHECK-COUNT-16: call @{{__onnxc_gemm_f32_v8_m1_[0-9a-f]+}}(
// CHECK:         } else {
// CHECK:           call @{{__onnxc_gemm_f32_v8_ck3x3s1x1d1x1_[0-9a-f]+}}(
func.func @runtime_choice(%x: tensor<?x8x?x?xf32>) -> tensor<?x40x?x?xf32> {
  %w = "onnx.Constant"() {value = dense<0.5> : tensor<40x8x3x3xf32>} : () -> tensor<40x8x3x3xf32>
  %n = "onnx.NoValue"() : () -> none
  %0 = "onnx.Conv"(%x, %w, %n) {pads = [1, 1, 1, 1], kernel_shape = [3, 3]} : (tensor<?x8x?x?xf32>, tensor<40x8x3x3xf32>, none) -> tensor<?x40x?x?xf32>
  return %0 : tensor<?x40x?x?xf32>
}

// 128 output channels take the same layout: tiles as the products'
// columns (16 positions x 128 rows padded to 132 x 8 channels), and the
// output transform reads each position's products as masked vectors,
// not gathers (the transposed products, tiles as rows, were slower at
// every size measured).
// CHECK-LABEL: func.func @many_output_channels
// CHECK:         memref.get_global @{{__constant_[0-9]+}} : memref<16896xf32>
// CHECK-COUNT-16: call @{{__onnxc_gemm_f32_v8_m1_[0-9a-f]+}}(
// CHECK-NOT:     vector.gather
// CHECK:         vector.maskedload %{{.*}} : memref<?xf32>, vector<4xi1>, vector<4xf32> into vector<4xf32>
// CHECK-NOT:     vector.gather
// CHECK:         return
func.func @many_output_channels(%x: tensor<1x8x8x8xf32>) -> tensor<1x128x8x8xf32> {
  %w = "onnx.Constant"() {value = dense<0.5> : tensor<128x8x3x3xf32>} : () -> tensor<128x8x3x3xf32>
  %n = "onnx.NoValue"() : () -> none
  %0 = "onnx.Conv"(%x, %w, %n) {pads = [1, 1, 1, 1], kernel_shape = [3, 3]} : (tensor<1x8x8x8xf32>, tensor<128x8x3x3xf32>, none) -> tensor<1x128x8x8xf32>
  return %0 : tensor<1x128x8x8xf32>
}

// Fewer than 8 input channels, a stride, or weights known only at run
// time keep the im2col GEMM.
// CHECK-LABEL: func.func @not_winograd
// CHECK-NOT:     __onnxc_gemm_f32_v8_m1_
// CHECK:         call @{{__onnxc_gemm_f32_v8_ck3x3s1x1d1x1_[0-9a-f]+}}(
// CHECK:         call @{{__onnxc_gemm_f32_v8_ck3x3s2x2d1x1_[0-9a-f]+}}(
// CHECK:         call @{{__onnxc_gemm_f32_v8_ck3x3s1x1d1x1_[0-9a-f]+}}(
// CHECK-NOT:     __onnxc_gemm_f32_v8_m1_
// CHECK:         return
func.func @not_winograd(%x: tensor<1x4x8x8xf32>, %y: tensor<1x8x8x8xf32>, %wr: tensor<40x8x3x3xf32>) -> (tensor<1x40x8x8xf32>, tensor<1x40x4x4xf32>, tensor<1x40x8x8xf32>) {
  %w4 = "onnx.Constant"() {value = dense<0.5> : tensor<40x4x3x3xf32>} : () -> tensor<40x4x3x3xf32>
  %w = "onnx.Constant"() {value = dense<0.5> : tensor<40x8x3x3xf32>} : () -> tensor<40x8x3x3xf32>
  %n = "onnx.NoValue"() : () -> none
  %0 = "onnx.Conv"(%x, %w4, %n) {pads = [1, 1, 1, 1], kernel_shape = [3, 3]} : (tensor<1x4x8x8xf32>, tensor<40x4x3x3xf32>, none) -> tensor<1x40x8x8xf32>
  %1 = "onnx.Conv"(%y, %w, %n) {pads = [1, 1, 1, 1], kernel_shape = [3, 3], strides = [2, 2]} : (tensor<1x8x8x8xf32>, tensor<40x8x3x3xf32>, none) -> tensor<1x40x4x4xf32>
  %2 = "onnx.Conv"(%y, %wr, %n) {pads = [1, 1, 1, 1], kernel_shape = [3, 3]} : (tensor<1x8x8x8xf32>, tensor<40x8x3x3xf32>, none) -> tensor<1x40x8x8xf32>
  return %0, %1, %2 : tensor<1x40x8x8xf32>, tensor<1x40x4x4xf32>, tensor<1x40x8x8xf32>
}

// A residual Add of a value computed before the conv, and the Relu after
// it, go into the output transform: the skip value is read under the
// output mask and added before the activation; no separate loop remains.
// CHECK-LABEL: func.func @residual
// CHECK-COUNT-16: call @{{__onnxc_gemm_f32_v8_m1_[0-9a-f]+}}(
// CHECK:         %[[SKIP:.*]] = vector.maskedload %arg0[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}], %{{.*}}, %{{.*}} : memref<1x40x8x8xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK:         arith.addf %{{.*}}, %[[SKIP]] : vector<8xf32>
// CHECK:         arith.maximumf
// CHECK:         vector.maskedstore %{{.*}} : memref<1x40x8x8xf32>, vector<8xi1>, vector<8xf32>
// CHECK-NOT:     scf.for
// CHECK:         return
func.func @residual(%x: tensor<1x40x8x8xf32>) -> tensor<1x40x8x8xf32> {
  %w = "onnx.Constant"() {value = dense<0.5> : tensor<40x40x3x3xf32>} : () -> tensor<40x40x3x3xf32>
  %n = "onnx.NoValue"() : () -> none
  %0 = "onnx.Conv"(%x, %w, %n) {pads = [1, 1, 1, 1], kernel_shape = [3, 3]} : (tensor<1x40x8x8xf32>, tensor<40x40x3x3xf32>, none) -> tensor<1x40x8x8xf32>
  %1 = "onnx.Add"(%x, %0) : (tensor<1x40x8x8xf32>, tensor<1x40x8x8xf32>) -> tensor<1x40x8x8xf32>
  %2 = "onnx.Relu"(%1) : (tensor<1x40x8x8xf32>) -> tensor<1x40x8x8xf32>
  return %2 : tensor<1x40x8x8xf32>
}

// On the GEMM path (a 1x1 conv) the residual is a fourth buffer the
// epilogue reads with C's offsets; an Add whose other value comes after
// the conv, or broadcasts, stays an Add.
// CHECK-LABEL: func.func @pointwise_residual
// CHECK:         call @[[RES:__onnxc_gemm_f32_v8_m1_[0-9a-f]+]](%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (memref<?xf32>, memref<?xf32>, memref<?xf32, strided<[1], offset: ?>>, memref<?xf32>, index
// CHECK:         call @{{__onnxc_gemm_f32_v8_m1_[0-9a-f]+}}(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (memref<?xf32>, memref<?xf32>, memref<?xf32, strided<[1], offset: ?>>, index
// CHECK:         arith.addf
// CHECK:       func.func private @[[RES]](%arg0: memref<?xf32>, %arg1: memref<?xf32>, %arg2: memref<?xf32, strided<[1], offset: ?>>, %arg3: memref<?xf32>, %arg4: index
// CHECK:         vector.maskedload %arg3[%{{.*}}]
func.func @pointwise_residual(%x: tensor<1x8x4x4xf32>, %b: tensor<1x8x1x1xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) {
  %w = "onnx.Constant"() {value = dense<0.5> : tensor<8x8x1x1xf32>} : () -> tensor<8x8x1x1xf32>
  %n = "onnx.NoValue"() : () -> none
  %0 = "onnx.Conv"(%x, %w, %n) {kernel_shape = [1, 1]} : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>, none) -> tensor<1x8x4x4xf32>
  %1 = "onnx.Add"(%0, %x) : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %2 = "onnx.Conv"(%x, %w, %n) {kernel_shape = [1, 1]} : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>, none) -> tensor<1x8x4x4xf32>
  %3 = "onnx.Add"(%2, %b) : (tensor<1x8x4x4xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  return %1, %3 : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
}
