// RUN: onnxc opt %s -p "dealloc-pipeline" | filecheck
// RUN: onnxc opt %s -p "dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT
// RUN: onnxc opt %s -p "dealloc-pipeline,canonicalize,cse" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// Executed: functions returning buffers, called in a loop: an owned
// allocation (handed over), the caller's buffer (copied), a select of two
// owned allocations (the other freed), one buffer as two results (the second
// copied), an scf.if yielding the caller's buffer or a fresh one (copied
// only when it is the caller's), a reshape of an owned allocation (handed
// over as is).
// rounds(k) = sum over i < k of: f = [j + 5], p = f, s = even i ? [j] : [2j],
// t = [6j], q = even i ? p + 1 : p, v = [j + 5] (j < i): k=0 0, 1 0,
// 4 169, 7 830.
// Printed sums, in call order:
// RUNOUT: 0
// RUNOUT-NEXT: 0
// RUNOUT-NEXT: 169
// RUNOUT-NEXT: 830

// CHECK-LABEL: func.func @pass
// CHECK:       bufferization.clone
// CHECK-LABEL: func.func @twice
// CHECK:       %[[C:.*]] = bufferization.clone %[[A:.*]] :
// CHECK:       return %[[A]], %[[C]]
// CHECK-LABEL: func.func @maybe
// CHECK:       %[[R:.*]]:2 = scf.if
// CHECK:       %[[W:.*]] = scf.if %[[R]]#1
// CHECK:         bufferization.clone %[[R]]#0
// CHECK:       return %[[W]]
// CHECK-LABEL: func.func @flat
// CHECK-NOT:   bufferization.clone
// CHECK:       %[[V:.*]] = memref.reinterpret_cast
// CHECK-NEXT:  return %[[V]]

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

// Functions returning buffers in every way the boundary ABI knows.
// @fresh: an owned allocation, handed over as is.
func.func @fresh(%n: index, %c: i64) -> memref<?xi64> {
  %k1 = arith.constant 1 : i64
  %a = memref.alloc(%n) : memref<?xi64>
  func.call @iota(%a, %k1, %c) : (memref<?xi64>, i64, i64) -> ()
  return %a : memref<?xi64>
}

// @pass: the caller's buffer: returned as a copy.
func.func @pass(%m: memref<?xi64>) -> memref<?xi64> {
  return %m : memref<?xi64>
}

// @pick: a select of two owned allocations: the other one is freed.
func.func @pick(%c: i1, %n: index) -> memref<?xi64> {
  %k0 = arith.constant 0 : i64
  %k1 = arith.constant 1 : i64
  %k2 = arith.constant 2 : i64
  %a = memref.alloc(%n) : memref<?xi64>
  %b = memref.alloc(%n) : memref<?xi64>
  func.call @iota(%a, %k1, %k0) : (memref<?xi64>, i64, i64) -> ()
  func.call @iota(%b, %k2, %k0) : (memref<?xi64>, i64, i64) -> ()
  %s = arith.select %c, %a, %b : memref<?xi64>
  return %s : memref<?xi64>
}

// @twice: one buffer as two results: the second becomes a copy.
func.func @twice(%n: index) -> (memref<?xi64>, memref<?xi64>) {
  %k3 = arith.constant 3 : i64
  %k0 = arith.constant 0 : i64
  %a = memref.alloc(%n) : memref<?xi64>
  func.call @iota(%a, %k3, %k0) : (memref<?xi64>, i64, i64) -> ()
  return %a, %a : memref<?xi64>, memref<?xi64>
}

// @maybe: an scf.if yielding the caller's buffer or a fresh one.
func.func @maybe(%c: i1, %m: memref<?xi64>) -> memref<?xi64> {
  %c0 = arith.constant 0 : index
  %k1 = arith.constant 1 : i64
  %r = scf.if %c -> (memref<?xi64>) {
    %n = memref.dim %m, %c0 : memref<?xi64>
    %b = memref.alloc(%n) : memref<?xi64>
    func.call @axpc(%m, %b, %k1, %k1) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
    scf.yield %b : memref<?xi64>
  } else {
    scf.yield %m : memref<?xi64>
  }
  return %r : memref<?xi64>
}

// @flat: a reshape of an owned allocation: handed over without a copy.
func.func @flat(%n: index) -> memref<?x1xi64> {
  %k1 = arith.constant 1 : i64
  %k5 = arith.constant 5 : i64
  %a = memref.alloc(%n) : memref<?xi64>
  func.call @iota(%a, %k1, %k5) : (memref<?xi64>, i64, i64) -> ()
  %v = memref.reinterpret_cast %a to offset: [0], sizes: [%n, 1], strides: [1, 1] : memref<?xi64> to memref<?x1xi64>
  return %v : memref<?x1xi64>
}

// The callers: a loop of %k rounds summing what each function returns
// for size i (round i), printing the total.
func.func @rounds(%k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0 : i64
  %k5 = arith.constant 5 : i64
  %tot = scf.for %i = %c0 to %k step %c1 iter_args(%acc = %z) -> (i64) {
    %f = func.call @fresh(%i, %k5) : (index, i64) -> memref<?xi64>
    %p = func.call @pass(%f) : (memref<?xi64>) -> memref<?xi64>
    %r = arith.remui %i, %c2 : index
    %even = arith.cmpi eq, %r, %c0 : index
    %s = func.call @pick(%even, %i) : (i1, index) -> memref<?xi64>
    %t:2 = func.call @twice(%i) : (index) -> (memref<?xi64>, memref<?xi64>)
    func.call @addto(%t#0, %t#1) : (memref<?xi64>, memref<?xi64>) -> ()
    %q = func.call @maybe(%even, %p) : (i1, memref<?xi64>) -> memref<?xi64>
    %s1 = func.call @sum(%f) : (memref<?xi64>) -> i64
    %s2 = func.call @sum(%p) : (memref<?xi64>) -> i64
    %s3 = func.call @sum(%s) : (memref<?xi64>) -> i64
    %s4 = func.call @sum(%t#1) : (memref<?xi64>) -> i64
    %s5 = func.call @sum(%q) : (memref<?xi64>) -> i64
    %v = func.call @flat(%i) : (index) -> memref<?x1xi64>
    %vf = memref.reinterpret_cast %v to offset: [0], sizes: [%i], strides: [1] : memref<?x1xi64> to memref<?xi64>
    %s6 = func.call @sum(%vf) : (memref<?xi64>) -> i64
    %a1 = arith.addi %acc, %s1 : i64
    %a2 = arith.addi %a1, %s2 : i64
    %a3 = arith.addi %a2, %s3 : i64
    %a4 = arith.addi %a3, %s4 : i64
    %a5 = arith.addi %a4, %s5 : i64
    %a6 = arith.addi %a5, %s6 : i64
    scf.yield %a6 : i64
  }
  func.call @printI64(%tot) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c7 = arith.constant 7 : index
  func.call @rounds(%c0) : (index) -> ()
  func.call @rounds(%c1) : (index) -> ()
  func.call @rounds(%c4) : (index) -> ()
  func.call @rounds(%c7) : (index) -> ()
  return
}
