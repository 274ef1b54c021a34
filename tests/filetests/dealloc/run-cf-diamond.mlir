// RUN: onnxc opt %s -p "dealloc-pipeline" | filecheck
// RUN: onnxc opt %s -p "dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// Executed: memrefs crossing cf.cond_br / cf.br diamonds. @diamond passes
// either its buffer or a fresh one to the join; @three passes two arguments
// that may be one buffer (flags true twice: the join frees it once); @choose
// returns a block argument (retained by the final dealloc); @multiret has two
// returns, one copying the caller's buffer.
// diamond(c, n): sum over i < n of (c ? 2i : i) + 1: (1,5) 25, (0,5) 15, (1,0) 0.
// three(c, d, 4), a = [0..3]: (1,1) 2a = 12, (1,0) 3a + a = 24, (0,_) 2(a+10) = 92; n=0: 0.
// choose(c, 4): c: a = 6, else a + 5 = 26. multiret(c, m = [1..4]): c: 10, else 20; m: 10.
// Printed sums, in call order:
// RUNOUT: 25
// RUNOUT-NEXT: 15
// RUNOUT-NEXT: 0
// RUNOUT-NEXT: 12
// RUNOUT-NEXT: 24
// RUNOUT-NEXT: 92
// RUNOUT-NEXT: 0
// RUNOUT-NEXT: 6
// RUNOUT-NEXT: 26
// RUNOUT-NEXT: 10
// RUNOUT-NEXT: 10
// RUNOUT-NEXT: 20
// RUNOUT-NEXT: 10

// CHECK-LABEL: func.func @diamond
// CHECK:       cf.cond_br %{{.*}}, ^bb1, ^bb2(%{{.*}}, %{{.*}} : memref<?xi64>, i1)
// CHECK:     ^bb2(%{{.*}}: memref<?xi64>, %{{.*}}: i1):
// CHECK-LABEL: func.func @multiret
// CHECK:       bufferization.clone

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

// a[i] = i; taken: b = 2a; join: s = r + 1.
func.func @diamond(%c: i1, %n: index) {
  %k0 = arith.constant 0 : i64
  %k1 = arith.constant 1 : i64
  %k2 = arith.constant 2 : i64
  %a = memref.alloc(%n) : memref<?xi64>
  func.call @iota(%a, %k1, %k0) : (memref<?xi64>, i64, i64) -> ()
  cf.cond_br %c, ^dbl, ^join(%a : memref<?xi64>)
^dbl:
  %b = memref.alloc(%n) : memref<?xi64>
  func.call @axpc(%a, %b, %k2, %k0) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
  cf.br ^join(%b : memref<?xi64>)
^join(%r: memref<?xi64>):
  %s = memref.alloc(%n) : memref<?xi64>
  func.call @axpc(%r, %s, %k1, %k1) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
  func.call @print(%s) : (memref<?xi64>) -> ()
  return
}

// Two memref block arguments that may be the same buffer, from three paths.
func.func @three(%c: i1, %d: i1, %n: index) -> memref<?xi64> {
  %k0 = arith.constant 0 : i64
  %k1 = arith.constant 1 : i64
  %k3 = arith.constant 3 : i64
  %k10 = arith.constant 10 : i64
  %a = memref.alloc(%n) : memref<?xi64>
  func.call @iota(%a, %k1, %k0) : (memref<?xi64>, i64, i64) -> ()
  cf.cond_br %c, ^left, ^right
^left:
  cf.cond_br %d, ^join(%a, %a : memref<?xi64>, memref<?xi64>), ^fresh
^fresh:
  %b = memref.alloc(%n) : memref<?xi64>
  func.call @axpc(%a, %b, %k3, %k0) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
  cf.br ^join(%b, %a : memref<?xi64>, memref<?xi64>)
^right:
  %e = memref.alloc(%n) : memref<?xi64>
  func.call @axpc(%a, %e, %k1, %k10) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
  cf.br ^join(%e, %e : memref<?xi64>, memref<?xi64>)
^join(%p: memref<?xi64>, %q: memref<?xi64>):
  %s = memref.alloc(%n) : memref<?xi64>
  func.call @axpc(%p, %s, %k1, %k0) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
  func.call @addto(%q, %s) : (memref<?xi64>, memref<?xi64>) -> ()
  return %s : memref<?xi64>
}

// Returns a block argument: either the first buffer or a second one.
func.func @choose(%c: i1, %n: index) -> memref<?xi64> {
  %k0 = arith.constant 0 : i64
  %k1 = arith.constant 1 : i64
  %k5 = arith.constant 5 : i64
  %a = memref.alloc(%n) : memref<?xi64>
  func.call @iota(%a, %k1, %k0) : (memref<?xi64>, i64, i64) -> ()
  cf.cond_br %c, ^ret(%a : memref<?xi64>), ^other
^other:
  %b = memref.alloc(%n) : memref<?xi64>
  func.call @axpc(%a, %b, %k1, %k5) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
  cf.br ^ret(%b : memref<?xi64>)
^ret(%r: memref<?xi64>):
  return %r : memref<?xi64>
}

// Two returns: the caller's buffer (copied) or a fresh one.
func.func @multiret(%c: i1, %m: memref<?xi64>) -> memref<?xi64> {
  %c0 = arith.constant 0 : index
  %k0 = arith.constant 0 : i64
  %k2 = arith.constant 2 : i64
  cf.cond_br %c, ^same, ^fresh
^same:
  return %m : memref<?xi64>
^fresh:
  %n = memref.dim %m, %c0 : memref<?xi64>
  %b = memref.alloc(%n) : memref<?xi64>
  func.call @axpc(%m, %b, %k2, %k0) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
  return %b : memref<?xi64>
}

func.func @show_three(%c: i1, %d: i1, %n: index) {
  %r = func.call @three(%c, %d, %n) : (i1, i1, index) -> memref<?xi64>
  func.call @print(%r) : (memref<?xi64>) -> ()
  return
}

func.func @show_choose(%c: i1, %n: index) {
  %r = func.call @choose(%c, %n) : (i1, index) -> memref<?xi64>
  func.call @print(%r) : (memref<?xi64>) -> ()
  return
}

func.func @show_multiret(%c: i1, %n: index) {
  %k1 = arith.constant 1 : i64
  %m = memref.alloc(%n) : memref<?xi64>
  func.call @iota(%m, %k1, %k1) : (memref<?xi64>, i64, i64) -> ()
  %r = func.call @multiret(%c, %m) : (i1, memref<?xi64>) -> memref<?xi64>
  func.call @print(%r) : (memref<?xi64>) -> ()
  func.call @print(%m) : (memref<?xi64>) -> ()
  return
}

func.func @main() {
  %t = arith.constant true
  %f = arith.constant false
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  func.call @diamond(%t, %c5) : (i1, index) -> ()
  func.call @diamond(%f, %c5) : (i1, index) -> ()
  func.call @diamond(%t, %c0) : (i1, index) -> ()
  func.call @show_three(%t, %t, %c4) : (i1, i1, index) -> ()
  func.call @show_three(%t, %f, %c4) : (i1, i1, index) -> ()
  func.call @show_three(%f, %t, %c4) : (i1, i1, index) -> ()
  func.call @show_three(%t, %f, %c0) : (i1, i1, index) -> ()
  func.call @show_choose(%t, %c4) : (i1, index) -> ()
  func.call @show_choose(%f, %c4) : (i1, index) -> ()
  func.call @show_multiret(%t, %c4) : (i1, index) -> ()
  func.call @show_multiret(%f, %c4) : (i1, index) -> ()
  return
}
