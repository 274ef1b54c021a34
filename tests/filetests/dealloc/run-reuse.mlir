// RUN: onnxc opt %s -p "dealloc-pipeline" | filecheck
// RUN: onnxc opt %s -p "dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// A chain of three buffers through the whole pipeline: ownership frees %a
// after the loop that reads it, then buffer-reuse gives %a's memory to %c.
// CHECK-LABEL: func.func @main
// CHECK-COUNT-2: memref.alloc
// CHECK-NOT:   memref.alloc
// Executed: a chain through the whole pipeline (ownership, then reuse).
// RUNOUT: 42
func.func private @printI64(i64)
func.func private @printNewline()
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %v = arith.constant 40 : i64
  %one = arith.constant 1 : i64
  %a = memref.alloc(%c8) : memref<?xi64>
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %v, %a[%i] : memref<?xi64>
  }
  %b = memref.alloc(%c8) : memref<?xi64>
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%i] : memref<?xi64>
    %y = arith.addi %x, %one : i64
    memref.store %y, %b[%i] : memref<?xi64>
  }
  %c = memref.alloc(%c8) : memref<?xi64>
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %b[%i] : memref<?xi64>
    %y = arith.addi %x, %one : i64
    memref.store %y, %c[%i] : memref<?xi64>
  }
  %r = memref.load %c[%c1] : memref<?xi64>
  func.call @printI64(%r) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}
