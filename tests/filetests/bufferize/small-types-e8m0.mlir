// RUN: onnxc opt %s -p bufferize | filecheck
// NO-MLIR-OPT: f8E8M0FNU is newer than mlir-opt 19.

// f8E8M0FNU is the f32 exponent field, rounded by round_mode (nearest:
// the half bit, ties up except below the normal range), saturating at
// 0xFE, infinities and NaN to 0xFF.
// CHECK-LABEL: func.func @e8m0
// CHECK:         arith.bitcast {{.*}} : f32 to i32
// CHECK:         arith.shrui
// CHECK:         arith.cmpi ne
// CHECK:         arith.extui {{.*}} : i1 to i32
// CHECK:         arith.minui
// CHECK:         arith.trunci {{.*}} : i32 to i8
// CHECK:         arith.bitcast {{.*}} : i8 to f8E8M0FNU
func.func @e8m0(%x: tensor<4xf32>) -> tensor<4xf8E8M0FNU> {
  %0 = "onnx.Cast"(%x) {to = 24 : si64, round_mode = "nearest"} : (tensor<4xf32>) -> tensor<4xf8E8M0FNU>
  return %0 : tensor<4xf8E8M0FNU>
}

