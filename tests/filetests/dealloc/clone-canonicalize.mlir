// RUN: onnxc opt %s -p "dealloc-simplification" | filecheck
// RUN: onnxc opt %s -p "dealloc-simplification,lower-deallocations" | filecheck --check-prefix=LOWER
// RUN: onnxc opt %s -p "dealloc-simplification" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// A clone whose source allocation is freed right after it (nothing touching
// the buffer in between) is the source itself: no copy, no free. Upstream's
// buffer-deallocation output has this shape; lowered, it would be alloc +
// copy + free, which elide-copies (run before the lowering) never sees.
// CHECK-LABEL: func.func @forward
// CHECK:       %[[A:.*]] = memref.alloc()
// CHECK-NEXT:  memref.store
// CHECK-NEXT:  %[[B:.*]] = memref.alloc()
// CHECK-NEXT:  %[[V:.*]] = memref.reinterpret_cast %[[B]]
// CHECK-NEXT:  return %[[A]], %[[V]]
// LOWER-LABEL: func.func @forward
// LOWER-NOT:   memref.copy
// LOWER-NOT:   memref.dealloc
// LOWER:       return
func.func @forward(%x: f32) -> (memref<4xf32>, memref<2x2xf32>) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<4xf32>
  memref.store %x, %a[%c0] : memref<4xf32>
  %c = bufferization.clone %a : memref<4xf32> to memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  %v = memref.reinterpret_cast %b to offset: [0], sizes: [2, 2], strides: [2, 1] : memref<4xf32> to memref<2x2xf32>
  %d = bufferization.clone %v : memref<2x2xf32> to memref<2x2xf32>
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return %c, %d : memref<4xf32>, memref<2x2xf32>
}

// The source is read between the clone and its free (a write through the
// clone would show there): the copy stays.
// CHECK-LABEL: func.func @kept
// CHECK:       bufferization.clone
// CHECK:       memref.dealloc
func.func @kept(%x: f32) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<4xf32>
  %one = arith.constant 1.0 : f32
  memref.store %one, %a[%c0] : memref<4xf32>
  %c = bufferization.clone %a : memref<4xf32> to memref<4xf32>
  memref.store %x, %c[%c0] : memref<4xf32>
  %y = memref.load %a[%c0] : memref<4xf32>
  memref.store %y, %c[%c0] : memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  return %c : memref<4xf32>
}

// Executed (the caller frees what it gets): 7, then the source's 1 stored
// over the clone's 7.
// RUNOUT: 7
// RUNOUT-NEXT: 1
func.func private @printI64(i64)
func.func private @printNewline()

func.func @main() {
  %c0 = arith.constant 0 : index
  %x = arith.constant 7.0 : f32
  %r:2 = func.call @forward(%x) : (f32) -> (memref<4xf32>, memref<2x2xf32>)
  %v = memref.load %r#0[%c0] : memref<4xf32>
  %i = arith.fptosi %v : f32 to i64
  func.call @printI64(%i) : (i64) -> ()
  func.call @printNewline() : () -> ()
  memref.dealloc %r#0 : memref<4xf32>
  memref.dealloc %r#1 : memref<2x2xf32>
  %k = func.call @kept(%x) : (f32) -> memref<4xf32>
  %w = memref.load %k[%c0] : memref<4xf32>
  %j = arith.fptosi %w : f32 to i64
  func.call @printI64(%j) : (i64) -> ()
  func.call @printNewline() : () -> ()
  memref.dealloc %k : memref<4xf32>
  return
}
