// RUN: onnxc opt %s -p "dealloc-pipeline" | filecheck
// RUN: onnxc opt %s -p "dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// Executed: aliases inside and after a loop: an arith.select of the carried
// buffer and a fresh one, a copy whose source dies right after it, a stack
// buffer mixed into a select (never freed), a subview window.
// alias_loop(n, c), x0 = [0..3]; t = x + 3; odd i and c: keep a copy of x,
// else t. Prints sum(w[1..3)) with w = c ? x : 3s, then sum(x):
//   (0,1) 3 6, (3,1) 15 30, (4,1) 15 30, (4,0) 6 54.
// Printed sums, in call order:
// RUNOUT: 3
// RUNOUT-NEXT: 6
// RUNOUT-NEXT: 15
// RUNOUT-NEXT: 30
// RUNOUT-NEXT: 15
// RUNOUT-NEXT: 30
// RUNOUT-NEXT: 6
// RUNOUT-NEXT: 54

// CHECK-LABEL: func.func @alias_loop
// CHECK:       scf.for

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

// Aliases: arith.select of buffers inside a loop (the carried buffer or a
// fresh one), a copy whose source dies right after (copy elision), a
// subview window, and a stack buffer mixed into a select (never freed).
func.func @alias_loop(%n: index, %c: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %k0 = arith.constant 0 : i64
  %k1 = arith.constant 1 : i64
  %k3 = arith.constant 3 : i64
  %a = memref.alloc(%c4) : memref<?xi64>
  func.call @iota(%a, %k1, %k0) : (memref<?xi64>, i64, i64) -> ()
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a) -> (memref<?xi64>) {
    %t = memref.alloc(%c4) : memref<?xi64>
    func.call @axpc(%x, %t, %k1, %k3) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
    %rem = arith.remui %i, %c2 : index
    %odd = arith.cmpi eq, %rem, %c1 : index
    %both = arith.andi %odd, %c : i1
    %s = arith.select %both, %x, %t : memref<?xi64>
    // A copy of %s into a fresh buffer; %s dies after it.
    %cp = memref.alloc(%c4) : memref<?xi64>
    memref.copy %s, %cp : memref<?xi64> to memref<?xi64>
    scf.yield %cp : memref<?xi64>
  }
  %st = memref.alloca(%c4) : memref<?xi64>
  func.call @iota(%st, %k0, %k3) : (memref<?xi64>, i64, i64) -> ()
  %w = arith.select %c, %r, %st : memref<?xi64>
  %win = memref.subview %w[1] [2] [1] : memref<?xi64> to memref<2xi64, strided<[1], offset: 1>>
  %o = memref.alloc(%c2) : memref<?xi64>
  memref.copy %win, %o : memref<2xi64, strided<[1], offset: 1>> to memref<?xi64>
  func.call @print(%o) : (memref<?xi64>) -> ()
  func.call @print(%r) : (memref<?xi64>) -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %t = arith.constant true
  %f = arith.constant false
  func.call @alias_loop(%c0, %t) : (index, i1) -> ()
  func.call @alias_loop(%c3, %t) : (index, i1) -> ()
  func.call @alias_loop(%c4, %t) : (index, i1) -> ()
  func.call @alias_loop(%c4, %f) : (index, i1) -> ()
  return
}
