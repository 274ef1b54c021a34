// RUN: onnxc opt %s -p "dealloc-pipeline" | filecheck
// RUN: onnxc opt %s -p "dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT
// RUN: onnxc opt %s -p "dealloc-pipeline,canonicalize,cse" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// Executed: loops built from cf back edges (upstream rejects these).
// @swap carries two buffers and swaps them, one replaced by a fresh x + 1;
// @grow doubles a buffer (fresh, copied through a subview) until it holds
// >= n elements and returns it; @grow_realloc reallocs inside the body
// block; @early leaves the loop from its middle carrying the buffer.
// swap(n, 4), x0 = 1s, y0 = 2s, (x, y) -> (y, x + 1): n=0 4, 1 8, 2 8, 5 16; len 0: 0.
// grow(n): 1s, capacity doubled from 1: n=1 1, 5 8, 33 64.
// grow_realloc(n): sum over cap = 1, 2, 4.. < n of (sum(0..cap) + cap): n=1 0, 9 50.
// early(n, k): x = 0s (4), x += i for i < min(n, k): (5,9) 40, (5,2) 4, (5,0) 0, (0,0) 0.
// Printed sums, in call order:
// RUNOUT: 4
// RUNOUT-NEXT: 8
// RUNOUT-NEXT: 8
// RUNOUT-NEXT: 16
// RUNOUT-NEXT: 0
// RUNOUT-NEXT: 1
// RUNOUT-NEXT: 8
// RUNOUT-NEXT: 64
// RUNOUT-NEXT: 0
// RUNOUT-NEXT: 50
// RUNOUT-NEXT: 40
// RUNOUT-NEXT: 4
// RUNOUT-NEXT: 0
// RUNOUT-NEXT: 0

// CHECK-LABEL: func.func @swap
// CHECK:       cf.br ^bb1(%{{.*}} : index, memref<?xi64>, memref<?xi64>, i1, i1)
// CHECK:       bufferization.dealloc ({{.*}}) if ({{.*}}) retain ({{.*}})
// CHECK-NEXT:  cf.br ^bb1

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

// A loop from back edges swapping two buffers; one is replaced by a fresh
// buffer every iteration: (x, y) -> (y, x + 1).
func.func @swap(%n: index, %len: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k0 = arith.constant 0 : i64
  %k1 = arith.constant 1 : i64
  %k2 = arith.constant 2 : i64
  %a = memref.alloc(%len) : memref<?xi64>
  %b = memref.alloc(%len) : memref<?xi64>
  func.call @iota(%a, %k0, %k1) : (memref<?xi64>, i64, i64) -> ()
  func.call @iota(%b, %k0, %k2) : (memref<?xi64>, i64, i64) -> ()
  cf.br ^head(%c0, %a, %b : index, memref<?xi64>, memref<?xi64>)
^head(%i: index, %x: memref<?xi64>, %y: memref<?xi64>):
  %go = arith.cmpi slt, %i, %n : index
  cf.cond_br %go, ^body, ^exit
^body:
  %t = memref.alloc(%len) : memref<?xi64>
  func.call @axpc(%x, %t, %k1, %k1) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
  %i2 = arith.addi %i, %c1 : index
  cf.br ^head(%i2, %y, %t : index, memref<?xi64>, memref<?xi64>)
^exit:
  func.call @print(%x) : (memref<?xi64>) -> ()
  return
}

// Growth: a buffer doubled (fresh, copied, 1s appended) until it holds
// at least %n elements; returned to the caller.
func.func @grow(%n: index) -> memref<?xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %k1 = arith.constant 1 : i64
  %a = memref.alloc(%c1) : memref<?xi64>
  memref.store %k1, %a[%c0] : memref<?xi64>
  cf.br ^head(%a : memref<?xi64>)
^head(%x: memref<?xi64>):
  %cap = memref.dim %x, %c0 : memref<?xi64>
  %small = arith.cmpi slt, %cap, %n : index
  cf.cond_br %small, ^body, ^exit
