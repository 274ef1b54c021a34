// RUN: onnxc opt %s -p "ownership-based-deallocation,dealloc-simplification" | filecheck
// RUN: onnxc opt %s -p "ownership-based-deallocation,dealloc-simplification,lower-deallocations" --emit llvm | run-llvm --valgrind

// The function boundary ABI end to end: callees return fresh buffers (an
// allocation handed over, clones of an argument, a global and a view, a
// retained select); callers own call results and free them after their last
// use. Valgrind checks there is no leak and no invalid free.

memref.global "private" constant @g : memref<4xf32> = dense<2.0>

// CHECK-LABEL: func.func @results
// CHECK-COUNT-3: bufferization.clone
// CHECK:       return
func.func @results(%x: memref<4xf32>, %c: i1) -> (memref<4xf32>, memref<4xf32>, memref<2x2xf32>, memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %g = memref.get_global @g : memref<4xf32>
  %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %a[%i] : memref<4xf32>
    memref.store %v, %b[%i] : memref<4xf32>
  }
  %view = memref.reinterpret_cast %a to offset: [0], sizes: [2, 2], strides: [2, 1] : memref<4xf32> to memref<2x2xf32>
  %s = arith.select %c, %a, %b : memref<4xf32>
  return %x, %g, %view, %s : memref<4xf32>, memref<4xf32>, memref<2x2xf32>, memref<4xf32>
}

// CHECK-LABEL: func.func @main
// CHECK:       %[[X:.*]] = memref.alloc()
// CHECK:       %[[R:.*]]:4 = call @results(%[[X]]
// CHECK-NEXT:  memref.dealloc %[[X]]
// CHECK-NEXT:  memref.dealloc %[[R]]#2
// CHECK-NEXT:  %[[S:.*]] = memref.alloc()
// CHECK-NEXT:  scf.for
// CHECK:       }
// CHECK-NEXT:  memref.dealloc %[[R]]#0
// CHECK-NEXT:  memref.dealloc %[[R]]#1
// CHECK-NEXT:  memref.dealloc %[[R]]#3
// CHECK-NEXT:  memref.dealloc %[[S]]
// CHECK-NEXT:  return
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %t = arith.constant true
  %x = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %one, %x[%i] : memref<4xf32>
  }
  %r:4 = func.call @results(%x, %t) : (memref<4xf32>, i1) -> (memref<4xf32>, memref<4xf32>, memref<2x2xf32>, memref<4xf32>)
  %sum = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %p = memref.load %r#0[%i] : memref<4xf32>
    %q = memref.load %r#1[%i] : memref<4xf32>
    %u = memref.load %r#3[%i] : memref<4xf32>
    %w = arith.addf %p, %q : f32
    %z = arith.addf %w, %u : f32
    memref.store %z, %sum[%i] : memref<4xf32>
  }
  return
}
