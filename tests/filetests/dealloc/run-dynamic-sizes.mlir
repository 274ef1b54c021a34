// RUN: onnxc opt %s -p "dealloc-pipeline" | filecheck
// RUN: onnxc opt %s -p "dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// Executed: sizes known only at run time. @triangle allocates i elements in
// iteration i; @data_sizes reads each size from memory and allocates per
// branch of an scf.if; @loop_chain runs a chain of six buffers per
// iteration, which double buffering, buffer-reuse and hoisting turn into
// four allocations before the loop and none in it.
// triangle(n) = sum over i < n of i(i+1)/2: 0 0, 1 0, 6 35.
// data_sizes(4, c): c: sum over s = 1..4 of s(s-1)/2 = 10; else of 2s(2s-1) = 100; n=0: 0.
// loop_chain(n, len) = sum over j < len of (j + 6n): (0,4) 6, (3,4) 78, (6,1) 36.
// Printed sums, in call order:
// RUNOUT: 0
// RUNOUT-NEXT: 0
// RUNOUT-NEXT: 35
// RUNOUT-NEXT: 10
// RUNOUT-NEXT: 100
// RUNOUT-NEXT: 0
// RUNOUT-NEXT: 6
// RUNOUT-NEXT: 78
// RUNOUT-NEXT: 36

// CHECK-LABEL: func.func @loop_chain
// CHECK-COUNT-4: memref.alloc(
// CHECK:       scf.for
// CHECK-NOT:   memref.alloc(
// CHECK-LABEL: func.func @main

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

// Sizes known only at run time: a buffer of size i per iteration, a size
// read from memory (data-dependent), an scf.if allocating per branch with
// different sizes, and a loop chain of 6 buffers per iteration that
// buffer-reuse turns into two.
func.func @triangle(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i64
  %k1 = arith.constant 1 : i64
  %tot = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (i64) {
    %a = memref.alloc(%i) : memref<?xi64>
    func.call @iota(%a, %k1, %k1) : (memref<?xi64>, i64, i64) -> ()
    %s = func.call @sum(%a) : (memref<?xi64>) -> i64
    %t = arith.addi %acc, %s : i64
    scf.yield %t : i64
  }
  func.call @printI64(%tot) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}

// sizes[j] = j + 1; for each j: a buffer of sizes[j] elements.
func.func @data_sizes(%n: index, %c: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0 : i64
  %k1 = arith.constant 1 : i64
  %k2 = arith.constant 2 : i64
  %sizes = memref.alloc(%n) : memref<?xi64>
  func.call @iota(%sizes, %k1, %k1) : (memref<?xi64>, i64, i64) -> ()
  %tot = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %z) -> (i64) {
    %sz = memref.load %sizes[%j] : memref<?xi64>
    %len = arith.index_cast %sz : i64 to index
    %b = scf.if %c -> (memref<?xi64>) {
      %x = memref.alloc(%len) : memref<?xi64>
      func.call @iota(%x, %k1, %z) : (memref<?xi64>, i64, i64) -> ()
      scf.yield %x : memref<?xi64>
    } else {
      %len2 = arith.muli %len, %c2 : index
      %y = memref.alloc(%len2) : memref<?xi64>
      func.call @iota(%y, %k2, %z) : (memref<?xi64>, i64, i64) -> ()
      scf.yield %y : memref<?xi64>
    }
    %s = func.call @sum(%b) : (memref<?xi64>) -> i64
    %t = arith.addi %acc, %s : i64
    scf.yield %t : i64
  }
  func.call @printI64(%tot) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}

// Per iteration: x1 = x + 1, ..., x6 = x5 + 1 (all of size %len); x = x6.
func.func @loop_chain(%n: index, %len: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k0 = arith.constant 0 : i64
  %k1 = arith.constant 1 : i64
  %a = memref.alloc(%len) : memref<?xi64>
  func.call @iota(%a, %k1, %k0) : (memref<?xi64>, i64, i64) -> ()
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a) -> (memref<?xi64>) {
    %x1 = memref.alloc(%len) : memref<?xi64>
    func.call @axpc(%x, %x1, %k1, %k1) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
    %x2 = memref.alloc(%len) : memref<?xi64>
    func.call @axpc(%x1, %x2, %k1, %k1) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
    %x3 = memref.alloc(%len) : memref<?xi64>
    func.call @axpc(%x2, %x3, %k1, %k1) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
    %x4 = memref.alloc(%len) : memref<?xi64>
    func.call @axpc(%x3, %x4, %k1, %k1) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
    %x5 = memref.alloc(%len) : memref<?xi64>
    func.call @axpc(%x4, %x5, %k1, %k1) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
    %x6 = memref.alloc(%len) : memref<?xi64>
    func.call @axpc(%x5, %x6, %k1, %k1) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
    scf.yield %x6 : memref<?xi64>
  }
  func.call @print(%r) : (memref<?xi64>) -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %t = arith.constant true
  %f = arith.constant false
  func.call @triangle(%c0) : (index) -> ()
  func.call @triangle(%c1) : (index) -> ()
  func.call @triangle(%c6) : (index) -> ()
  func.call @data_sizes(%c4, %t) : (index, i1) -> ()
  func.call @data_sizes(%c4, %f) : (index, i1) -> ()
  func.call @data_sizes(%c0, %f) : (index, i1) -> ()
  func.call @loop_chain(%c0, %c4) : (index, index) -> ()
  func.call @loop_chain(%c3, %c4) : (index, index) -> ()
  func.call @loop_chain(%c6, %c1) : (index, index) -> ()
  return
}
