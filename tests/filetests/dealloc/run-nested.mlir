// RUN: onnxc opt %s -p "dealloc-pipeline" | filecheck
// RUN: onnxc opt %s -p "dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// @pick returns an scf.if result that is either a select of two owned
// buffers or a fresh one: the caller must own it in every case, and the
// buffer not returned is freed. @whileswap carries two buffers through
// scf.while, swapping them (no allocation in the loop). @nested has an
// scf.if nested in an scf.if nested in a loop, yielding the carried buffer
// or a fresh one.
// pick: a = 1s, b = 2s, fresh = 3s (4 elements): (c,d) = (1,1): 4, (0,1): 8,
//   (1,0): 12, (0,0): 12.
// whileswap(n): x0 = 1s, y0 = 2s; n even: 4, odd: 8 (n = 0, 1, 4).
// nested(n): x += 10 (fresh) when i % 6 == 0: n=0: 0, n=6: 40, n=7: 80.
// RUNOUT: 4
// RUNOUT-NEXT: 8
// RUNOUT-NEXT: 12
// RUNOUT-NEXT: 12
// RUNOUT-NEXT: 4
// RUNOUT-NEXT: 8
// RUNOUT-NEXT: 4
// RUNOUT-NEXT: 0
// RUNOUT-NEXT: 40
// RUNOUT-NEXT: 80

// CHECK-LABEL: func.func @pick
// CHECK:       scf.if {{.*}} -> (memref<4xi64>, i1)
// CHECK-NOT:   bufferization.clone
// CHECK:       return
// CHECK-LABEL: func.func @whileswap
// CHECK:       scf.while {{.*}} -> (memref<4xi64>, memref<4xi64>, index, i1, i1)
// CHECK-LABEL: func.func @nested
// CHECK:         scf.if {{.*}} -> (memref<4xi64>, i1)
// CHECK:           scf.if {{.*}} -> (memref<4xi64>, i1)
func.func private @printI64(i64)
func.func private @printNewline()

func.func @print(%m: memref<4xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0 : i64
  %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %z) -> (i64) {
    %v = memref.load %m[%i] : memref<4xi64>
    %t = arith.addi %acc, %v : i64
    scf.yield %t : i64
  }
  func.call @printI64(%s) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}

func.func @filled(%v: i64) -> memref<4xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %m = memref.alloc() : memref<4xi64>
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %v, %m[%i] : memref<4xi64>
  }
  return %m : memref<4xi64>
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

func.func @pick(%c: i1, %d: i1) -> memref<4xi64> {
  %i1 = arith.constant 1 : i64
  %i2 = arith.constant 2 : i64
  %i3 = arith.constant 3 : i64
  %a = func.call @filled(%i1) : (i64) -> memref<4xi64>
  %b = func.call @filled(%i2) : (i64) -> memref<4xi64>
  %s = arith.select %c, %a, %b : memref<4xi64>
  %r = scf.if %d -> (memref<4xi64>) {
    scf.yield %s : memref<4xi64>
  } else {
    %f = func.call @filled(%i3) : (i64) -> memref<4xi64>
    scf.yield %f : memref<4xi64>
  }
  return %r : memref<4xi64>
}

func.func @whileswap(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %i1 = arith.constant 1 : i64
  %i2 = arith.constant 2 : i64
  %x0 = func.call @filled(%i1) : (i64) -> memref<4xi64>
  %y0 = func.call @filled(%i2) : (i64) -> memref<4xi64>
  %r:3 = scf.while (%x = %x0, %y = %y0, %i = %c0) : (memref<4xi64>, memref<4xi64>, index) -> (memref<4xi64>, memref<4xi64>, index) {
    %go = arith.cmpi ult, %i, %n : index
    scf.condition(%go) %x, %y, %i : memref<4xi64>, memref<4xi64>, index
  } do {
  ^bb0(%x: memref<4xi64>, %y: memref<4xi64>, %i: index):
    %j = arith.addi %i, %c1 : index
    scf.yield %y, %x, %j : memref<4xi64>, memref<4xi64>, index
  }
  func.call @print(%r#0) : (memref<4xi64>) -> ()
  return
}

func.func @nested(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0 : i64
  %k = arith.constant 10 : i64
  %x0 = func.call @filled(%z) : (i64) -> memref<4xi64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %x0) -> (memref<4xi64>) {
    %m3 = arith.remui %i, %c3 : index
    %by3 = arith.cmpi eq, %m3, %c0 : index
    %y = scf.if %by3 -> (memref<4xi64>) {
      %m2 = arith.remui %i, %c2 : index
      %by2 = arith.cmpi eq, %m2, %c0 : index
      %w = scf.if %by2 -> (memref<4xi64>) {
        %f = func.call @plus(%x, %k) : (memref<4xi64>, i64) -> memref<4xi64>
        scf.yield %f : memref<4xi64>
      } else {
        scf.yield %x : memref<4xi64>
      }
      scf.yield %w : memref<4xi64>
    } else {
      scf.yield %x : memref<4xi64>
    }
    scf.yield %y : memref<4xi64>
  }
  func.call @print(%r) : (memref<4xi64>) -> ()
  return
}

func.func @main() {
  %t = arith.constant true
  %f = arith.constant false
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %p0 = func.call @pick(%t, %t) : (i1, i1) -> memref<4xi64>
  func.call @print(%p0) : (memref<4xi64>) -> ()
  %p1 = func.call @pick(%f, %t) : (i1, i1) -> memref<4xi64>
  func.call @print(%p1) : (memref<4xi64>) -> ()
  %p2 = func.call @pick(%t, %f) : (i1, i1) -> memref<4xi64>
  func.call @print(%p2) : (memref<4xi64>) -> ()
  %p3 = func.call @pick(%f, %f) : (i1, i1) -> memref<4xi64>
  func.call @print(%p3) : (memref<4xi64>) -> ()
  func.call @whileswap(%c0) : (index) -> ()
  func.call @whileswap(%c1) : (index) -> ()
  func.call @whileswap(%c4) : (index) -> ()
  func.call @nested(%c0) : (index) -> ()
  func.call @nested(%c6) : (index) -> ()
  func.call @nested(%c7) : (index) -> ()
  return
}
