// RUN: onnxc opt %s -p "write-into-destination" | filecheck

// Concat's inputs computed in their slots of the result: a flat
// element-wise writer (its cast moves to the slot's offset, 0, and its
// slot view goes unused) and a strided writer (its stores go to the slot
// view, at 8); no copy, no buffer of their own.
// CHECK-LABEL: func.func @concat_two
// CHECK:       %[[O:.*]] = memref.alloc() : memref<1x4x4xi64>
// CHECK-NOT:   memref.subview %[[O]][0, 0, 0]
// CHECK:       %[[F:.*]] = memref.reinterpret_cast %[[O]] to offset: [0], sizes: [%{{.*}}], strides: [1] : memref<1x4x4xi64> to memref<?xi64, strided<[1]>>
// CHECK:       memref.store %{{.*}}, %[[F]][%{{.*}}]
// CHECK:       %[[S1:.*]] = memref.subview %[[O]][0, 2, 0] [1, 2, 4] [1, 1, 1]
// CHECK:       memref.store %{{.*}}, %[[S1]][%{{.*}}, %{{.*}}, %{{.*}}]
// CHECK-NOT:   memref.copy
// CHECK-NOT:   memref.alloc
// CHECK:       return %[[O]]
func.func @concat_two(%x: memref<8xi64>) -> memref<1x4x4xi64> {
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
  memref.dealloc %a : memref<1x2x4xi64>
  %s1 = memref.subview %o[0, 2, 0] [1, 2, 4] [1, 1, 1] : memref<1x4x4xi64> to memref<1x2x4xi64, strided<[16, 4, 1], offset: 8>>
  memref.copy %b, %s1 {onnxc.disjoint_slot} : memref<1x2x4xi64> to memref<1x2x4xi64, strided<[16, 4, 1], offset: 8>>
  memref.dealloc %b : memref<1x2x4xi64>
  return %o : memref<1x4x4xi64>
}

// Kept: a copy without the marker (nothing says the slots are disjoint);
// a source read after the copy; a flat writer into a slot that is not
// contiguous (two rows before the axis).
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: memref.copy
func.func @kept(%x: memref<8xi64>) -> memref<2x4x2xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c8_i64 = arith.constant 8 : i64
  %o = memref.alloc() : memref<2x4x2xi64>
  %a = memref.alloc() : memref<2x1x2xi64>
  memref.store %c8_i64, %a[%c0, %c0, %c0] : memref<2x1x2xi64>
  %s0 = memref.subview %o[0, 0, 0] [2, 1, 2] [1, 1, 1] : memref<2x4x2xi64> to memref<2x1x2xi64, strided<[8, 2, 1]>>
  memref.copy %a, %s0 : memref<2x1x2xi64> to memref<2x1x2xi64, strided<[8, 2, 1]>>
  memref.dealloc %a : memref<2x1x2xi64>
  %b = memref.alloc() : memref<2x1x2xi64>
  memref.store %c8_i64, %b[%c0, %c0, %c0] : memref<2x1x2xi64>
  %s1 = memref.subview %o[0, 1, 0] [2, 1, 2] [1, 1, 1] : memref<2x4x2xi64> to memref<2x1x2xi64, strided<[8, 2, 1], offset: 2>>
  memref.copy %b, %s1 {onnxc.disjoint_slot} : memref<2x1x2xi64> to memref<2x1x2xi64, strided<[8, 2, 1], offset: 2>>
  %r = memref.load %b[%c0, %c0, %c0] : memref<2x1x2xi64>
  memref.store %r, %o[%c1, %c1, %c1] : memref<2x4x2xi64>
  memref.dealloc %b : memref<2x1x2xi64>
  %c = memref.alloc() : memref<2x2x2xi64>
  %cf = memref.reinterpret_cast %c to offset: [0], sizes: [%c8], strides: [1] : memref<2x2x2xi64> to memref<?xi64>
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %c8_i64, %cf[%i] : memref<?xi64>
  }
  %s2 = memref.subview %o[0, 2, 0] [2, 2, 2] [1, 1, 1] : memref<2x4x2xi64> to memref<2x2x2xi64, strided<[8, 2, 1], offset: 4>>
  memref.copy %c, %s2 {onnxc.disjoint_slot} : memref<2x2x2xi64> to memref<2x2x2xi64, strided<[8, 2, 1], offset: 4>>
  memref.dealloc %c : memref<2x2x2xi64>
  return %o : memref<2x4x2xi64>
}

