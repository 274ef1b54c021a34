// RUN: onnxc opt %s --emit llvm | filecheck --check-prefix=IR
// RUN: onnxc opt %s --emit llvm | run-llvm --cpu-level 2 | filecheck
// RUN: onnxc opt %s --emit llvm | run-llvm --cpu-level 9 | filecheck

// `x86vector.pmaddwd` on 32 i16 lanes (16 i32 results): SSE2's 128-bit
// intrinsic per quarter, the four results concatenated pairwise (LLVM
// joins them where the CPU has wider registers). Run with x = 255 and
// y = -128 in every lane (the int8 kernels' extremes: no saturation,
// 2·255·-128 = -65280) except lane 31 of y, 7: the last i32 lane is
// 255·-128 + 255·7 = -30855 (numpy: 255*-128 + 255*7).
// IR:          call <4 x i32> @llvm.x86.sse2.pmadd.wd(<8 x i16>
// IR-COUNT-3:  call <4 x i32> @llvm.x86.sse2.pmadd.wd(<8 x i16>
// IR:          shufflevector <8 x i32> %{{.*}}, <8 x i32> %{{.*}}, <16 x i32>
// CHECK: -65280
// CHECK-NEXT: -30855
func.func private @printI64(i64)
func.func private @printNewline()

func.func @main() {
  %x1 = arith.constant 255 : i16
  %y1 = arith.constant -128 : i16
  %s = arith.constant 7 : i16
  %x = vector.broadcast %x1 : i16 to vector<32xi16>
  %y0 = vector.broadcast %y1 : i16 to vector<32xi16>
  %y = vector.insert %s, %y0 [31] : i16 into vector<32xi16>
  %p = "x86vector.pmaddwd"(%x, %y) : (vector<32xi16>, vector<32xi16>) -> vector<16xi32>
  %first = vector.extract %p[0] : i32 from vector<16xi32>
  %last = vector.extract %p[15] : i32 from vector<16xi32>
  %a = arith.extsi %first : i32 to i64
  %b = arith.extsi %last : i32 to i64
  call @printI64(%a) : (i64) -> ()
  call @printNewline() : () -> ()
  call @printI64(%b) : (i64) -> ()
  call @printNewline() : () -> ()
  return
}
