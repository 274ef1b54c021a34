// RUN: onnxc opt %s -p "dealloc-pipeline" | filecheck
// RUN: onnxc opt %s -p "dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// write-into-destination inside the dealloc pipeline: ownership inserts
// the frees it needs, then the two inputs of a Concat are computed in
// their slots of the result (write-into-destination.mlir has the cases).
// CHECK-LABEL: func.func @concat_run
// CHECK-COUNT-1: memref.alloc
// CHECK-NOT:   memref.alloc
// CHECK-NOT:   memref.copy
// CHECK:       return
func.func @concat_run(%x: memref<8xi64>) -> memref<1x4x4xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %a = memref.alloc() : memref<1x2x4xi64>
  %af = memref.reinterpret_cast %a to offset: [0], sizes: [%c8], strides: [1] : memref<1x2x4xi64> to memref<?xi64>
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xi64>
    memref.store %v, %af[%i] : memref<?xi64>
  }
  %b = memref.alloc() : memref<1x2x4xi64>
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %k = arith.muli %i, %c4 : index
      %n = arith.addi %k, %j : index
      %v = memref.load %x[%n] : memref<8xi64>
      %w = arith.muli %v, %v : i64
      memref.store %w, %b[%c0, %i, %j] : memref<1x2x4xi64>
    }
  }
  %o = memref.alloc() : memref<1x4x4xi64>
  %s0 = memref.subview %o[0, 0, 0] [1, 2, 4] [1, 1, 1] : memref<1x4x4xi64> to memref<1x2x4xi64, strided<[16, 4, 1]>>
  memref.copy %a, %s0 {onnxc.disjoint_slot} : memref<1x2x4xi64> to memref<1x2x4xi64, strided<[16, 4, 1]>>
  %s1 = memref.subview %o[0, 2, 0] [1, 2, 4] [1, 1, 1] : memref<1x4x4xi64> to memref<1x2x4xi64, strided<[16, 4, 1], offset: 8>>
  memref.copy %b, %s1 {onnxc.disjoint_slot} : memref<1x2x4xi64> to memref<1x2x4xi64, strided<[16, 4, 1], offset: 8>>
  return %o : memref<1x4x4xi64>
}

// Executed: out[0, 1, 3] = x[7] = 7 from the flat writer, out[0, 3, 2] =
// x[6]² = 36 from the strided one.
// RUNOUT: 7
// RUNOUT: 36
func.func private @printI64(i64)
func.func private @printNewline()
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %x = memref.alloc() : memref<8xi64>
  scf.for %i = %c0 to %c8 step %c1 {
    %v = arith.index_cast %i : index to i64
    memref.store %v, %x[%i] : memref<8xi64>
  }
  %o = func.call @concat_run(%x) : (memref<8xi64>) -> memref<1x4x4xi64>
  %p = memref.load %o[%c0, %c1, %c3] : memref<1x4x4xi64>
  func.call @printI64(%p) : (i64) -> ()
  func.call @printNewline() : () -> ()
  %q = memref.load %o[%c0, %c3, %c2] : memref<1x4x4xi64>
  func.call @printI64(%q) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}
