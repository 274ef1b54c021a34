// RUN: onnxc opt %s -p "buffer-reuse" | filecheck

// buffer-reuse: an allocation takes over any buffer of the same type (and
// the same dynamic sizes, the same alignment) freed earlier in its block;
// both the free and the allocation go away. Not only the last freed one:
// here %c takes %a, freed two frees earlier.
// CHECK-LABEL: func.func @pool
// CHECK:       %[[A:.*]] = memref.alloc() : memref<8xi64>
// CHECK:       %[[B:.*]] = memref.alloc() : memref<16xi64>
// CHECK-NOT:   memref.dealloc %[[A]]
// CHECK:       memref.dealloc %[[B]]
// CHECK-NOT:   memref.alloc() : memref<8xi64>
// CHECK:       memref.store %{{.*}}, %[[A]]
// CHECK:       memref.dealloc %[[A]]
func.func @pool(%v: i64) -> i64 {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<8xi64>
  memref.store %v, %a[%c0] : memref<8xi64>
  %x = memref.load %a[%c0] : memref<8xi64>
  memref.dealloc %a : memref<8xi64>
  %b = memref.alloc() : memref<16xi64>
  memref.store %x, %b[%c0] : memref<16xi64>
  %y = memref.load %b[%c0] : memref<16xi64>
  memref.dealloc %b : memref<16xi64>
  %c = memref.alloc() : memref<8xi64>
  memref.store %y, %c[%c0] : memref<8xi64>
  %z = memref.load %c[%c0] : memref<8xi64>
  memref.dealloc %c : memref<8xi64>
  return %z : i64
}

// Dynamic sizes must be the same SSA value; other sizes, types or
// alignments are never merged.
// CHECK-LABEL: func.func @mismatch
// CHECK:       memref.alloc(%arg0)
// CHECK-NEXT:  memref.dealloc
// CHECK-NEXT:  memref.alloc(%arg1)
// CHECK-NEXT:  memref.dealloc
// CHECK-NEXT:  memref.alloc() : memref<8xf64>
// CHECK-NEXT:  memref.dealloc
// CHECK-NEXT:  memref.alloc() {alignment = 64 : i64} : memref<8xf64>
// CHECK-NEXT:  memref.dealloc
func.func @mismatch(%n: index, %m: index) {
  %a = memref.alloc(%n) : memref<?xi64>
  memref.dealloc %a : memref<?xi64>
  %b = memref.alloc(%m) : memref<?xi64>
  memref.dealloc %b : memref<?xi64>
  %c = memref.alloc() : memref<8xf64>
  memref.dealloc %c : memref<8xf64>
  %d = memref.alloc() {alignment = 64 : i64} : memref<8xf64>
  memref.dealloc %d : memref<8xf64>
  return
}

// Same dynamic size: reused.
// CHECK-LABEL: func.func @same_size
// CHECK-COUNT-1: memref.alloc
// CHECK-NOT:   memref.alloc
func.func @same_size(%n: index) {
  %a = memref.alloc(%n) : memref<?xi64>
  memref.dealloc %a : memref<?xi64>
  %b = memref.alloc(%n) : memref<?xi64>
  memref.dealloc %b : memref<?xi64>
  return
}

// A free in a nested block does not feed allocations of the outer block.
// CHECK-LABEL: func.func @nested
// CHECK-COUNT-2: memref.alloc
func.func @nested(%c: i1) {
  scf.if %c {
    %a = memref.alloc() : memref<8xi64>
    memref.dealloc %a : memref<8xi64>
  }
  %b = memref.alloc() : memref<8xi64>
  memref.dealloc %b : memref<8xi64>
  return
}