^body:
  %cap2 = arith.muli %cap, %c2 : index
  %y = memref.alloc(%cap2) : memref<?xi64>
  scf.for %i = %c0 to %cap2 step %c1 {
    memref.store %k1, %y[%i] : memref<?xi64>
  }
  %lo = memref.subview %y[0] [%cap] [1] : memref<?xi64> to memref<?xi64, strided<[1]>>
  memref.copy %x, %lo : memref<?xi64> to memref<?xi64, strided<[1]>>
  cf.br ^head(%y : memref<?xi64>)
^exit:
  return %x : memref<?xi64>
}

// Growth with memref.realloc inside one block of a loop.
func.func @grow_realloc(%n: index) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k1 = arith.constant 1 : i64
  %k0 = arith.constant 0 : i64
  cf.br ^head(%c1, %k0 : index, i64)
^head(%cap: index, %acc: i64):
  %small = arith.cmpi slt, %cap, %n : index
  cf.cond_br %small, ^body, ^exit
^body:
  %a = memref.alloc(%cap) : memref<?xi64>
  func.call @iota(%a, %k1, %k0) : (memref<?xi64>, i64, i64) -> ()
  %cap2 = arith.addi %cap, %cap : index
  %b = memref.realloc %a(%cap2) : memref<?xi64> to memref<?xi64>
  scf.for %i = %cap to %cap2 step %c1 {
    memref.store %k1, %b[%i] : memref<?xi64>
  }
  %s = func.call @sum(%b) : (memref<?xi64>) -> i64
  %acc2 = arith.addi %acc, %s : i64
  cf.br ^head(%cap2, %acc2 : index, i64)
^exit:
  return %acc : i64
}

// A loop left from its middle (a break) carrying a buffer: acc = acc + i
// (fresh each iteration) until i == %k or i == %n.
func.func @early(%n: index, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %k0 = arith.constant 0 : i64
  %k1 = arith.constant 1 : i64
  %a = memref.alloc(%c4) : memref<?xi64>
  func.call @iota(%a, %k0, %k0) : (memref<?xi64>, i64, i64) -> ()
  cf.br ^head(%c0, %a : index, memref<?xi64>)
^head(%i: index, %x: memref<?xi64>):
  %go = arith.cmpi slt, %i, %n : index
  cf.cond_br %go, ^body, ^done(%x : memref<?xi64>)
^body:
  %stop = arith.cmpi eq, %i, %k : index
  cf.cond_br %stop, ^done(%x : memref<?xi64>), ^step
^step:
  %t = memref.alloc(%c4) : memref<?xi64>
  %iv = arith.index_cast %i : index to i64
  func.call @axpc(%x, %t, %k1, %iv) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
  %i2 = arith.addi %i, %c1 : index
  cf.br ^head(%i2, %t : index, memref<?xi64>)
^done(%r: memref<?xi64>):
  func.call @print(%r) : (memref<?xi64>) -> ()
  return
}

func.func @show_grow(%n: index) {
  %r = func.call @grow(%n) : (index) -> memref<?xi64>
  func.call @print(%r) : (memref<?xi64>) -> ()
  return
}

func.func @show_i64(%v: i64) {
  func.call @printI64(%v) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c9 = arith.constant 9 : index
  %c33 = arith.constant 33 : index
  func.call @swap(%c0, %c4) : (index, index) -> ()
  func.call @swap(%c1, %c4) : (index, index) -> ()
  func.call @swap(%c2, %c4) : (index, index) -> ()
  func.call @swap(%c5, %c4) : (index, index) -> ()
  func.call @swap(%c5, %c0) : (index, index) -> ()
  func.call @show_grow(%c1) : (index) -> ()
  func.call @show_grow(%c5) : (index) -> ()
  func.call @show_grow(%c33) : (index) -> ()
  %g1 = func.call @grow_realloc(%c1) : (index) -> i64
  func.call @show_i64(%g1) : (i64) -> ()
  %g2 = func.call @grow_realloc(%c9) : (index) -> i64
  func.call @show_i64(%g2) : (i64) -> ()
  func.call @early(%c5, %c9) : (index, index) -> ()
  func.call @early(%c5, %c2) : (index, index) -> ()
  func.call @early(%c5, %c0) : (index, index) -> ()
  func.call @early(%c0, %c0) : (index, index) -> ()
  return
}
