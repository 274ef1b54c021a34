// RUN: onnxc opt %s -p "dealloc-pipeline" | filecheck
// RUN: onnxc opt %s -p "dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// Executed: structured control flow inside cf loops, and views crossing
// blocks. @mixed: a cf loop whose body holds an scf.if yielding the carried
// buffer or a fresh one, then a cf diamond; @inner: an scf.for carrying a
// buffer inside a cf loop; @window: a subview of a dynamically sized buffer
// chosen per branch, read after the join (the buffer outlives the view).
// mixed(n, d), x0 = [0, 1, 2]; even i: x + 10 fresh; i == d: x * 2 fresh:
//   (0,9) 3, (4,9) 63, (4,1) 96, (3,2) 126.
// inner(n, m) = 2nm: (0,3) 0, (3,0) 0, (3,2) 12.
// window(c, n) over a = [0..n): c: a0 + a1; else the last two: (1,7) 1, (0,7) 11, (0,2) 1.
// Printed sums, in call order:
// RUNOUT: 3
// RUNOUT-NEXT: 63
// RUNOUT-NEXT: 96
// RUNOUT-NEXT: 126
// RUNOUT-NEXT: 0
// RUNOUT-NEXT: 0
// RUNOUT-NEXT: 12
// RUNOUT-NEXT: 1
// RUNOUT-NEXT: 11
// RUNOUT-NEXT: 1

// CHECK-LABEL: func.func @mixed
// CHECK:       scf.if %{{.*}} -> (memref<?xi64>, i1)
// CHECK:       cf.cond_br %{{.*}}, ^bb3, ^bb4(%{{.*}}, %{{.*}} : memref<?xi64>, i1)

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

// A cf loop whose body holds an scf.if yielding the carried buffer or a
// fresh one (x + 10 on even i), then a cf diamond replacing it by x * 2
// when i == %d.
func.func @mixed(%n: index, %d: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %k0 = arith.constant 0 : i64
  %k1 = arith.constant 1 : i64
  %k2 = arith.constant 2 : i64
  %k10 = arith.constant 10 : i64
  %a = memref.alloc(%c3) : memref<?xi64>
  func.call @iota(%a, %k1, %k0) : (memref<?xi64>, i64, i64) -> ()
  cf.br ^head(%c0, %a : index, memref<?xi64>)
^head(%i: index, %x: memref<?xi64>):
  %go = arith.cmpi slt, %i, %n : index
  cf.cond_br %go, ^body, ^exit
^body:
  %r = arith.remui %i, %c2 : index
  %even = arith.cmpi eq, %r, %c0 : index
  %y = scf.if %even -> (memref<?xi64>) {
    %t = memref.alloc(%c3) : memref<?xi64>
    func.call @axpc(%x, %t, %k1, %k10) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
    scf.yield %t : memref<?xi64>
  } else {
    scf.yield %x : memref<?xi64>
  }
  %hit = arith.cmpi eq, %i, %d : index
  cf.cond_br %hit, ^dbl, ^latch(%y : memref<?xi64>)
^dbl:
  %z = memref.alloc(%c3) : memref<?xi64>
  func.call @axpc(%y, %z, %k2, %k0) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
  cf.br ^latch(%z : memref<?xi64>)
^latch(%w: memref<?xi64>):
  %i2 = arith.addi %i, %c1 : index
  cf.br ^head(%i2, %w : index, memref<?xi64>)
^exit:
  func.call @print(%x) : (memref<?xi64>) -> ()
  return
}

// An scf.for carrying a buffer inside one block of a cf loop: the outer
// loop runs %n times, the inner %m times, each inner step x -> x + 1 fresh.
func.func @inner(%n: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %k0 = arith.constant 0 : i64
  %k1 = arith.constant 1 : i64
  %a = memref.alloc(%c2) : memref<?xi64>
  func.call @iota(%a, %k0, %k0) : (memref<?xi64>, i64, i64) -> ()
  cf.br ^head(%c0, %a : index, memref<?xi64>)
^head(%i: index, %x: memref<?xi64>):
  %go = arith.cmpi slt, %i, %n : index
  cf.cond_br %go, ^body, ^exit
^body:
  %y = scf.for %j = %c0 to %m step %c1 iter_args(%acc = %x) -> (memref<?xi64>) {
    %t = memref.alloc(%c2) : memref<?xi64>
    func.call @axpc(%acc, %t, %k1, %k1) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
    scf.yield %t : memref<?xi64>
  }
  %i2 = arith.addi %i, %c1 : index
  cf.br ^head(%i2, %y : index, memref<?xi64>)
^exit:
  func.call @print(%x) : (memref<?xi64>) -> ()
  return
}

// Views crossing blocks: a window [off, off + 2) of a buffer of dynamic
// size, chosen per branch, read after the join; the buffer stays alive.
func.func @window(%c: i1, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %k0 = arith.constant 0 : i64
  %k1 = arith.constant 1 : i64
  %a = memref.alloc(%n) : memref<?xi64>
  func.call @iota(%a, %k1, %k0) : (memref<?xi64>, i64, i64) -> ()
  cf.cond_br %c, ^lo, ^hi
^lo:
  %v = memref.subview %a[0] [2] [1] : memref<?xi64> to memref<2xi64, strided<[1]>>
  %vc = memref.cast %v : memref<2xi64, strided<[1]>> to memref<?xi64, strided<[?], offset: ?>>
  cf.br ^join(%vc : memref<?xi64, strided<[?], offset: ?>>)
^hi:
  %off = arith.subi %n, %c2 : index
  %w = memref.subview %a[%off] [2] [1] : memref<?xi64> to memref<2xi64, strided<[1], offset: ?>>
  %wc = memref.cast %w : memref<2xi64, strided<[1], offset: ?>> to memref<?xi64, strided<[?], offset: ?>>
  cf.br ^join(%wc : memref<?xi64, strided<[?], offset: ?>>)
^join(%s: memref<?xi64, strided<[?], offset: ?>>):
  %b = memref.alloc(%c2) : memref<?xi64>
  memref.copy %s, %b : memref<?xi64, strided<[?], offset: ?>> to memref<?xi64>
  func.call @print(%b) : (memref<?xi64>) -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c7 = arith.constant 7 : index
  %c9 = arith.constant 9 : index
  %t = arith.constant true
  %f = arith.constant false
  func.call @mixed(%c0, %c9) : (index, index) -> ()
  func.call @mixed(%c4, %c9) : (index, index) -> ()
  func.call @mixed(%c4, %c1) : (index, index) -> ()
  func.call @mixed(%c3, %c2) : (index, index) -> ()
  func.call @inner(%c0, %c3) : (index, index) -> ()
  func.call @inner(%c3, %c0) : (index, index) -> ()
  func.call @inner(%c3, %c2) : (index, index) -> ()
  func.call @window(%t, %c7) : (i1, index) -> ()
  func.call @window(%f, %c7) : (i1, index) -> ()
  func.call @window(%f, %c2) : (i1, index) -> ()
  return
}
