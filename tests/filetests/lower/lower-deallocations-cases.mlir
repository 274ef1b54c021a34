// RUN: onnxc opt %s -p "lower-deallocations" | filecheck
// RUN: onnxc opt %s -p "lower-deallocations" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=EXEC

// The small cases of lower-deallocations, chosen by operand counts (the
// general case, a call to @dealloc_helper, is dealloc/lower-general.mlir).
// Executed under valgrind: every buffer is freed exactly once.

func.func private @printI64(i64)
func.func private @printNewline()

// No memrefs: every retained result is false, no code.
// CHECK-LABEL: func.func @no_memrefs
// CHECK-NEXT:    %[[F:.*]] = arith.constant false
// CHECK-NEXT:    return %[[F]] : i1
func.func @no_memrefs(%r0: memref<2xf32>) -> i1 {
  %u = bufferization.dealloc retain (%r0 : memref<2xf32>)
  return %u : i1
}

// One memref, nothing retained: a conditional free.
// CHECK-LABEL: func.func @one
// CHECK:         %[[A:.*]] = memref.alloc()
// CHECK-NEXT:    scf.if %arg0 {
// CHECK-NEXT:      memref.dealloc %[[A]]
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @one(%c: i1) {
  %a = memref.alloc() : memref<4xf32>
  bufferization.dealloc (%a : memref<4xf32>) if (%c)
  return
}

// One memref, two retained: one pointer compare per retained value, linear
// code, no helper call.
// CHECK-LABEL: func.func @one_retained
// CHECK-NOT:     call
// CHECK-COUNT-2: arith.cmpi ne
// CHECK:         scf.if
// CHECK-NEXT:      memref.dealloc
// CHECK-NOT:     call
// CHECK:         return
func.func @one_retained(%c: i1, %r0: memref<4xf32>, %r1: memref<4xf32>) -> (i1, i1) {
  %a = memref.alloc() : memref<4xf32>
  %u:2 = bufferization.dealloc (%a : memref<4xf32>) if (%c) retain (%r0, %r1 : memref<4xf32>, memref<4xf32>)
  return %u#0, %u#1 : i1, i1
}

// CHECK-LABEL: func.func @main
// EXEC: 0
// EXEC-NEXT: 0
// EXEC-NEXT: 0
func.func @main() {
  %t = arith.constant true
  %x = memref.alloc() : memref<2xf32>
  %r0 = memref.alloc() : memref<4xf32>
  %r1 = memref.alloc() : memref<4xf32>
  %n = call @no_memrefs(%x) : (memref<2xf32>) -> i1
  call @one(%t) : (i1) -> ()
  %u:2 = call @one_retained(%t, %r0, %r1) : (i1, memref<4xf32>, memref<4xf32>) -> (i1, i1)
  %n64 = arith.extui %n : i1 to i64
  %u0 = arith.extui %u#0 : i1 to i64
  %u1 = arith.extui %u#1 : i1 to i64
  call @printI64(%n64) : (i64) -> ()
  call @printNewline() : () -> ()
  call @printI64(%u0) : (i64) -> ()
  call @printNewline() : () -> ()
  call @printI64(%u1) : (i64) -> ()
  call @printNewline() : () -> ()
  memref.dealloc %x : memref<2xf32>
  memref.dealloc %r0 : memref<4xf32>
  memref.dealloc %r1 : memref<4xf32>
  return
}
