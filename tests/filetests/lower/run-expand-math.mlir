// RUN: onnxc opt %s -p expand-math | filecheck --check-prefix=IR %s
// RUN: onnxc opt %s --emit llvm | run-llvm --valgrind | filecheck

// expand-math turns f32 exp, tanh, erf and constant-exponent powf into
// arith ops (vectors too); f64 keeps libm.
// IR-LABEL: func.func @kernels
// IR-NOT:     math.exp %{{.*}} : f32
// IR-NOT:     math.tanh
// IR-NOT:     math.erf
// IR-NOT:     math.powf
// IR:         arith.bitcast
// IR:         math.exp %{{.*}} : f64

// Executed: the largest error of each f32 expansion against the f64 libm
// function over a sweep (exp: relative, x in [-80, 80); tanh and erf:
// absolute, x in [-10, 10)), each printed as 1 when within bound; then
// the edges: exp(NaN) is NaN, exp(100) = inf, exp(-200) = 0, tanh(-inf) =
// -1, erf(inf) = 1, and x^3, x^-2, x^0.5 of 1.5 on an 8-lane vector.
// CHECK: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: nan
// CHECK-NEXT: inf
// CHECK-NEXT: 0
// CHECK-NEXT: -1
// CHECK-NEXT: 1
// CHECK-NEXT: 3.375
// CHECK-NEXT: 0.444444
// CHECK-NEXT: 1.22474
func.func private @printI64(i64)
func.func private @printF64(f64)
func.func private @printNewline()

func.func @kernels(%x: f32) -> (f32, f32, f32, f64, f64, f64) {
  %e = math.exp %x : f32
  %t = math.tanh %x : f32
  %r = math.erf %x : f32
  %xd = arith.extf %x : f32 to f64
  %ed = math.exp %xd : f64
  %td = math.tanh %xd : f64
  %rd = math.erf %xd : f64
  return %e, %t, %r, %ed, %td, %rd : f32, f32, f32, f64, f64, f64
}

func.func @sweep(%lo: f32, %n: index, %step: f32) -> (f64, f64, f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%me = %z, %mt = %z, %mr = %z) -> (f64, f64, f64) {
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f32
    %off = arith.mulf %fi, %step : f32
    %x = arith.addf %lo, %off : f32
    %e, %t, %r, %ed, %td, %rd = func.call @kernels(%x) : (f32) -> (f32, f32, f32, f64, f64, f64)
    %e64 = arith.extf %e : f32 to f64
    %t64 = arith.extf %t : f32 to f64
    %r64 = arith.extf %r : f32 to f64
    %de = arith.subf %e64, %ed : f64
    %dea = math.absf %de : f64
    %rel = arith.divf %dea, %ed : f64
    %dt = arith.subf %t64, %td : f64
    %dta = math.absf %dt : f64
    %dr = arith.subf %r64, %rd : f64
    %dra = math.absf %dr : f64
    %me1 = arith.maximumf %me, %rel : f64
    %mt1 = arith.maximumf %mt, %dta : f64
    %mr1 = arith.maximumf %mr, %dra : f64
    scf.yield %me1, %mt1, %mr1 : f64, f64, f64
  }
  return %r#0, %r#1, %r#2 : f64, f64, f64
}

func.func @print_below(%v: f64, %bound: f64) {
  %ok = arith.cmpf olt, %v, %bound : f64
  %i = arith.extui %ok : i1 to i64
  call @printI64(%i) : (i64) -> ()
  call @printNewline() : () -> ()
  return
}

func.func @print(%v: f32) {
  %d = arith.extf %v : f32 to f64
  call @printF64(%d) : (f64) -> ()
  call @printNewline() : () -> ()
  return
}

func.func @main() {
  %lo_e = arith.constant -80.0 : f32
  %n_e = arith.constant 16000 : index
  %step = arith.constant 0.01 : f32
  %e, %t0, %r0 = func.call @sweep(%lo_e, %n_e, %step) : (f32, index, f32) -> (f64, f64, f64)
  %lo_t = arith.constant -10.0 : f32
  %n_t = arith.constant 2000 : index
  %e1, %t, %r = func.call @sweep(%lo_t, %n_t, %step) : (f32, index, f32) -> (f64, f64, f64)
  %be = arith.constant 4.0e-7 : f64
  %bt = arith.constant 3.0e-7 : f64
  %br = arith.constant 3.0e-7 : f64
  call @print_below(%e, %be) : (f64, f64) -> ()
  call @print_below(%t, %bt) : (f64, f64) -> ()
  call @print_below(%r, %br) : (f64, f64) -> ()
  %nan = arith.constant 0x7FC00000 : f32
  %big = arith.constant 100.0 : f32
  %tiny = arith.constant -200.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %pinf = arith.constant 0x7F800000 : f32
  %en = math.exp %nan : f32
  %eb = math.exp %big : f32
  %et = math.exp %tiny : f32
  %tn = math.tanh %ninf : f32
  %rp = math.erf %pinf : f32
  call @print(%en) : (f32) -> ()
  call @print(%eb) : (f32) -> ()
  call @print(%et) : (f32) -> ()
  call @print(%tn) : (f32) -> ()
  call @print(%rp) : (f32) -> ()
  %v_s = arith.constant 1.5 : f32
  %three_s = arith.constant 3.0 : f32
  %mtwo_s = arith.constant -2.0 : f32
  %half_s = arith.constant 0.5 : f32
  %v = vector.broadcast %v_s : f32 to vector<8xf32>
  %three = vector.broadcast %three_s : f32 to vector<8xf32>
  %mtwo = vector.broadcast %mtwo_s : f32 to vector<8xf32>
  %half = vector.broadcast %half_s : f32 to vector<8xf32>
  %p3 = math.powf %v, %three : vector<8xf32>
  %pm2 = math.powf %v, %mtwo : vector<8xf32>
  %ph = math.powf %v, %half : vector<8xf32>
  %p3s = vector.extract %p3[0] : f32 from vector<8xf32>
  %pm2s = vector.extract %pm2[3] : f32 from vector<8xf32>
  %phs = vector.extract %ph[7] : f32 from vector<8xf32>
  call @print(%p3s) : (f32) -> ()
  call @print(%pm2s) : (f32) -> ()
  call @print(%phs) : (f32) -> ()
  return
}
