// RUN: onnxc opt %s -p "dealloc-pipeline" | filecheck
// RUN: onnxc opt %s -p "dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// Loop-carried buffers. @swap: two iter_args swapped every iteration, one
// of them replaced by a fresh buffer; both inits die at the loop, so the
// loop takes over their ownership (flags %true), and the body frees the
// buffer it stops carrying. @grow: scf.while doubling a buffer until it
// holds >= %n elements. @alternate: a nested scf.if in a loop yields either
// the carried buffer or a fresh one.
// swap(n) = sum of x after n steps, x0 = [1,1,1,1], y0 = [2,2,2,2],
//   step: (x, y) -> (y, x + 1): n=0: 4, n=1: 8, n=2: 8, n=5: 16.
// grow(n): capacity 1 doubled while < n, filled with 1s: n=1: 1, n=5: 8, n=33: 64.
// alternate(n): x0[i] = 0; even i: fresh buffer x+10, odd: same buffer:
//   n=0: 0, n=3: 80, n=4: 80.
// RUNOUT: 4
// RUNOUT-NEXT: 8
// RUNOUT-NEXT: 8
// RUNOUT-NEXT: 16
// RUNOUT-NEXT: 1
// RUNOUT-NEXT: 8
// RUNOUT-NEXT: 64
// RUNOUT-NEXT: 0
// RUNOUT-NEXT: 80
// RUNOUT-NEXT: 80

// CHECK-LABEL: func.func @swap
// CHECK:       scf.for {{.*}} iter_args({{.*}}) -> (memref<4xi64>, memref<4xi64>, i1, i1)
// CHECK:         bufferization.dealloc
// CHECK:         scf.yield {{.*}} : memref<4xi64>, memref<4xi64>, i1, i1
// CHECK-LABEL: func.func @grow
// CHECK:       scf.while {{.*}} -> (memref<?xi64>, i1)
// CHECK:         scf.condition
// CHECK-LABEL: func.func @alternate
// CHECK:         scf.if {{.*}} -> (memref<4xi64>, i1)
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

func.func @fill(%m: memref<4xi64>, %v: i64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %v, %m[%i] : memref<4xi64>
  }
  return
}

func.func @plus(%m: memref<4xi64>, %k: i64) -> memref<4xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = memref.alloc() : memref<4xi64>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %m[%i] : memref<4xi64>
    %w = arith.addi %v, %k : i64
    memref.store %w, %r[%i] : memref<4xi64>
  }
  return %r : memref<4xi64>
}

func.func @swap(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %i1 = arith.constant 1 : i64
  %i2 = arith.constant 2 : i64
  %x0 = memref.alloc() : memref<4xi64>
  func.call @fill(%x0, %i1) : (memref<4xi64>, i64) -> ()
  %y0 = memref.alloc() : memref<4xi64>
  func.call @fill(%y0, %i2) : (memref<4xi64>, i64) -> ()
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%x = %x0, %y = %y0) -> (memref<4xi64>, memref<4xi64>) {
    %z = func.call @plus(%x, %i1) : (memref<4xi64>, i64) -> memref<4xi64>
    scf.yield %y, %z : memref<4xi64>, memref<4xi64>
  }
  %d = memref.cast %r#0 : memref<4xi64> to memref<?xi64>
  func.call @print(%d) : (memref<?xi64>) -> ()
  return
}

func.func @grow(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i64
  %b0 = memref.alloc(%c1) : memref<?xi64>
  %r = scf.while (%b = %b0) : (memref<?xi64>) -> memref<?xi64> {
    %cap = memref.dim %b, %c0 : memref<?xi64>
    %small = arith.cmpi ult, %cap, %n : index
    scf.condition(%small) %b : memref<?xi64>
  } do {
  ^bb0(%b: memref<?xi64>):
    %cap = memref.dim %b, %c0 : memref<?xi64>
    %cap2 = arith.addi %cap, %cap : index
    %nb = memref.alloc(%cap2) : memref<?xi64>
    scf.yield %nb : memref<?xi64>
  }
  %cap = memref.dim %r, %c0 : memref<?xi64>
  scf.for %i = %c0 to %cap step %c1 {
    memref.store %one, %r[%i] : memref<?xi64>
  }
  func.call @print(%r) : (memref<?xi64>) -> ()
  return
}

func.func @alternate(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0 : i64
  %k = arith.constant 10 : i64
  %x0 = memref.alloc() : memref<4xi64>
  func.call @fill(%x0, %z) : (memref<4xi64>, i64) -> ()
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %x0) -> (memref<4xi64>) {
    %rem = arith.remui %i, %c2 : index
    %even = arith.cmpi eq, %rem, %c0 : index
    %y = scf.if %even -> (memref<4xi64>) {
      %f = func.call @plus(%x, %k) : (memref<4xi64>, i64) -> memref<4xi64>
      scf.yield %f : memref<4xi64>
    } else {
      scf.yield %x : memref<4xi64>
    }
    scf.yield %y : memref<4xi64>
  }
  %d = memref.cast %r : memref<4xi64> to memref<?xi64>
  func.call @print(%d) : (memref<?xi64>) -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c33 = arith.constant 33 : index
  func.call @swap(%c0) : (index) -> ()
  func.call @swap(%c1) : (index) -> ()
  func.call @swap(%c2) : (index) -> ()
  func.call @swap(%c5) : (index) -> ()
  func.call @grow(%c1) : (index) -> ()
  func.call @grow(%c5) : (index) -> ()
  func.call @grow(%c33) : (index) -> ()
  func.call @alternate(%c0) : (index) -> ()
  func.call @alternate(%c3) : (index) -> ()
  func.call @alternate(%c4) : (index) -> ()
  return
}
