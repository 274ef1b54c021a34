// RUN: onnxc opt %s -p bufferize | filecheck

// Casts to the 8-bit floats: saturating (the default) clamps to the
// largest finite value first (NaN-propagating minimum/maximum), so the
// truncf never overflows; saturate = 0 is the plain truncf (overflow to
// infinity or NaN).
// CHECK-LABEL: func.func @saturate
// CHECK:         %[[X:.*]] = memref.load {{.*}} : memref<4xf32>
// CHECK:         %[[HI:.*]] = arith.constant 4.48e+02 : f32
// CHECK:         %[[LO:.*]] = arith.constant -4.48e+02 : f32
// CHECK:         %[[A:.*]] = arith.minimumf %[[X]], %[[HI]] : f32
// CHECK:         %[[B:.*]] = arith.maximumf %[[A]], %[[LO]] : f32
// CHECK:         arith.truncf %[[B]] : f32 to f8E4M3FN
func.func @saturate(%x: tensor<4xf32>) -> tensor<4xf8E4M3FN> {
  %0 = "onnx.Cast"(%x) {to = 17 : si64} : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
  return %0 : tensor<4xf8E4M3FN>
}
// CHECK-LABEL: func.func @no_saturate
// CHECK-NOT:     arith.minimumf
// CHECK:         arith.truncf {{.*}} : f16 to f8E5M2
func.func @no_saturate(%x: tensor<4xf16>) -> tensor<4xf8E5M2> {
  %0 = "onnx.Cast"(%x) {to = 19 : si64, saturate = 0 : si64} : (tensor<4xf16>) -> tensor<4xf8E5M2>
  return %0 : tensor<4xf8E5M2>
}

// Float to an integer saturates (docs/ONNX_DIALECT.md, "Cast semantics"):
// NaN becomes 0, then a clamp to bounds of the source type inside the
// range, so fptosi never sees an out-of-range value; a sub-byte integer
// goes through i32.
// CHECK-LABEL: func.func @to_int4
// CHECK:         %[[X:.*]] = memref.load {{.*}} : memref<4xf32>
// CHECK:         %[[N:.*]] = arith.cmpf ord, %[[X]], %[[X]] : f32
// CHECK:         %[[V:.*]] = arith.select %[[N]], %[[X]], %{{.*}} : f32
// CHECK:         %[[LO:.*]] = arith.constant -8.0{{.*}} : f32
// CHECK:         %[[HI:.*]] = arith.constant 7.0{{.*}} : f32
// CHECK:         %[[B:.*]] = arith.cmpf olt, %[[V]], %[[LO]] : f32
// CHECK:         %[[L:.*]] = arith.select %[[B]], %[[LO]], %[[V]] : f32
// CHECK:         %[[A:.*]] = arith.cmpf ogt, %[[L]], %[[HI]] : f32
// CHECK:         %[[C:.*]] = arith.select %[[A]], %[[HI]], %[[L]] : f32
// CHECK:         %[[W:.*]] = arith.fptosi %[[C]] : f32 to i32
// CHECK:         arith.trunci %[[W]] : i32 to i4
func.func @to_int4(%x: tensor<4xf32>) -> tensor<4xi4> {
  %0 = "onnx.Cast"(%x) {to = 22 : si64} : (tensor<4xf32>) -> tensor<4xi4>
  return %0 : tensor<4xi4>
}

// i32's top, 2^31 - 1, is not an f32: the clamp stops at the largest f32
// below it, 2^31 - 128, and values above that (at least 2^31) select the top.
// CHECK-LABEL: func.func @to_i32
// CHECK:         %[[HI:.*]] = arith.constant 2.1474835e+09 : f32
// CHECK:         %[[A:.*]] = arith.cmpf ogt, %{{.*}}, %[[HI]] : f32
// CHECK:         %[[C:.*]] = arith.select %[[A]], %[[HI]], %{{.*}} : f32
// CHECK:         %[[R:.*]] = arith.fptosi %[[C]] : f32 to i32
// CHECK:         %[[TOP:.*]] = arith.constant 2147483647 : i32
// CHECK:         arith.select %[[A]], %[[TOP]], %[[R]] : i32
func.func @to_i32(%x: tensor<4xf32>) -> tensor<4xi32> {
  %0 = "onnx.Cast"(%x) {to = 6 : si64} : (tensor<4xf32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// QuantizeLinear to an 8-bit float divides and casts (no zero point,
// saturate from the op); DequantizeLinear from one widens it exactly.
// CHECK-LABEL: func.func @quantize
// CHECK:         %[[Q:.*]] = arith.divf {{.*}} : f32
// CHECK-NOT:     memref.load
// CHECK:         arith.truncf %[[Q]] : f32 to f8E4M3FN
func.func @quantize(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<f8E4M3FN>) -> tensor<4xf8E4M3FN> {
  %0 = "onnx.QuantizeLinear"(%x, %s, %z) {saturate = 0 : si64} : (tensor<4xf32>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<4xf8E4M3FN>
  return %0 : tensor<4xf8E4M3FN>
}
// CHECK-LABEL: func.func @dequantize
// CHECK:         arith.extf {{.*}} : f8E5M2 to f64
// CHECK:         arith.mulf {{.*}} : f64
// CHECK:         arith.truncf {{.*}} : f64 to f16
func.func @dequantize(%x: tensor<4xf8E5M2>, %s: tensor<f16>) -> tensor<4xf16> {
  %0 = "onnx.DequantizeLinear"(%x, %s) : (tensor<4xf8E5M2>, tensor<f16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}
