// RUN: onnxc opt %s -p outline-kernels | filecheck
// RUN: onnxc opt %s --emit llvm | run-llvm --valgrind | filecheck --check-prefix=EXEC

// Top-level nests without results become kernels: the fill is one, the two
// nests adding 1 in place are one shared kernel (constants cloned, buffers
// passed), the doubling nest another; the nest with a result stays inline.
// CHECK-LABEL: func.func @main
// CHECK: call @__onnxc_kernel0(%[[A:[0-9]+]]) : (memref<4xi64>) -> ()
// CHECK-NEXT: call @__onnxc_kernel1(%[[A]]) : (memref<4xi64>) -> ()
// CHECK-NEXT: call @__onnxc_kernel1(%[[A]]) : (memref<4xi64>) -> ()
// CHECK-NEXT: call @__onnxc_kernel2(%[[A]], %{{[0-9]+}}) : (memref<4xi64>, memref<4xi64>) -> ()
// CHECK-NEXT: scf.for
// CHECK-LABEL: func.func private @__onnxc_kernel0(%arg0: memref<4xi64>) attributes {onnxc.kernel}
// CHECK-LABEL: func.func private @__onnxc_kernel1(%arg0: memref<4xi64>) attributes {onnxc.kernel}
// CHECK: arith.constant 1 : i64
// CHECK: scf.for
// CHECK: return
// CHECK-LABEL: func.func private @__onnxc_kernel2(%arg0: memref<4xi64>, %arg1: memref<4xi64>)
// CHECK-NOT: func.func
// a = [0,1,2,3] + 2, b = 2a: sum(b) = 2 * (6 + 8) = 28.
// EXEC: 28
func.func private @printI64(i64)
func.func private @printNewline()

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1 : i64
  %zero = arith.constant 0 : i64
  %a = memref.alloc() : memref<4xi64>
  %b = memref.alloc() : memref<4xi64>
  %i0 = arith.index_cast %c0 : index to i64
  scf.for %i = %c0 to %c4 step %c1 {
    %v = arith.index_cast %i : index to i64
    memref.store %v, %a[%i] : memref<4xi64>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a[%i] : memref<4xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %a[%i] : memref<4xi64>
  }
  scf.for %j = %c0 to %c4 step %c1 {
    %v = memref.load %a[%j] : memref<4xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %a[%j] : memref<4xi64>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a[%i] : memref<4xi64>
    %w = arith.addi %v, %v : i64
    memref.store %w, %b[%i] : memref<4xi64>
  }
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %zero) -> (i64) {
    %v = memref.load %b[%i] : memref<4xi64>
    %n = arith.addi %s, %v : i64
    scf.yield %n : i64
  }
  func.call @printI64(%sum) : (i64) -> ()
  func.call @printNewline() : () -> ()
  memref.dealloc %a : memref<4xi64>
  memref.dealloc %b : memref<4xi64>
  return
}
