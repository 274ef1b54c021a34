// RUN: onnxc opt %s -p "ownership-based-deallocation,dealloc-simplification" | filecheck
// RUN: onnxc opt %s -p "ownership-based-deallocation,dealloc-simplification,lower-deallocations" --emit llvm | run-llvm --valgrind

// A chain of buffers: each one is freed right after the loop that reads it
// for the last time, so at most two are alive at once. The last one is the
// result: handed to the caller, not freed.

// CHECK-LABEL: func.func @chain
// CHECK:      %[[A:.*]] = memref.alloc()
// CHECK:      %[[B:.*]] = memref.alloc()
// CHECK-NEXT: scf.for
// CHECK:        memref.load %[[A]]
// CHECK:      }
// CHECK-NEXT: memref.dealloc %[[A]] : memref<4xf32>
// CHECK-NEXT: %[[C:.*]] = memref.alloc()
// CHECK-NEXT: scf.for
// CHECK:        memref.load %[[B]]
// CHECK:      }
// CHECK-NEXT: memref.dealloc %[[B]] : memref<4xf32>
// CHECK-NEXT: return %[[C]] : memref<4xf32>
func.func @chain(%x: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %a[%i] : memref<4xf32>
  }
  %b = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %b[%i] : memref<4xf32>
  }
  %c = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %c[%i] : memref<4xf32>
  }
  return %c : memref<4xf32>
}

// The same chain inside main: every buffer is freed, valgrind sees no leak.
// CHECK-LABEL: func.func @main
// CHECK-COUNT-4: memref.dealloc
// CHECK-NOT:  memref.dealloc
// CHECK:      return
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %x = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %one, %x[%i] : memref<4xf32>
  }
  %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %a[%i] : memref<4xf32>
  }
  %b = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %b[%i] : memref<4xf32>
  }
  %c = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %c[%i] : memref<4xf32>
  }
  return
}
