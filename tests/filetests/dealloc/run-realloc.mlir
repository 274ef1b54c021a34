// RUN: onnxc opt %s -p "expand-realloc" | filecheck
// RUN: onnxc opt %s -p "dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// Realloc growth. @push_all grows a loop-carried buffer by one element per
// iteration with memref.realloc: the source is a loop argument, so
// expand-realloc turns it into alloc + copy and ownership frees the old
// buffer under its flag. @local reallocs a buffer of its own block, which
// deallocation keeps as a real (in-place) realloc.
// push_all(n) stores i*i at i: sum of squares below n: n=1: 0, n=4: 14, n=10: 285.
// local: [5, 6] grown to 3 elements, [2] = 7: 18.
// RUNOUT: 0
// RUNOUT-NEXT: 14
// RUNOUT-NEXT: 285
// RUNOUT-NEXT: 18

// CHECK-LABEL: func.func @push_all
// CHECK-NOT:   memref.realloc
// CHECK:       memref.alloc
// CHECK-LABEL: func.func @local
// CHECK:       memref.realloc
func.func private @printI64(i64)
func.func private @printNewline()

func.func @sum(%m: memref<?xi64>) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i64
  %n = memref.dim %m, %c0 : memref<?xi64>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (i64) {
    %v = memref.load %m[%i] : memref<?xi64>
    %t = arith.addi %acc, %v : i64
    scf.yield %t : i64
  }
  return %s : i64
}

func.func @push_all(%n: index) -> memref<?xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b0 = memref.alloc(%c1) : memref<?xi64>
  %z = arith.constant 0 : i64
  memref.store %z, %b0[%c0] : memref<?xi64>
  %r = scf.for %i = %c1 to %n step %c1 iter_args(%b = %b0) -> (memref<?xi64>) {
    %len = arith.addi %i, %c1 : index
    %g = memref.realloc %b(%len) : memref<?xi64> to memref<?xi64>
    %v = arith.index_cast %i : index to i64
    %sq = arith.muli %v, %v : i64
    memref.store %sq, %g[%i] : memref<?xi64>
    scf.yield %g : memref<?xi64>
  }
  return %r : memref<?xi64>
}

func.func @local() -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %five = arith.constant 5 : i64
  %six = arith.constant 6 : i64
  %seven = arith.constant 7 : i64
  %a = memref.alloc(%c2) : memref<?xi64>
  memref.store %five, %a[%c0] : memref<?xi64>
  memref.store %six, %a[%c1] : memref<?xi64>
  %g = memref.realloc %a(%c3) : memref<?xi64> to memref<?xi64>
  memref.store %seven, %g[%c2] : memref<?xi64>
  %s = func.call @sum(%g) : (memref<?xi64>) -> i64
  return %s : i64
}

func.func @show(%n: index) {
  %m = func.call @push_all(%n) : (index) -> memref<?xi64>
  %s = func.call @sum(%m) : (memref<?xi64>) -> i64
  func.call @printI64(%s) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c10 = arith.constant 10 : index
  func.call @show(%c1) : (index) -> ()
  func.call @show(%c4) : (index) -> ()
  func.call @show(%c10) : (index) -> ()
  %l = func.call @local() : () -> i64
  func.call @printI64(%l) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}
