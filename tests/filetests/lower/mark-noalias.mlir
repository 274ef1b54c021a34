// RUN: onnxc opt %s -p mark-noalias | filecheck
// RUN: onnxc opt %s --emit llvm | run-llvm --valgrind | filecheck --check-prefix=EXEC

// @copy(x, y) copies x into y. Arguments are marked where every call passes
// buffers with distinct roots: two allocations, an allocation and a
// constant global, or two arguments of a caller whose own arguments are
// marked (@twice forwards to @copy2). @views gets two views of one
// allocation, @same one buffer twice, so neither it nor its callee @fwd is
// marked.
// CHECK-LABEL: func.func private @copy(%arg0: memref<4xi64> {llvm.noalias}, %arg1: memref<4xi64> {llvm.noalias})
// CHECK-LABEL: func.func private @copy2(%arg0: memref<4xi64> {llvm.noalias}, %arg1: memref<4xi64> {llvm.noalias})
// CHECK-LABEL: func.func private @twice(%arg0: memref<4xi64> {llvm.noalias}, %arg1: memref<4xi64> {llvm.noalias})
// CHECK-LABEL: func.func private @views(%arg0: memref<4xi64, strided<[1]>>, %arg1: memref<4xi64, strided<[1], offset: 4>>)
// CHECK-LABEL: func.func private @fwd(%arg0: memref<4xi64>, %arg1: memref<4xi64>)
// CHECK-LABEL: func.func private @same(%arg0: memref<4xi64>, %arg1: memref<4xi64>)
// The global [0, 1, 2, 3] (sum 6) flows g → a → b → c[0:4] → c[4:8] → d,
// then d → e twice: every sum printed is 6.
// EXEC: 6
// EXEC-NEXT: 6
// EXEC-NEXT: 6
memref.global "private" constant @g : memref<4xi64> = dense<[0, 1, 2, 3]>
func.func private @printI64(i64)
func.func private @printNewline()

func.func private @copy(%x: memref<4xi64>, %y: memref<4xi64>) {
  memref.copy %x, %y : memref<4xi64> to memref<4xi64>
  return
}

func.func private @copy2(%x: memref<4xi64>, %y: memref<4xi64>) {
  memref.copy %x, %y : memref<4xi64> to memref<4xi64>
  return
}

func.func private @twice(%x: memref<4xi64>, %y: memref<4xi64>) {
  func.call @copy2(%x, %y) : (memref<4xi64>, memref<4xi64>) -> ()
  func.call @copy2(%x, %y) : (memref<4xi64>, memref<4xi64>) -> ()
  return
}

func.func private @views(%x: memref<4xi64, strided<[1]>>, %y: memref<4xi64, strided<[1], offset: 4>>) {
  memref.copy %x, %y : memref<4xi64, strided<[1]>> to memref<4xi64, strided<[1], offset: 4>>
  return
}

func.func private @fwd(%x: memref<4xi64>, %y: memref<4xi64>) {
  memref.copy %x, %y : memref<4xi64> to memref<4xi64>
  return
}

func.func private @same(%x: memref<4xi64>, %y: memref<4xi64>) {
  func.call @fwd(%x, %y) : (memref<4xi64>, memref<4xi64>) -> ()
  return
}

func.func private @sum(%x: memref<4xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0 : i64
  %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (i64) {
    %v = memref.load %x[%i] : memref<4xi64>
    %n = arith.addi %acc, %v : i64
    scf.yield %n : i64
  }
  func.call @printI64(%s) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}

func.func @main() {
  %g = memref.get_global @g : memref<4xi64>
  %a = memref.alloc() : memref<4xi64>
  %b = memref.alloc() : memref<4xi64>
  %c = memref.alloc() : memref<8xi64>
  %d = memref.alloc() : memref<4xi64>
  %e = memref.alloc() : memref<4xi64>
  func.call @copy(%g, %a) : (memref<4xi64>, memref<4xi64>) -> ()
  func.call @copy(%a, %b) : (memref<4xi64>, memref<4xi64>) -> ()
  %lo = memref.subview %c[0] [4] [1] : memref<8xi64> to memref<4xi64, strided<[1]>>
  %hi = memref.subview %c[4] [4] [1] : memref<8xi64> to memref<4xi64, strided<[1], offset: 4>>
  memref.copy %b, %lo : memref<4xi64> to memref<4xi64, strided<[1]>>
  func.call @views(%lo, %hi) : (memref<4xi64, strided<[1]>>, memref<4xi64, strided<[1], offset: 4>>) -> ()
  memref.copy %hi, %d : memref<4xi64, strided<[1], offset: 4>> to memref<4xi64>
  func.call @sum(%d) : (memref<4xi64>) -> ()
  func.call @twice(%d, %e) : (memref<4xi64>, memref<4xi64>) -> ()
  func.call @sum(%e) : (memref<4xi64>) -> ()
  func.call @same(%e, %e) : (memref<4xi64>, memref<4xi64>) -> ()
  func.call @sum(%e) : (memref<4xi64>) -> ()
  memref.dealloc %a : memref<4xi64>
  memref.dealloc %b : memref<4xi64>
  memref.dealloc %c : memref<8xi64>
  memref.dealloc %d : memref<4xi64>
  memref.dealloc %e : memref<4xi64>
  return
}
