// RUN: onnxc opt %s -p "dealloc-pipeline" | filecheck
// RUN: onnxc opt %s -p "dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT
// RUN: onnxc opt %s -p "dealloc-pipeline,canonicalize,cse" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// Executed: double buffering and loop-result simplification. @smooth
// computes a fresh buffer from the carried one every iteration: two buffers
// in all, swapped, both freed after the loop. @rotate3 rotates three
// buffers in a while loop: the frees after it go onto the allocations.
// @keep reads its init after the loop: not owned by the loop, left alone.
// smooth(n, len): x = [0..len), n times x[i] + x[i+1 mod len]: (0,4) 6, (1,4) 12, (3,5) 80.
// rotate3(n), x, y, z = 1s, 2s, 3s; x += y; rotate: prints sum(x), sum(z):
//   0: 2 6, 1: 4 6, 4: 10 16.
// keep(n) = sum(x0 + n) + sum(x0), x0 = [0, 1, 2]: 0 6, 3 15.
// Printed sums, in call order:
// RUNOUT: 6
// RUNOUT-NEXT: 12
// RUNOUT-NEXT: 80
// RUNOUT-NEXT: 2
// RUNOUT-NEXT: 6
// RUNOUT-NEXT: 4
// RUNOUT-NEXT: 6
// RUNOUT-NEXT: 10
// RUNOUT-NEXT: 16
// RUNOUT-NEXT: 6
// RUNOUT-NEXT: 15

// CHECK-LABEL: func.func @smooth
// CHECK-COUNT-2: memref.alloc(
// CHECK:       scf.for
// CHECK-NOT:   memref.alloc
// CHECK:       scf.yield %[[Y:.*]], %[[X:.*]], %{{.*}}, %{{.*}} : memref<?xi64>, memref<?xi64>, i1, i1
// CHECK-COUNT-2: memref.dealloc
// CHECK-LABEL: func.func @rotate3
// CHECK-COUNT-3: memref.dealloc
// CHECK-LABEL: func.func @keep
// CHECK:       scf.for
// CHECK:         memref.alloc

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

// A smoothing stencil over %n iterations: t[i] = x[i] + x[i+1 mod len]
// into a fresh buffer each time (double-buffered: two buffers in all).
func.func @smooth(%n: index, %len: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k0 = arith.constant 0 : i64
  %k1 = arith.constant 1 : i64
  %a = memref.alloc(%len) : memref<?xi64>
  func.call @iota(%a, %k1, %k0) : (memref<?xi64>, i64, i64) -> ()
  %r = scf.for %it = %c0 to %n step %c1 iter_args(%x = %a) -> (memref<?xi64>) {
    %t = memref.alloc(%len) : memref<?xi64>
    scf.for %i = %c0 to %len step %c1 {
      %j0 = arith.addi %i, %c1 : index
      %j = arith.remui %j0, %len : index
      %u = memref.load %x[%i] : memref<?xi64>
      %v = memref.load %x[%j] : memref<?xi64>
      %w = arith.addi %u, %v : i64
      memref.store %w, %t[%i] : memref<?xi64>
    }
    scf.yield %t : memref<?xi64>
  }
  func.call @print(%r) : (memref<?xi64>) -> ()
  return
}

// Three buffers rotated by a while loop, each step adding the next one
// into the current: (x, y, z) -> (y, z, x + y) in place.
func.func @rotate3(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %k0 = arith.constant 0 : i64
  %k1 = arith.constant 1 : i64
  %k2 = arith.constant 2 : i64
  %k3 = arith.constant 3 : i64
  %a = memref.alloc(%c2) : memref<?xi64>
  %b = memref.alloc(%c2) : memref<?xi64>
  %d = memref.alloc(%c2) : memref<?xi64>
  func.call @iota(%a, %k0, %k1) : (memref<?xi64>, i64, i64) -> ()
  func.call @iota(%b, %k0, %k2) : (memref<?xi64>, i64, i64) -> ()
  func.call @iota(%d, %k0, %k3) : (memref<?xi64>, i64, i64) -> ()
  %r:4 = scf.while (%i = %c0, %x = %a, %y = %b, %z = %d) : (index, memref<?xi64>, memref<?xi64>, memref<?xi64>) -> (index, memref<?xi64>, memref<?xi64>, memref<?xi64>) {
    %go = arith.cmpi slt, %i, %n : index
    scf.condition(%go) %i, %x, %y, %z : index, memref<?xi64>, memref<?xi64>, memref<?xi64>
  } do {
  ^bb0(%i: index, %x: memref<?xi64>, %y: memref<?xi64>, %z: memref<?xi64>):
    func.call @addto(%y, %x) : (memref<?xi64>, memref<?xi64>) -> ()
    %i2 = arith.addi %i, %c1 : index
    scf.yield %i2, %y, %z, %x : index, memref<?xi64>, memref<?xi64>, memref<?xi64>
  }
  func.call @print(%r#1) : (memref<?xi64>) -> ()
  func.call @print(%r#3) : (memref<?xi64>) -> ()
  return
}

// The init is read after the loop: the loop does not own it, nothing is
// double-buffered, and the result is x0 + n per element.
func.func @keep(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %k0 = arith.constant 0 : i64
  %k1 = arith.constant 1 : i64
  %a = memref.alloc(%c3) : memref<?xi64>
  func.call @iota(%a, %k1, %k0) : (memref<?xi64>, i64, i64) -> ()
  %r = scf.for %it = %c0 to %n step %c1 iter_args(%x = %a) -> (memref<?xi64>) {
    %t = memref.alloc(%c3) : memref<?xi64>
    func.call @axpc(%x, %t, %k1, %k1) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
    scf.yield %t : memref<?xi64>
  }
  func.call @addto(%a, %r) : (memref<?xi64>, memref<?xi64>) -> ()
  func.call @print(%r) : (memref<?xi64>) -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  func.call @smooth(%c0, %c4) : (index, index) -> ()
  func.call @smooth(%c1, %c4) : (index, index) -> ()
  func.call @smooth(%c3, %c5) : (index, index) -> ()
  func.call @rotate3(%c0) : (index) -> ()
  func.call @rotate3(%c1) : (index) -> ()
  func.call @rotate3(%c4) : (index) -> ()
  func.call @keep(%c0) : (index) -> ()
  func.call @keep(%c3) : (index) -> ()
  return
}
