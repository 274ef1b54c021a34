// RUN: onnxc opt %s --emit llvm | run-llvm --valgrind | filecheck

// A straight-line memref program with scf loops: fill two 3x3 matrices,
// multiply them, print the trace and the sum of all entries.
// a[i][k] = i + k, b[k][j] = k * j + 1:
//   c = a*b; trace(c) = 3 + 14 + 31 = 48, sum(c) = 126 (numpy)
// CHECK: 48
// CHECK-NEXT: 126
func.func private @printI64(i64)
func.func private @printNewline()

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0 : i64
  %a = memref.alloc() : memref<3x3xi64>
  %b = memref.alloc() : memref<3x3xi64>
  %c = memref.alloc() : memref<3x3xi64>
  scf.for %i = %c0 to %c3 step %c1 {
    scf.for %j = %c0 to %c3 step %c1 {
      %s = arith.addi %i, %j : index
      %sv = arith.index_cast %s : index to i64
      memref.store %sv, %a[%i, %j] : memref<3x3xi64>
      %p = arith.muli %i, %j : index
      %p1 = arith.addi %p, %c1 : index
      %pv = arith.index_cast %p1 : index to i64
      memref.store %pv, %b[%i, %j] : memref<3x3xi64>
    }
  }
  scf.for %i = %c0 to %c3 step %c1 {
    scf.for %j = %c0 to %c3 step %c1 {
      %acc = scf.for %k = %c0 to %c3 step %c1 iter_args(%s = %zero) -> (i64) {
        %x = memref.load %a[%i, %k] : memref<3x3xi64>
        %y = memref.load %b[%k, %j] : memref<3x3xi64>
        %m = arith.muli %x, %y : i64
        %n = arith.addi %s, %m : i64
        scf.yield %n : i64
      }
      memref.store %acc, %c[%i, %j] : memref<3x3xi64>
    }
  }
  %trace = scf.for %i = %c0 to %c3 step %c1 iter_args(%s = %zero) -> (i64) {
    %v = memref.load %c[%i, %i] : memref<3x3xi64>
    %n = arith.addi %s, %v : i64
    scf.yield %n : i64
  }
  %sum = scf.for %i = %c0 to %c3 step %c1 iter_args(%s = %zero) -> (i64) {
    %row = scf.for %j = %c0 to %c3 step %c1 iter_args(%t = %s) -> (i64) {
      %v = memref.load %c[%i, %j] : memref<3x3xi64>
      %n = arith.addi %t, %v : i64
      scf.yield %n : i64
    }
    scf.yield %row : i64
  }
  func.call @printI64(%trace) : (i64) -> ()
  func.call @printNewline() : () -> ()
  func.call @printI64(%sum) : (i64) -> ()
  func.call @printNewline() : () -> ()
  memref.dealloc %a : memref<3x3xi64>
  memref.dealloc %b : memref<3x3xi64>
  memref.dealloc %c : memref<3x3xi64>
  return
}