// A Concat of a Concat: the inner result is itself a slot of the outer
// one, so its inputs' slots become views of that slot (at offset
// (4 + 2) * 2 = 12, static), and one buffer remains.
// CHECK-LABEL: func.func @nested
// CHECK:       %[[OUT:.*]] = memref.alloc() : memref<1x8x2xi64>
// CHECK:       %[[T:.*]] = memref.subview %[[OUT]][0, 4, 0] [1, 4, 2] [1, 1, 1]
// CHECK:       memref.subview %[[T]][0, 2, 0] [1, 1, 2] [1, 1, 1] : memref<1x4x2xi64, strided<[16, 2, 1], offset: 8>> to memref<1x1x2xi64, strided<[16, 2, 1], offset: 12>>
// CHECK-NOT:   memref.copy
// CHECK-NOT:   memref.alloc
// CHECK:       return %[[OUT]]
func.func @nested(%v: i64) -> memref<1x8x2xi64> {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<1x1x2xi64>
  memref.store %v, %a[%c0, %c0, %c0] : memref<1x1x2xi64>
  %inner = memref.alloc() : memref<1x4x2xi64>
  %s = memref.subview %inner[0, 2, 0] [1, 1, 2] [1, 1, 1] : memref<1x4x2xi64> to memref<1x1x2xi64, strided<[8, 2, 1], offset: 4>>
  memref.copy %a, %s {onnxc.disjoint_slot} : memref<1x1x2xi64> to memref<1x1x2xi64, strided<[8, 2, 1], offset: 4>>
  memref.dealloc %a : memref<1x1x2xi64>
  %out = memref.alloc() : memref<1x8x2xi64>
  %t = memref.subview %out[0, 4, 0] [1, 4, 2] [1, 1, 1] : memref<1x8x2xi64> to memref<1x4x2xi64, strided<[16, 2, 1], offset: 8>>
  memref.copy %inner, %t {onnxc.disjoint_slot} : memref<1x4x2xi64> to memref<1x4x2xi64, strided<[16, 2, 1], offset: 8>>
  memref.dealloc %inner : memref<1x4x2xi64>
  return %out : memref<1x8x2xi64>
}

// A Loop's scan row: the row (a reinterpret_cast of the growing buffer at
// a dynamic offset) is ready before the slice's buffer, so nothing moves.
// The flat writer's cast goes to the row's offset as a value, the strided
// writer's stores to the row; the buffer and its copy go away.
// CHECK-LABEL: func.func @loop_row
// CHECK-SAME:  (%[[F:.*]]: memref<?xi64>, %[[I:.*]]: index)
// CHECK:       %[[AT:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK:       %[[ROW:.*]] = memref.reinterpret_cast %[[F]] to offset: [%[[AT]]], sizes: [2, 4]
// CHECK-NOT:   memref.alloc
// CHECK:       %[[FLAT:.*]] = memref.reinterpret_cast %[[F]] to offset: [%[[AT]]], sizes: [%{{.*}}], strides: [1] : memref<?xi64> to memref<?xi64, strided<[1], offset: ?>>
// CHECK:       memref.store %{{.*}}, %[[FLAT]][%{{.*}}]
// CHECK:       memref.store %{{.*}}, %[[ROW]][%{{.*}}, %{{.*}}]
// CHECK-NOT:   memref.copy
// CHECK:       return
func.func @loop_row(%f: memref<?xi64>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c9_i64 = arith.constant 9 : i64
  %at = arith.muli %i, %c8 : index
  %row = memref.reinterpret_cast %f to offset: [%at], sizes: [2, 4], strides: [4, 1] : memref<?xi64> to memref<2x4xi64, strided<[4, 1], offset: ?>>
  %y = memref.alloc() : memref<2x4xi64>
  %yf = memref.reinterpret_cast %y to offset: [0], sizes: [%c8], strides: [1] : memref<2x4xi64> to memref<?xi64>
  scf.for %k = %c0 to %c8 step %c1 {
    %v = arith.index_cast %k : index to i64
    memref.store %v, %yf[%k] : memref<?xi64>
  }
  memref.store %c9_i64, %y[%c1, %c1] : memref<2x4xi64>
  memref.copy %y, %row {onnxc.disjoint_slot} : memref<2x4xi64> to memref<2x4xi64, strided<[4, 1], offset: ?>>
  memref.dealloc %y : memref<2x4xi64>
  return
}

