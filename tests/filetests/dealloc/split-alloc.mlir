// RUN: onnxc opt %s -p "split-alloc" | filecheck
// RUN: onnxc opt %s -p "split-alloc,dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// split-alloc (bufferize): %t holds the sum of %a, then is overwritten by a
// copy of %b. The second value gets its own allocation, so %t's first
// value (and %a) can be freed before %b's copy is even made.
// (1+2+3+4) + 10 * 4 = 50 -> printed 10 then 40.
// RUNOUT: 10
// RUNOUT-NEXT: 40

// CHECK-LABEL: func.func @main
// CHECK:       memref.alloc() : memref<4xi64>
// CHECK-NEXT:  memref.alloc() : memref<4xi64>
// CHECK-NEXT:  %[[T:.*]] = memref.alloc() : memref<4xi64>
// CHECK-NEXT:  scf.for
// CHECK:       call @total(%[[T]])
// CHECK:       call @printNewline
// CHECK-NEXT:  %[[T2:.*]] = memref.alloc() : memref<4xi64>
// CHECK-NEXT:  memref.copy %{{.*}}, %[[T2]]
// CHECK-NEXT:  call @total(%[[T2]])
// Not split: a view of the buffer exists.
// CHECK-LABEL: func.func @viewed
// CHECK-COUNT-1: memref.alloc()
// CHECK-NOT:   memref.alloc()
func.func private @printI64(i64)
func.func private @printNewline()

func.func @total(%m: memref<4xi64>) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0 : i64
  %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %z) -> (i64) {
    %v = memref.load %m[%i] : memref<4xi64>
    %w = arith.addi %acc, %v : i64
    scf.yield %w : i64
  }
  return %s : i64
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %ten = arith.constant 10 : i64
  %a = memref.alloc() : memref<4xi64>
  %b = memref.alloc() : memref<4xi64>
  %t = memref.alloc() : memref<4xi64>
  scf.for %i = %c0 to %c4 step %c1 {
    %k = arith.index_cast %i : index to i64
    %k1 = arith.addi %k, %ten : i64
    memref.store %k1, %a[%i] : memref<4xi64>
    memref.store %ten, %b[%i] : memref<4xi64>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a[%i] : memref<4xi64>
    %w = arith.subi %v, %ten : i64
    %one = arith.constant 1 : i64
    %x = arith.addi %w, %one : i64
    memref.store %x, %t[%i] : memref<4xi64>
  }
  %s1 = func.call @total(%t) : (memref<4xi64>) -> i64
  func.call @printI64(%s1) : (i64) -> ()
  func.call @printNewline() : () -> ()
  memref.copy %b, %t : memref<4xi64> to memref<4xi64>
  %s2 = func.call @total(%t) : (memref<4xi64>) -> i64
  func.call @printI64(%s2) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}

func.func @viewed(%b: memref<4xi64>) -> i64 {
  %c0 = arith.constant 0 : index
  %t = memref.alloc() : memref<4xi64>
  %v = memref.cast %t : memref<4xi64> to memref<?xi64>
  memref.copy %b, %t : memref<4xi64> to memref<4xi64>
  %x = memref.load %v[%c0] : memref<?xi64>
  return %x : i64
}
