// RUN: onnxc opt %s -p "ownership-based-deallocation,dealloc-simplification" | filecheck
// RUN: onnxc opt %s -p "dealloc-pipeline,lower-deallocations" | filecheck --check-prefix=LOWER
// RUN: onnxc opt %s -p "dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// A branch yielding a view of a buffer it allocated (an If ending in a
// Reshape): the dealloc before the yield retains the view, which must
// alias the buffer (views keep the base pointer), so the buffer is never
// freed there and its ownership goes out with the view: no runtime
// pointer comparison. Then both branches yield `true`, so the result is
// owned and returned without a guarded copy.
// CHECK-LABEL: func.func @branch
// CHECK:       scf.if
// CHECK:         %[[A:.*]] = memref.alloc()
// CHECK:         %[[V:.*]] = memref.reinterpret_cast %[[A]]
// CHECK-NEXT:    %[[T:.*]] = arith.constant true
// CHECK-NEXT:    scf.yield %[[V]], %[[T]]
// CHECK:       } else {
// CHECK-NOT:   bufferization.dealloc
// CHECK:       return

// LOWER-LABEL: func.func @branch
// LOWER-NOT:   memref.extract_aligned_pointer_as_index
// LOWER-NOT:   arith.cmpi
// LOWER:       return
func.func @branch(%c: i1, %x: memref<4xi64>) -> memref<2x2xi64> {
  %r = scf.if %c -> (memref<2x2xi64>) {
    %a = memref.alloc() {alignment = 64 : i64} : memref<4xi64>
    memref.copy %x, %a : memref<4xi64> to memref<4xi64>
    %v = memref.reinterpret_cast %a to offset: [0], sizes: [2, 2], strides: [2, 1] : memref<4xi64> to memref<2x2xi64>
    scf.yield %v : memref<2x2xi64>
  } else {
    %b = memref.alloc() {alignment = 64 : i64} : memref<2x2xi64>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %k = arith.constant 9 : i64
    memref.store %k, %b[%c0, %c0] : memref<2x2xi64>
    memref.store %k, %b[%c0, %c1] : memref<2x2xi64>
    memref.store %k, %b[%c1, %c0] : memref<2x2xi64>
    memref.store %k, %b[%c1, %c1] : memref<2x2xi64>
    scf.yield %b : memref<2x2xi64>
  }
  return %r : memref<2x2xi64>
}

// Executed for both branches: [1, 2, 3, 4] summed, then four 9s.
// RUNOUT: 10
// RUNOUT-NEXT: 36
func.func private @printI64(i64)
func.func private @printNewline()

func.func @show(%m: memref<2x2xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.load %m[%c0, %c0] : memref<2x2xi64>
  %b = memref.load %m[%c0, %c1] : memref<2x2xi64>
  %c = memref.load %m[%c1, %c0] : memref<2x2xi64>
  %d = memref.load %m[%c1, %c1] : memref<2x2xi64>
  %s1 = arith.addi %a, %b : i64
  %s2 = arith.addi %c, %d : i64
  %s = arith.addi %s1, %s2 : i64
  func.call @printI64(%s) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %x = memref.alloc() : memref<4xi64>
  %k1 = arith.constant 1 : i64
  %k2 = arith.constant 2 : i64
  %k3 = arith.constant 3 : i64
  %k4 = arith.constant 4 : i64
  memref.store %k1, %x[%c0] : memref<4xi64>
  memref.store %k2, %x[%c1] : memref<4xi64>
  memref.store %k3, %x[%c2] : memref<4xi64>
  memref.store %k4, %x[%c3] : memref<4xi64>
  %t = arith.constant true
  %f = arith.constant false
  %r1 = func.call @branch(%t, %x) : (i1, memref<4xi64>) -> memref<2x2xi64>
  func.call @show(%r1) : (memref<2x2xi64>) -> ()
  %r2 = func.call @branch(%f, %x) : (i1, memref<4xi64>) -> memref<2x2xi64>
  func.call @show(%r2) : (memref<2x2xi64>) -> ()
  return
}