// The copy reads a reshape of the buffer (an Unsqueeze: a reinterpret_cast
// at offset 0 with as many elements): the buffer itself becomes a view of
// the destination at the slot's offset (4), in its own shape.
// CHECK-LABEL: func.func @reshaped_source
// CHECK:       %[[O:.*]] = memref.alloc() : memref<2x4xi64>
// CHECK:       %[[HOME:.*]] = memref.reinterpret_cast %[[O]] to offset: [4], sizes: [4], strides: [1] : memref<2x4xi64> to memref<4xi64, strided<[1], offset: 4>>
// CHECK:       memref.store %{{.*}}, %[[HOME]][%{{.*}}]
// CHECK-NOT:   memref.copy
// CHECK-NOT:   memref.alloc
// CHECK:       return %[[O]]
func.func @reshaped_source(%v: i64) -> memref<2x4xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<4xi64>
  scf.for %k = %c0 to %c4 step %c1 {
    memref.store %v, %a[%k] : memref<4xi64>
  }
  %u = memref.reinterpret_cast %a to offset: [0], sizes: [1, 4], strides: [4, 1] : memref<4xi64> to memref<1x4xi64>
  %o = memref.alloc() : memref<2x4xi64>
  %s = memref.subview %o[1, 0] [1, 4] [1, 1] : memref<2x4xi64> to memref<1x4xi64, strided<[4, 1], offset: 4>>
  memref.copy %u, %s {onnxc.disjoint_slot} : memref<1x4xi64> to memref<1x4xi64, strided<[4, 1], offset: 4>>
  memref.dealloc %a : memref<4xi64>
  return %o : memref<2x4xi64>
}

// A Concat yielded as a Loop's scan row: the Concat's result becomes the
// row, and its inputs' slots views of the row.
// CHECK-LABEL: func.func @concat_in_row
// CHECK-SAME:  (%[[F:.*]]: memref<?xi64>, %[[I:.*]]: index, %{{.*}}: i64)
// CHECK:       %[[ROW:.*]] = memref.reinterpret_cast %[[F]]
// CHECK:       %[[S:.*]] = memref.subview %[[ROW]][1, 0] [1, 4] [1, 1] : memref<2x4xi64, strided<[4, 1], offset: ?>> to memref<1x4xi64, strided<[4, 1], offset: ?>>
// CHECK:       memref.store %{{.*}}, %[[S]][%{{.*}}, %{{.*}}]
// CHECK-NOT:   memref.copy
// CHECK-NOT:   memref.alloc
// CHECK:       return
func.func @concat_in_row(%f: memref<?xi64>, %i: index, %v: i64) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %at = arith.muli %i, %c8 : index
  %row = memref.reinterpret_cast %f to offset: [%at], sizes: [2, 4], strides: [4, 1] : memref<?xi64> to memref<2x4xi64, strided<[4, 1], offset: ?>>
  %a = memref.alloc() : memref<1x4xi64>
  memref.store %v, %a[%c0, %c0] : memref<1x4xi64>
  %o = memref.alloc() : memref<2x4xi64>
  %s = memref.subview %o[1, 0] [1, 4] [1, 1] : memref<2x4xi64> to memref<1x4xi64, strided<[4, 1], offset: 4>>
  memref.copy %a, %s {onnxc.disjoint_slot} : memref<1x4xi64> to memref<1x4xi64, strided<[4, 1], offset: 4>>
  memref.dealloc %a : memref<1x4xi64>
  memref.copy %o, %row {onnxc.disjoint_slot} : memref<2x4xi64> to memref<2x4xi64, strided<[4, 1], offset: ?>>
  memref.dealloc %o : memref<2x4xi64>
  return
}

