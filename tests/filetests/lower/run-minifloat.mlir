// RUN: onnxc opt %s --emit llvm | run-llvm --valgrind | filecheck

// f32 → each 8- and 4-bit float format (arith.truncf: round to nearest
// even, overflow to infinity or NaN, f4E2M1FN saturating) and back
// (arith.extf), one line per input: code, value for f8E4M3FN, f8E4M3FNUZ,
// f8E5M2, f8E5M2FNUZ, f4E2M1FN. Inputs: ties (464, 2^-10, 5, 61440),
// overflow (465, 1e9, ±inf), NaN, ±0, subnormals (2^-9, 3·2^-11, 2^-17).
// Expected: ml_dtypes, `np.float32(x).astype(fmt)`, its code and
// `float(y.astype(np.float32))` printed with %g.
// CHECK: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
// CHECK-NEXT: 128, -0, 0, 0, 128, -0, 0, 0, 8, -0
// CHECK-NEXT: 56, 1, 64, 1, 60, 1, 64, 1, 2, 1
// CHECK-NEXT: 42, 0.3125, 50, 0.3125, 53, 0.3125, 57, 0.3125, 1, 0.5
// CHECK-NEXT: 195, -2.75, 203, -2.75, 194, -3, 198, -3, 13, -3
// CHECK-NEXT: 126, 448, 128, {{-?nan}}, 95, 448, 99, 448, 7, 6
// CHECK-NEXT: 126, 448, 128, {{-?nan}}, 95, 448, 99, 448, 7, 6
// CHECK-NEXT: 127, {{-?nan}}, 128, {{-?nan}}, 95, 448, 99, 448, 7, 6
// CHECK-NEXT: 127, {{-?nan}}, 128, {{-?nan}}, 124, inf, 128, {{-?nan}}, 7, 6
// CHECK-NEXT: 255, {{-?nan}}, 128, {{-?nan}}, 252, -inf, 128, {{-?nan}}, 15, -6
// CHECK-NEXT: 127, {{-?nan}}, 128, {{-?nan}}, 124, inf, 128, {{-?nan}}, 7, 6
// CHECK-NEXT: 127, {{-?nan}}, 128, {{-?nan}}, 126, {{-?nan}}, 128, {{-?nan}}, 8, -0
// CHECK-NEXT: 1, 0.00195312, 2, 0.00195312, 24, 0.00195312, 28, 0.00195312, 0, 0
// CHECK-NEXT: 0, 0, 1, 0.000976562, 20, 0.000976562, 24, 0.000976562, 0, 0
// CHECK-NEXT: 1, 0.00195312, 2, 0.00195312, 22, 0.00146484, 26, 0.00146484, 0, 0
// CHECK-NEXT: 0, 0, 0, 0, 0, 0, 1, 7.62939e-06, 0, 0
// CHECK-NEXT: 127, {{-?nan}}, 128, {{-?nan}}, 123, 57344, 127, 57344, 7, 6
// CHECK-NEXT: 127, {{-?nan}}, 128, {{-?nan}}, 124, inf, 128, {{-?nan}}, 7, 6
// CHECK-NEXT: 128, -0, 0, 0, 128, -0, 0, 0, 8, -0
// CHECK-NEXT: 119, 240, 127, 240, 92, 256, 96, 256, 7, 6
// CHECK-NEXT: 120, 256, 128, {{-?nan}}, 92, 256, 96, 256, 7, 6
// CHECK-NEXT: 74, 5, 82, 5, 69, 5, 73, 5, 6, 4
func.func private @printI64(i64)
func.func private @printF64(f64)
func.func private @printComma()
func.func private @printNewline()

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant 22 : index
  %xs = memref.alloc() : memref<22xf32>
  %x0 = arith.constant 0x00000000 : f32
  %i0 = arith.constant 0 : index
  memref.store %x0, %xs[%i0] : memref<22xf32>
  %x1 = arith.constant 0x80000000 : f32
  %i1 = arith.constant 1 : index
  memref.store %x1, %xs[%i1] : memref<22xf32>
  %x2 = arith.constant 0x3F800000 : f32
  %i2 = arith.constant 2 : index
  memref.store %x2, %xs[%i2] : memref<22xf32>
  %x3 = arith.constant 0x3E99999A : f32
  %i3 = arith.constant 3 : index
  memref.store %x3, %xs[%i3] : memref<22xf32>
  %x4 = arith.constant 0xC0300000 : f32
  %i4 = arith.constant 4 : index
  memref.store %x4, %xs[%i4] : memref<22xf32>
  %x5 = arith.constant 0x43E00000 : f32
  %i5 = arith.constant 5 : index
  memref.store %x5, %xs[%i5] : memref<22xf32>
  %x6 = arith.constant 0x43E80000 : f32
  %i6 = arith.constant 6 : index
  memref.store %x6, %xs[%i6] : memref<22xf32>
  %x7 = arith.constant 0x43E88000 : f32
  %i7 = arith.constant 7 : index
  memref.store %x7, %xs[%i7] : memref<22xf32>
  %x8 = arith.constant 0x4E6E6B28 : f32
  %i8 = arith.constant 8 : index
  memref.store %x8, %xs[%i8] : memref<22xf32>
  %x9 = arith.constant 0xFF800000 : f32
  %i9 = arith.constant 9 : index
  memref.store %x9, %xs[%i9] : memref<22xf32>
  %x10 = arith.constant 0x7F800000 : f32
  %i10 = arith.constant 10 : index
  memref.store %x10, %xs[%i10] : memref<22xf32>
  %x11 = arith.constant 0x7FC00000 : f32
  %i11 = arith.constant 11 : index
  memref.store %x11, %xs[%i11] : memref<22xf32>
  %x12 = arith.constant 0x3B000000 : f32
  %i12 = arith.constant 12 : index
  memref.store %x12, %xs[%i12] : memref<22xf32>
  %x13 = arith.constant 0x3A800000 : f32
  %i13 = arith.constant 13 : index
  memref.store %x13, %xs[%i13] : memref<22xf32>
  %x14 = arith.constant 0x3AC00000 : f32
  %i14 = arith.constant 14 : index
  memref.store %x14, %xs[%i14] : memref<22xf32>
  %x15 = arith.constant 0x37000000 : f32
  %i15 = arith.constant 15 : index
  memref.store %x15, %xs[%i15] : memref<22xf32>
  %x16 = arith.constant 0x47600000 : f32
  %i16 = arith.constant 16 : index
  memref.store %x16, %xs[%i16] : memref<22xf32>
  %x17 = arith.constant 0x47700000 : f32
  %i17 = arith.constant 17 : index
  memref.store %x17, %xs[%i17] : memref<22xf32>
  %x18 = arith.constant 0xB3D6BF95 : f32
  %i18 = arith.constant 18 : index
  memref.store %x18, %xs[%i18] : memref<22xf32>
  %x19 = arith.constant 0x43700000 : f32
  %i19 = arith.constant 19 : index
  memref.store %x19, %xs[%i19] : memref<22xf32>
  %x20 = arith.constant 0x43780000 : f32
  %i20 = arith.constant 20 : index
  memref.store %x20, %xs[%i20] : memref<22xf32>
  %x21 = arith.constant 0x40A00000 : f32
  %i21 = arith.constant 21 : index
  memref.store %x21, %xs[%i21] : memref<22xf32>
  scf.for %i = %c0 to %cn step %c1 {
    %x = memref.load %xs[%i] : memref<22xf32>
    %y0 = arith.truncf %x : f32 to f8E4M3FN
    %b0 = arith.bitcast %y0 : f8E4M3FN to i8
    %k0 = arith.extui %b0 : i8 to i64
    %w0 = arith.extf %y0 : f8E4M3FN to f64
    func.call @printI64(%k0) : (i64) -> ()
    func.call @printComma() : () -> ()
    func.call @printF64(%w0) : (f64) -> ()
    %y1 = arith.truncf %x : f32 to f8E4M3FNUZ
    %b1 = arith.bitcast %y1 : f8E4M3FNUZ to i8
    %k1 = arith.extui %b1 : i8 to i64
    %w1 = arith.extf %y1 : f8E4M3FNUZ to f64
    func.call @printComma() : () -> ()
    func.call @printI64(%k1) : (i64) -> ()
    func.call @printComma() : () -> ()
    func.call @printF64(%w1) : (f64) -> ()
    %y2 = arith.truncf %x : f32 to f8E5M2
    %b2 = arith.bitcast %y2 : f8E5M2 to i8
    %k2 = arith.extui %b2 : i8 to i64
    %w2 = arith.extf %y2 : f8E5M2 to f64
    func.call @printComma() : () -> ()
    func.call @printI64(%k2) : (i64) -> ()
    func.call @printComma() : () -> ()
    func.call @printF64(%w2) : (f64) -> ()
    %y3 = arith.truncf %x : f32 to f8E5M2FNUZ
    %b3 = arith.bitcast %y3 : f8E5M2FNUZ to i8
    %k3 = arith.extui %b3 : i8 to i64
    %w3 = arith.extf %y3 : f8E5M2FNUZ to f64
    func.call @printComma() : () -> ()
    func.call @printI64(%k3) : (i64) -> ()
    func.call @printComma() : () -> ()
    func.call @printF64(%w3) : (f64) -> ()
    %y4 = arith.truncf %x : f32 to f4E2M1FN
    %b4 = arith.bitcast %y4 : f4E2M1FN to i4
    %k4 = arith.extui %b4 : i4 to i64
    %w4 = arith.extf %y4 : f4E2M1FN to f64
    func.call @printComma() : () -> ()
    func.call @printI64(%k4) : (i64) -> ()
    func.call @printComma() : () -> ()
    func.call @printF64(%w4) : (f64) -> ()
    func.call @printNewline() : () -> ()
  }
  memref.dealloc %xs : memref<22xf32>
  return
}
