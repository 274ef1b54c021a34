// RUN: onnxc opt %s -p "dealloc-pipeline" | filecheck

// Results must be fresh buffers the caller owns. A fresh allocation is
// handed over, and so is a packed view of one (identity layout: offset 0,
// row-major; the caller frees the allocated pointer, which views keep); an
// argument, a global and a stack buffer are cloned.

memref.global "private" constant @g : memref<4xf32> = dense<1.0>

// CHECK-LABEL: func.func @abi
// CHECK-SAME:  (%[[X:.*]]: memref<4xf32>)
// CHECK:       %[[G:.*]] = memref.get_global @g
// CHECK:       %[[A:.*]] = memref.alloc()
// CHECK:       %[[V:.*]] = memref.reinterpret_cast %[[A]]
// CHECK:       %[[S:.*]] = memref.alloca()
// CHECK:       %[[F:.*]] = memref.alloc()
// CHECK-NEXT:  %[[CX:.*]] = bufferization.clone %[[X]]
// CHECK-NEXT:  %[[CG:.*]] = bufferization.clone %[[G]]
// CHECK-NEXT:  %[[CS:.*]] = bufferization.clone %[[S]]
// CHECK-NEXT:  return %[[CX]], %[[CG]], %[[V]], %[[CS]], %[[F]]
// CHECK-NOT:   memref.dealloc
func.func @abi(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>, memref<2x2xf32>, memref<4xf32>, memref<4xf32>) {
  %g = memref.get_global @g : memref<4xf32>
  %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  %v = memref.reinterpret_cast %a to offset: [0], sizes: [2, 2], strides: [2, 1] : memref<4xf32> to memref<2x2xf32>
  %s = memref.alloca() : memref<4xf32>
  %f = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  return %x, %g, %v, %s, %f : memref<4xf32>, memref<4xf32>, memref<2x2xf32>, memref<4xf32>, memref<4xf32>
}

// Returning one buffer twice: the second result is a copy.
// CHECK-LABEL: func.func @twice
// CHECK:       %[[A:.*]] = memref.alloc()
// CHECK-NEXT:  %[[C:.*]] = bufferization.clone %[[A]]
// CHECK-NEXT:  return %[[A]], %[[C]]
func.func @twice() -> (memref<4xf32>, memref<4xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  return %a, %a : memref<4xf32>, memref<4xf32>
}

// A view that does not start the buffer is cloned; the viewed allocation
// is freed after its clone.
// CHECK-LABEL: func.func @strided
// CHECK:       %[[A:.*]] = memref.alloc()
// CHECK:       %[[V:.*]] = memref.subview %[[A]][2] [2] [1]
// CHECK-NEXT:  %[[C:.*]] = bufferization.clone %[[V]]
// CHECK-NEXT:  memref.dealloc %[[A]]
// CHECK-NEXT:  return %[[C]]
func.func @strided() -> memref<2xf32, strided<[1], offset: 2>> {
  %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  %v = memref.subview %a[2] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 2>>
  return %v : memref<2xf32, strided<[1], offset: 2>>
}

// An scf.if result is owned only at run time (its flag): handed over when
// the flag is set, copied otherwise; the same for a packed view of it.
// CHECK-LABEL: func.func @guarded
// CHECK:       %[[R:.*]]:2 = scf.if
// CHECK:       %[[V:.*]] = memref.reinterpret_cast %[[R]]#0
// CHECK:       %[[W:.*]] = scf.if %[[R]]#1 -> (memref<2x2xf32>) {
// CHECK-NEXT:    scf.yield %[[V]]
// CHECK-NEXT:  } else {
// CHECK-NEXT:    %[[C:.*]] = bufferization.clone %[[V]]
// CHECK-NEXT:    scf.yield %[[C]]
// CHECK-NEXT:  }
// CHECK-NEXT:  return %[[W]]
func.func @guarded(%c: i1, %x: memref<4xf32>) -> memref<2x2xf32> {
  %r = scf.if %c -> (memref<4xf32>) {
    %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
    scf.yield %a : memref<4xf32>
  } else {
    scf.yield %x : memref<4xf32>
  }
  %v = memref.reinterpret_cast %r to offset: [0], sizes: [2, 2], strides: [2, 1] : memref<4xf32> to memref<2x2xf32>
  return %v : memref<2x2xf32>
}
