// RUN: onnxc opt %s --emit llvm | filecheck

// The 8- and 4-bit float formats are i8 codes; arith.truncf and
// arith.extf become integer code on the IEEE bits (values checked by
// run-minifloat.mlir against ml_dtypes).

// f32 → f8E4M3FN: significand with its hidden bit, the target exponent
// (bias 7 - 127 = -120), a right shift by 20 + how far below the normal
// range (capped at 5), rounded to nearest even (add half - 1 plus the
// kept LSB), the exponent added back; codes past 0x7E (448) overflow to
// NaN (0x7F), NaN stays NaN, the sign is or-ed on.
// CHECK-LABEL: define i8 @to_e4m3fn(float %v0)
// CHECK:         [[BITS:%t[0-9]+]] = bitcast float %v0 to i32
// CHECK:         [[ABS:%t[0-9]+]] = and i32 [[BITS]], 2147483647
// CHECK:         [[EXP:%t[0-9]+]] = lshr i32 [[ABS]], 23
// CHECK:         [[MAN:%t[0-9]+]] = and i32 [[ABS]], 8388607
// CHECK:         select i1 %{{t[0-9]+}}, i32 8388608, i32 0
// CHECK:         [[E1:%t[0-9]+]] = call i32 @llvm.umax.i32(i32 [[EXP]], i32 1)
// CHECK:         [[CE:%t[0-9]+]] = add i32 [[E1]], -120
// CHECK:         [[LOW:%t[0-9]+]] = call i32 @llvm.smin.i32(i32 %{{t[0-9]+}}, i32 5)
// CHECK:         [[S:%t[0-9]+]] = add i32 [[LOW]], 20
// CHECK:         [[HALF:%t[0-9]+]] = shl i32 1, %{{t[0-9]+}}
// CHECK:         [[Q:%t[0-9]+]] = lshr i32 [[SIG:%t[0-9]+]], [[S]]
// CHECK:         [[ODD:%t[0-9]+]] = and i32 [[Q]], 1
// CHECK:         add i32 [[SIG]], %{{t[0-9]+}}
// CHECK:         [[R:%t[0-9]+]] = lshr i32 %{{t[0-9]+}}, [[S]]
// CHECK:         [[CODE:%t[0-9]+]] = add i32 [[R]], %{{t[0-9]+}}
// CHECK:         [[OVER:%t[0-9]+]] = icmp ugt i32 [[CODE]], 126
// CHECK:         select i1 [[OVER]], i32 127, i32 [[CODE]]
// CHECK:         [[NAN:%t[0-9]+]] = fcmp uno float %v0, 0.0
// CHECK:         [[MAG:%t[0-9]+]] = select i1 [[NAN]], i8 127, i8 %{{t[0-9]+}}
// CHECK:         [[NEG:%t[0-9]+]] = icmp slt i32 [[BITS]], 0
// CHECK:         [[SIGNED:%t[0-9]+]] = or i8 [[MAG]], -128
// CHECK:         [[OUT:%t[0-9]+]] = select i1 [[NEG]], i8 [[SIGNED]], i8 [[MAG]]
// CHECK:         ret i8 [[OUT]]
func.func @to_e4m3fn(%x: f32) -> f8E4M3FN {
  %y = arith.truncf %x : f32 to f8E4M3FN
  return %y : f8E4M3FN
}

// f64 sources round once, on the f64 bits; E5M2FNUZ overflows and NaNs
// to 0x80 and has no negative zero: the sign skips 0x80 and 0.
// CHECK-LABEL: define i8 @to_e5m2fnuz(double %v2)
// CHECK:         bitcast double %v2 to i64
// CHECK:         lshr i64 %{{t[0-9]+}}, 52
// CHECK:         add i64 %{{t[0-9]+}}, -1007
// CHECK:         [[OVER:%t[0-9]+]] = icmp ugt i64 %{{t[0-9]+}}, 127
// CHECK:         select i1 [[OVER]], i64 128, i64
// CHECK:         [[MAG:%t[0-9]+]] = select i1 %{{t[0-9]+}}, i8 -128, i8
// CHECK:         icmp eq i8 [[MAG]], -128
// CHECK:         icmp ne i8 [[MAG]], 0
// CHECK:         or i8 [[MAG]], -128
func.func @to_e5m2fnuz(%x: f64) -> f8E5M2FNUZ {
  %y = arith.truncf %x : f64 to f8E5M2FNUZ
  return %y : f8E5M2FNUZ
}

// E5M2 → f32: exponent rebiased by 127 - 15, mantissa to the top;
// subnormals are mantissa · 2^-16 (0x3EF0000000000000); 0x7C is
// infinity, above it NaN; the sign moves to bit 31.
// CHECK-LABEL: define float @from_e5m2(i8 %v4)
// CHECK:         [[C:%t[0-9]+]] = zext i8 %v4 to i32
// CHECK:         [[MAG:%t[0-9]+]] = and i32 [[C]], 127
// CHECK:         add i32 %{{t[0-9]+}}, 112
// CHECK:         shl i32 %{{t[0-9]+}}, 21
// CHECK:         fmul float %{{t[0-9]+}}, 0x3EF0000000000000
// CHECK:         [[INF:%t[0-9]+]] = icmp eq i32 [[MAG]], 124
// CHECK:         select i1 [[INF]], i32 2139095040,
// CHECK:         [[NAN:%t[0-9]+]] = icmp ugt i32 [[MAG]], 124
// CHECK:         select i1 [[NAN]], i32 2143289344,
// CHECK:         shl i32 %{{t[0-9]+}}, 24
// CHECK:         bitcast i32 %{{t[0-9]+}} to float
func.func @from_e5m2(%x: f8E5M2) -> f32 {
  %y = arith.extf %x : f8E5M2 to f32
  return %y : f32
}

// f16 → f4E2M1FN through f32 (exact); no infinity or NaN: overflow
// saturates to 7 (6.0), NaN becomes -0 (0x8).
// CHECK-LABEL: define i8 @to_f4(half %v6)
// CHECK:         [[W:%t[0-9]+]] = fpext half %v6 to float
// CHECK:         [[OVER:%t[0-9]+]] = icmp ugt i32 %{{t[0-9]+}}, 7
// CHECK:         select i1 [[OVER]], i32 7, i32
// CHECK:         [[NAN:%t[0-9]+]] = fcmp uno float [[W]], 0.0
// CHECK:         [[MAG:%t[0-9]+]] = select i1 [[NAN]], i8 0, i8
// CHECK:         or i1 %{{t[0-9]+}}, [[NAN]]
// CHECK:         or i8 [[MAG]], 8
func.func @to_f4(%x: f16) -> f4E2M1FN {
  %y = arith.truncf %x : f16 to f4E2M1FN
  return %y : f4E2M1FN
}

// Arithmetic widens both operands to f32 and narrows the result once.
// CHECK-LABEL: define i8 @add_e4m3fnuz(i8 %v8, i8 %v9)
// CHECK:         [[A:%t[0-9]+]] = bitcast i32 %{{t[0-9]+}} to float
// CHECK:         [[B:%t[0-9]+]] = bitcast i32 %{{t[0-9]+}} to float
// CHECK:         [[SUM:%t[0-9]+]] = fadd contract float [[A]], [[B]]
// CHECK:         bitcast float [[SUM]] to i32
// CHECK:         ret i8
func.func @add_e4m3fnuz(%x: f8E4M3FNUZ, %z: f8E4M3FNUZ) -> f8E4M3FNUZ {
  %y = arith.addf %x, %z : f8E4M3FNUZ
  return %y : f8E4M3FNUZ
}
