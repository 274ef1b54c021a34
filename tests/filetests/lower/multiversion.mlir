// RUN: onnxc opt %s -p outline-kernels,multiversion | filecheck
// RUN: onnxc opt %s -p outline-kernels,multiversion --emit llvm | filecheck --check-prefix=LLVM
// RUN: onnxc opt %s -p outline-kernels,multiversion --emit llvm | run-llvm --cpu-level 2 --valgrind | filecheck --check-prefix=EXEC
// RUN: onnxc opt %s -p outline-kernels,multiversion --emit llvm | run-llvm --cpu-level 3 | filecheck --check-prefix=EXEC
// RUN: onnxc opt %s -p outline-kernels,multiversion --emit llvm | run-llvm | filecheck --check-prefix=EXEC

// The vector kernel (doubling 11 elements in vectors of 8, the last under
// a mask) keeps its body as _v2 and gets copies for x86-64-v3 and v4; the
// kernel's name is now a dispatcher on the CPU's level. The scalar fill
// loop is copied too (LLVM vectorizes such loops for the CPU it builds
// for). Executed at each level (v2 under memcheck), the result is the
// same: sum(2i, i < 11) = 110.
// CHECK-LABEL: func.func @main
// CHECK:         call @[[FILL:__onnxc_kernel[0-9]+]](
// CHECK:         call @[[VEC:__onnxc_kernel[0-9]+]](
// CHECK:       func.func private @[[FILL]](
// CHECK:         call @__onnxc_cpu_level
// CHECK:       func.func private @[[FILL]]_v4(
// CHECK:       func.func private @[[VEC]](%arg0: memref<16xf32>) {
// CHECK:         %[[L:.*]] = call @__onnxc_cpu_level() : () -> index
// CHECK:         %[[C4:.*]] = arith.constant 4 : index
// CHECK:         arith.cmpi sge, %[[L]], %[[C4]] : index
// CHECK:         scf.if
// CHECK-NEXT:      call @[[VEC]]_v4(%arg0)
// CHECK:         } else {
// CHECK:           scf.if
// CHECK-NEXT:        call @[[VEC]]_v3(%arg0)
// CHECK:           } else {
// CHECK-NEXT:        call @[[VEC]]_v2(%arg0)
// CHECK:       func.func private @[[VEC]]_v2(%arg0: memref<16xf32>) attributes {onnxc.kernel}
// CHECK:       func.func private @[[VEC]]_v3(%arg0: memref<16xf32>) attributes {onnxc.kernel, onnxc.target_cpu = "x86-64-v3"}
// CHECK:         vector.maskedload
// CHECK:       func.func private @[[VEC]]_v4(%arg0: memref<16xf32>) attributes {onnxc.kernel, onnxc.target_cpu = "x86-64-v4"}
// LLVM: @__onnxc_kernel{{[0-9]+}}_v4({{.*}}) noinline "target-cpu"="x86-64-v4"
// LLVM: define linkonce_odr hidden i64 @__onnxc_cpu_level()
// EXEC: 110
func.func private @printF64(f64)
func.func private @printNewline()

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c11 = arith.constant 11 : index
  %c16 = arith.constant 16 : index
  %c3 = arith.constant 3 : index
  %two = arith.constant 2.0 : f32
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<16xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    memref.store %f, %a[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c11 step %c8 {
    %left = arith.subi %c11, %i : index
    %m = vector.create_mask %left : vector<8xi1>
    %vz = vector.broadcast %zero : f32 to vector<8xf32>
    %v2 = vector.broadcast %two : f32 to vector<8xf32>
    %x = vector.maskedload %a[%i], %m, %vz : memref<16xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
    %y = arith.mulf %x, %v2 : vector<8xf32>
    vector.maskedstore %a[%i], %m, %y : memref<16xf32>, vector<8xi1>, vector<8xf32>
  }
  %s = scf.for %i = %c0 to %c11 step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %a[%i] : memref<16xf32>
    %n = arith.addf %acc, %x : f32
    scf.yield %n : f32
  }
  %d = arith.extf %s : f32 to f64
  func.call @printF64(%d) : (f64) -> ()
  func.call @printNewline() : () -> ()
  memref.dealloc %a : memref<16xf32>
  return
}