// Kept: a row made after the slice's buffer (it cannot move: the grown
// buffer it views is not a plain allocation); a reshape that views fewer
// elements than its buffer holds.
// CHECK-LABEL: func.func @kept_rows
// CHECK-COUNT-2: memref.copy
func.func @kept_rows(%f: memref<?xi64>, %i: index, %v: i64) -> memref<2x4xi64> {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %y = memref.alloc() : memref<2x4xi64>
  memref.store %v, %y[%c0, %c0] : memref<2x4xi64>
  %g = memref.realloc %f(%c8) : memref<?xi64> to memref<?xi64>
  %row = memref.reinterpret_cast %g to offset: [%i], sizes: [2, 4], strides: [4, 1] : memref<?xi64> to memref<2x4xi64, strided<[4, 1], offset: ?>>
  memref.copy %y, %row {onnxc.disjoint_slot} : memref<2x4xi64> to memref<2x4xi64, strided<[4, 1], offset: ?>>
  memref.dealloc %y : memref<2x4xi64>
  %a = memref.alloc() : memref<8xi64>
  memref.store %v, %a[%c0] : memref<8xi64>
  %u = memref.reinterpret_cast %a to offset: [0], sizes: [1, 4], strides: [4, 1] : memref<8xi64> to memref<1x4xi64>
  %o = memref.alloc() : memref<2x4xi64>
  %s = memref.subview %o[1, 0] [1, 4] [1, 1] : memref<2x4xi64> to memref<1x4xi64, strided<[4, 1], offset: 4>>
  memref.copy %u, %s {onnxc.disjoint_slot} : memref<1x4xi64> to memref<1x4xi64, strided<[4, 1], offset: 4>>
  memref.dealloc %a : memref<8xi64>
  memref.dealloc %g : memref<?xi64>
  return %o : memref<2x4xi64>
}

// A kernel function's output parameter of any offset and outer strides
// (a per-level window kernel's): the cast of the source becomes a cast of
// the slot, and the call writes there. A cast to static outer strides
// would not fit a slot with others: that source keeps its copy.
// CHECK-LABEL: func.func @kernel_output
// CHECK:         %[[O:.*]] = memref.alloc() : memref<1x4x4xf32>
// CHECK:         %[[S:.*]] = memref.subview %[[O]][0, 2, 0] [1, 2, 4] [1, 1, 1]
// CHECK:         %[[C:.*]] = memref.cast %[[S]] : memref<1x2x4xf32, strided<[16, 4, 1], offset: 8>> to memref<1x2x4xf32, strided<[?, ?, 1], offset: ?>>
// CHECK:         call @window(%[[C]])
// CHECK:         %[[K:.*]] = memref.alloc() : memref<1x2x4xf32>
// CHECK:         %[[KC:.*]] = memref.cast %[[K]] : memref<1x2x4xf32> to memref<1x2x4xf32, strided<[8, 4, 1], offset: ?>>
// CHECK:         call @fixed(%[[KC]])
// CHECK:         memref.copy %[[K]]
// CHECK:         return %[[O]]
func.func private @window(%o: memref<1x2x4xf32, strided<[?, ?, 1], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  memref.store %f, %o[%c0, %c1, %c1] : memref<1x2x4xf32, strided<[?, ?, 1], offset: ?>>
  return
}
func.func private @fixed(%o: memref<1x2x4xf32, strided<[8, 4, 1], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %f = arith.constant 2.0 : f32
  memref.store %f, %o[%c0, %c0, %c0] : memref<1x2x4xf32, strided<[8, 4, 1], offset: ?>>
  return
}
func.func @kernel_output() -> memref<1x4x4xf32> {
  %a = memref.alloc() : memref<1x2x4xf32>
  %ac = memref.cast %a : memref<1x2x4xf32> to memref<1x2x4xf32, strided<[?, ?, 1], offset: ?>>
  call @window(%ac) : (memref<1x2x4xf32, strided<[?, ?, 1], offset: ?>>) -> ()
  %k = memref.alloc() : memref<1x2x4xf32>
  %kc = memref.cast %k : memref<1x2x4xf32> to memref<1x2x4xf32, strided<[8, 4, 1], offset: ?>>
  call @fixed(%kc) : (memref<1x2x4xf32, strided<[8, 4, 1], offset: ?>>) -> ()
  %o = memref.alloc() : memref<1x4x4xf32>
  %s0 = memref.subview %o[0, 0, 0] [1, 2, 4] [1, 1, 1] : memref<1x4x4xf32> to memref<1x2x4xf32, strided<[16, 4, 1]>>
  memref.copy %k, %s0 {onnxc.disjoint_slot} : memref<1x2x4xf32> to memref<1x2x4xf32, strided<[16, 4, 1]>>
  memref.dealloc %k : memref<1x2x4xf32>
  %s1 = memref.subview %o[0, 2, 0] [1, 2, 4] [1, 1, 1] : memref<1x4x4xf32> to memref<1x2x4xf32, strided<[16, 4, 1], offset: 8>>
  memref.copy %a, %s1 {onnxc.disjoint_slot} : memref<1x2x4xf32> to memref<1x2x4xf32, strided<[16, 4, 1], offset: 8>>
  memref.dealloc %a : memref<1x2x4xf32>
  return %o : memref<1x4x4xf32>
}
