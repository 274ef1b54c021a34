// RUN: onnxc opt %s --emit llvm | run-llvm --valgrind | filecheck

// The vector ops the kernels are written with, executed: a[i] = i for
// i < 11; then over 8-lane vectors (one full, one masked remainder of 3):
// b = fma(a, 2, 1) stored back, the sum of b (numpy: sum(2i + 1 for i in
// range(11)) = 121), the max of b (21), lane 3 of the first vector (7),
// exp over the first vector's lane 1 (exp(3) = 20.0855...), a compare +
// select clamping b at 10 and summed (1+3+5+7+9+10*6 = 85), and a shuffle
// interleaving the two loaded vectors [0..7] and [8, 9, 10, 0, ...] (lane 1
// of [0, 8, 1, 9, ...] = 8).
// CHECK: 121
// CHECK-NEXT: 21
// CHECK-NEXT: 7
// CHECK-NEXT: 20.08
// CHECK-NEXT: 85
// CHECK-NEXT: 8
func.func private @printF64(f64)
func.func private @printNewline()

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c11 = arith.constant 11 : index
  %c3 = arith.constant 3 : index
  %two = arith.constant 2.0 : f32
  %one = arith.constant 1.0 : f32
  %ten = arith.constant 10.0 : f32
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<16xf32>
  scf.for %i = %c0 to %c11 step %c1 {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    memref.store %f, %a[%i] : memref<16xf32>
  }
  %v2 = vector.broadcast %two : f32 to vector<8xf32>
  %v1 = vector.broadcast %one : f32 to vector<8xf32>
  %v10 = vector.broadcast %ten : f32 to vector<8xf32>
  %vz = vector.broadcast %zero : f32 to vector<8xf32>
  // Full vector at 0, masked remainder of 3 at 8.
  %x0 = vector.load %a[%c0] : memref<16xf32>, vector<8xf32>
  %y0 = vector.fma %x0, %v2, %v1 : vector<8xf32>
  vector.store %y0, %a[%c0] : memref<16xf32>, vector<8xf32>
  %m = vector.create_mask %c3 : vector<8xi1>
  %x1 = vector.maskedload %a[%c8], %m, %vz : memref<16xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
  %y1 = vector.fma %x1, %v2, %v1 : vector<8xf32>
  %y1m = arith.select %m, %y1, %vz : vector<8xi1>, vector<8xf32>
  vector.maskedstore %a[%c8], %m, %y1 : memref<16xf32>, vector<8xi1>, vector<8xf32>
  %s0 = vector.reduction <add>, %y0 : vector<8xf32> into f32
  %s1 = vector.reduction <add>, %y1m : vector<8xf32> into f32
  %sum = arith.addf %s0, %s1 : f32
  %sumd = arith.extf %sum : f32 to f64
  func.call @printF64(%sumd) : (f64) -> ()
  func.call @printNewline() : () -> ()
  %mx0 = vector.reduction <maximumf>, %y0 : vector<8xf32> into f32
  %mx1 = vector.reduction <maximumf>, %y1m : vector<8xf32> into f32
  %mx = arith.maximumf %mx0, %mx1 : f32
  %mxd = arith.extf %mx : f32 to f64
  func.call @printF64(%mxd) : (f64) -> ()
  func.call @printNewline() : () -> ()
  %l3 = vector.extract %y0[3] : f32 from vector<8xf32>
  %l3d = arith.extf %l3 : f32 to f64
  func.call @printF64(%l3d) : (f64) -> ()
  func.call @printNewline() : () -> ()
  %e = math.exp %y0 : vector<8xf32>
  %e1 = vector.extract %e[1] : f32 from vector<8xf32>
  %e1d = arith.extf %e1 : f32 to f64
  func.call @printF64(%e1d) : (f64) -> ()
  func.call @printNewline() : () -> ()
  %big = arith.cmpf ogt, %y0, %v10 : vector<8xf32>
  %cl0 = arith.select %big, %v10, %y0 : vector<8xi1>, vector<8xf32>
  %r1 = vector.maskedload %a[%c8], %m, %vz : memref<16xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
  %big1 = arith.cmpf ogt, %r1, %v10 : vector<8xf32>
  %cl1 = arith.select %big1, %v10, %r1 : vector<8xi1>, vector<8xf32>
  %t0 = vector.reduction <add>, %cl0 : vector<8xf32> into f32
  %t1 = vector.reduction <add>, %cl1 : vector<8xf32> into f32
  %t = arith.addf %t0, %t1 : f32
  %td = arith.extf %t : f32 to f64
  func.call @printF64(%td) : (f64) -> ()
  func.call @printNewline() : () -> ()
  %xs = vector.load %a[%c0] : memref<16xf32>, vector<8xf32>
  %xi = vector.shuffle %x0, %x1 [0, 8, 1, 9, 2, 10, 3, 11] : vector<8xf32>, vector<8xf32>
  %q = vector.extract %xi[1] : f32 from vector<8xf32>
  %qd = arith.extf %q : f32 to f64
  func.call @printF64(%qd) : (f64) -> ()
  func.call @printNewline() : () -> ()
  %unused = vector.reduction <add>, %xs : vector<8xf32> into f32
  memref.dealloc %a : memref<16xf32>
  return
}
