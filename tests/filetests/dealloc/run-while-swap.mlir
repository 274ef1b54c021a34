// RUN: onnxc opt %s -p "dealloc-pipeline" | filecheck
// RUN: onnxc opt %s -p "dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT
// RUN: onnxc opt %s -p "dealloc-pipeline,canonicalize,cse" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// Executed: scf.while loops carrying buffers of dynamic size. @wswap swaps
// two buffers and replaces one by a fresh x + y each iteration; @shrink
// replaces its buffer by a fresh one-shorter prefix while it is longer than k.
// wswap(n, len): Fibonacci x0 = 1, y0 = 2, times len: (0,3) 3, (1,3) 6, (2,3) 9, (5,3) 39, (5,0) 0.
// shrink(len, k): sum of 0..min(len, k): (8,3) 3, (8,8) 28, (2,5) 1, (5,0) 0.
// Printed sums, in call order:
// RUNOUT: 3
// RUNOUT-NEXT: 6
// RUNOUT-NEXT: 9
// RUNOUT-NEXT: 39
// RUNOUT-NEXT: 0
// RUNOUT-NEXT: 3
// RUNOUT-NEXT: 28
// RUNOUT-NEXT: 1
// RUNOUT-NEXT: 0

// CHECK-LABEL: func.func @wswap
// CHECK:       scf.while {{.*}} -> (index, memref<?xi64>, memref<?xi64>, i1, i1)
// CHECK:         scf.condition

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

func.func @print(%m: memref<?xi64>) {
  %s = func.call @sum(%m) : (memref<?xi64>) -> i64
  func.call @printI64(%s) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}

// m[i] = i * k + c
func.func @iota(%m: memref<?xi64>, %k: i64, %c: i64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %m, %c0 : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = arith.index_cast %i : index to i64
    %w = arith.muli %v, %k : i64
    %x = arith.addi %w, %c : i64
    memref.store %x, %m[%i] : memref<?xi64>
  }
  return
}

// dst[i] = src[i] * k + c (dst may be src)
func.func @axpc(%src: memref<?xi64>, %dst: memref<?xi64>, %k: i64, %c: i64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %dst, %c0 : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %src[%i] : memref<?xi64>
    %w = arith.muli %v, %k : i64
    %x = arith.addi %w, %c : i64
    memref.store %x, %dst[%i] : memref<?xi64>
  }
  return
}

// dst[i] += src[i]
func.func @addto(%src: memref<?xi64>, %dst: memref<?xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %dst, %c0 : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %src[%i] : memref<?xi64>
    %w = memref.load %dst[%i] : memref<?xi64>
    %x = arith.addi %v, %w : i64
    memref.store %x, %dst[%i] : memref<?xi64>
  }
  return
}

// scf.while swapping two buffers, one replaced by a fresh x + y of dynamic
// size each iteration (Fibonacci per element).
func.func @wswap(%n: index, %len: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k0 = arith.constant 0 : i64
  %k1 = arith.constant 1 : i64
  %k2 = arith.constant 2 : i64
  %a = memref.alloc(%len) : memref<?xi64>
  %b = memref.alloc(%len) : memref<?xi64>
  func.call @iota(%a, %k0, %k1) : (memref<?xi64>, i64, i64) -> ()
  func.call @iota(%b, %k0, %k2) : (memref<?xi64>, i64, i64) -> ()
  %r:3 = scf.while (%i = %c0, %x = %a, %y = %b) : (index, memref<?xi64>, memref<?xi64>) -> (index, memref<?xi64>, memref<?xi64>) {
    %go = arith.cmpi slt, %i, %n : index
    scf.condition(%go) %i, %x, %y : index, memref<?xi64>, memref<?xi64>
  } do {
  ^bb0(%i: index, %x: memref<?xi64>, %y: memref<?xi64>):
    %t = memref.alloc(%len) : memref<?xi64>
    func.call @axpc(%x, %t, %k1, %k0) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
    func.call @addto(%y, %t) : (memref<?xi64>, memref<?xi64>) -> ()
    %i2 = arith.addi %i, %c1 : index
    scf.yield %i2, %y, %t : index, memref<?xi64>, memref<?xi64>
  }
  func.call @print(%r#1) : (memref<?xi64>) -> ()
  return
}

// scf.while shrinking a buffer by one element per iteration (a fresh
// buffer holding the prefix) while it holds more than %k elements.
func.func @shrink(%len: index, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k0 = arith.constant 0 : i64
  %k1 = arith.constant 1 : i64
  %a = memref.alloc(%len) : memref<?xi64>
  func.call @iota(%a, %k1, %k0) : (memref<?xi64>, i64, i64) -> ()
  %r = scf.while (%x = %a) : (memref<?xi64>) -> memref<?xi64> {
    %d = memref.dim %x, %c0 : memref<?xi64>
    %big = arith.cmpi ugt, %d, %k : index
    scf.condition(%big) %x : memref<?xi64>
  } do {
  ^bb0(%x: memref<?xi64>):
    %d = memref.dim %x, %c0 : memref<?xi64>
    %d1 = arith.subi %d, %c1 : index
    %y = memref.alloc(%d1) : memref<?xi64>
    %pre = memref.subview %x[0] [%d1] [1] : memref<?xi64> to memref<?xi64, strided<[1]>>
    memref.copy %pre, %y : memref<?xi64, strided<[1]>> to memref<?xi64>
    scf.yield %y : memref<?xi64>
  }
  func.call @print(%r) : (memref<?xi64>) -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  func.call @wswap(%c0, %c3) : (index, index) -> ()
  func.call @wswap(%c1, %c3) : (index, index) -> ()
  func.call @wswap(%c2, %c3) : (index, index) -> ()
  func.call @wswap(%c5, %c3) : (index, index) -> ()
  func.call @wswap(%c5, %c0) : (index, index) -> ()
  func.call @shrink(%c8, %c3) : (index, index) -> ()
  func.call @shrink(%c8, %c8) : (index, index) -> ()
  func.call @shrink(%c2, %c5) : (index, index) -> ()
  func.call @shrink(%c5, %c0) : (index, index) -> ()
  return
}
