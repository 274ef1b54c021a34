// RUN: onnxc opt %s -p "dealloc-pipeline" | filecheck

// Results must be fresh buffers the caller owns. A fresh allocation is
// handed over; an argument, a global, a view and a stack buffer are cloned;
// the viewed allocation is freed after its clone.

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
// CHECK-NEXT:  %[[CV:.*]] = bufferization.clone %[[V]]
// CHECK-NEXT:  %[[CS:.*]] = bufferization.clone %[[S]]
// CHECK-NEXT:  memref.dealloc %[[A]]
// CHECK-NEXT:  return %[[CX]], %[[CG]], %[[CV]], %[[CS]], %[[F]]
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
