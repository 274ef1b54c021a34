// RUN: onnxc opt %s -p "dealloc-pipeline" | filecheck
// RUN: onnxc opt %s -p "dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// Executed: nested loops from back edges, both carrying one buffer, and a
// search loop with two exits passing different buffers to one block.
// nest(n, m), x0 = [0, 1, 2]; m times x + 1, then x * 2, n times:
//   (0,3) 3, (2,0) 12, (2,3) 66, (3,1) 66.
// search(n, lim): x = x + i until sum(x) > lim, else a zero buffer: (6,5) 6, (6,100) 0, (0,5) 0.
// Printed sums, in call order:
// RUNOUT: 3
// RUNOUT-NEXT: 12
// RUNOUT-NEXT: 66
// RUNOUT-NEXT: 66
// RUNOUT-NEXT: 6
// RUNOUT-NEXT: 0
// RUNOUT-NEXT: 0

// CHECK-LABEL: func.func @nest
// CHECK:       ^bb1(%{{.*}}: index, %{{.*}}: memref<?xi64>, %{{.*}}: i1):
// CHECK:       ^bb2(%{{.*}}: index, %{{.*}}: memref<?xi64>, %{{.*}}: i1):

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

// Two nested loops built from back edges, both carrying the same buffer:
// the inner loop replaces it m times by a fresh x + 1, the outer loop n
// times by a fresh x * 2 after the inner loop.
func.func @nest(%n: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %k0 = arith.constant 0 : i64
  %k1 = arith.constant 1 : i64
  %k2 = arith.constant 2 : i64
  %a = memref.alloc(%c3) : memref<?xi64>
  func.call @iota(%a, %k1, %k0) : (memref<?xi64>, i64, i64) -> ()
  cf.br ^outer(%c0, %a : index, memref<?xi64>)
^outer(%i: index, %x: memref<?xi64>):
  %go = arith.cmpi slt, %i, %n : index
  cf.cond_br %go, ^inner(%c0, %x : index, memref<?xi64>), ^exit
^inner(%j: index, %y: memref<?xi64>):
  %more = arith.cmpi slt, %j, %m : index
  cf.cond_br %more, ^step, ^latch
^step:
  %t = memref.alloc(%c3) : memref<?xi64>
  func.call @axpc(%y, %t, %k1, %k1) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
  %j2 = arith.addi %j, %c1 : index
  cf.br ^inner(%j2, %t : index, memref<?xi64>)
^latch:
  %u = memref.alloc(%c3) : memref<?xi64>
  func.call @axpc(%y, %u, %k2, %k0) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
  %i2 = arith.addi %i, %c1 : index
  cf.br ^outer(%i2, %u : index, memref<?xi64>)
^exit:
  func.call @print(%x) : (memref<?xi64>) -> ()
  return
}

// A search loop with two exits, each passing a different buffer: the
// running buffer (x = x + i) on a hit of sum > %lim, or a fresh zero
// buffer when the loop runs out.
func.func @search(%n: index, %lim: i64) -> memref<?xi64> {
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
  cf.cond_br %go, ^body, ^none
^body:
  %t = memref.alloc(%c2) : memref<?xi64>
  %iv = arith.index_cast %i : index to i64
  func.call @axpc(%x, %t, %k1, %iv) : (memref<?xi64>, memref<?xi64>, i64, i64) -> ()
  %s = func.call @sum(%t) : (memref<?xi64>) -> i64
  %hit = arith.cmpi sgt, %s, %lim : i64
  %i2 = arith.addi %i, %c1 : index
  cf.cond_br %hit, ^found(%t : memref<?xi64>), ^head(%i2, %t : index, memref<?xi64>)
^none:
  %z = memref.alloc(%c1) : memref<?xi64>
  func.call @iota(%z, %k0, %k0) : (memref<?xi64>, i64, i64) -> ()
  cf.br ^found(%z : memref<?xi64>)
^found(%r: memref<?xi64>):
  return %r : memref<?xi64>
}

func.func @show_search(%n: index, %lim: i64) {
  %r = func.call @search(%n, %lim) : (index, i64) -> memref<?xi64>
  func.call @print(%r) : (memref<?xi64>) -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %l5 = arith.constant 5 : i64
  %l100 = arith.constant 100 : i64
  func.call @nest(%c0, %c3) : (index, index) -> ()
  func.call @nest(%c2, %c0) : (index, index) -> ()
  func.call @nest(%c2, %c3) : (index, index) -> ()
  func.call @nest(%c3, %c1) : (index, index) -> ()
  func.call @show_search(%c6, %l5) : (index, i64) -> ()
  func.call @show_search(%c6, %l100) : (index, i64) -> ()
  func.call @show_search(%c0, %l5) : (index, i64) -> ()
  return
}
