// RUN: onnxc opt %s
// A bufferized kernel mixing everything: dynamic shapes, loops, deallocation.

// CHECK: module {
// CHECK-NEXT: memref.global "private" constant @bias : memref<4xf32> = dense<[5.0e-01, 1.0e+00, 1.5e+00, 2.0e+00]>
// CHECK-LABEL: func.func private @log(f32)
// CHECK-LABEL: func.func @kernel(%arg0: memref<?x4xf32>) -> memref<?x4xf32> {
// CHECK-NEXT: %0 = arith.constant 0 : index
// CHECK-NEXT: %1 = arith.constant 1 : index
// CHECK-NEXT: %2 = arith.constant 4 : index
// CHECK-NEXT: %3 = arith.constant true
// CHECK-NEXT: %4 = memref.dim %arg0, %0 : memref<?x4xf32>
// CHECK-NEXT: %5 = memref.get_global @bias : memref<4xf32>
// CHECK-NEXT: %6 = memref.alloc(%4) {alignment = 64 : i64} : memref<?x4xf32>
// CHECK-NEXT: %7 = memref.alloc() : memref<4xf32>
// CHECK-NEXT: scf.for %arg1 = %0 to %4 step %1 {
// CHECK-NEXT: %8 = memref.subview %arg0[%arg1, 0] [1, 4] [1, 1] : memref<?x4xf32> to memref<4xf32, strided<[1], offset: ?>>
// CHECK-NEXT: scf.for %arg2 = %0 to %2 step %1 {
// CHECK-NEXT: %10 = memref.load %8[%arg2] : memref<4xf32, strided<[1], offset: ?>>
// CHECK-NEXT: %11 = memref.load %5[%arg2] : memref<4xf32>
// CHECK-NEXT: %12 = arith.addf %10, %11 : f32
// CHECK-NEXT: %13 = arith.cmpf ogt, %12, %10 : f32
// CHECK-NEXT: %14 = arith.select %13, %12, %10 : f32
// CHECK-NEXT: %15 = math.exp %14 : f32
// CHECK-NEXT: memref.store %15, %7[%arg2] : memref<4xf32>
// CHECK-NEXT: memref.store %15, %6[%arg1, %arg2] : memref<?x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %9 = arith.cmpi eq, %arg1, %0 : index
// CHECK-NEXT: scf.if %9 {
// CHECK-NEXT: %10 = memref.load %7[%0] : memref<4xf32>
// CHECK-NEXT: func.call @log(%10) : (f32) -> ()
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: bufferization.dealloc (%7 : memref<4xf32>) if (%3)
// CHECK-NEXT: return %6 : memref<?x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

module {
  memref.global "private" constant @bias : memref<4xf32> = dense<[0.5, 1.0, 1.5, 2.0]>
  func.func private @log(f32)
  func.func @kernel(%in: memref<?x4xf32>) -> memref<?x4xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %true = arith.constant true
    %n = memref.dim %in, %c0 : memref<?x4xf32>
    %bias = memref.get_global @bias : memref<4xf32>
    %out = memref.alloc(%n) {alignment = 64 : i64} : memref<?x4xf32>
    %tmp = memref.alloc() : memref<4xf32>
    scf.for %i = %c0 to %n step %c1 {
      %row = memref.subview %in[%i, 0] [1, 4] [1, 1] : memref<?x4xf32> to memref<4xf32, strided<[1], offset: ?>>
      scf.for %j = %c0 to %c4 step %c1 {
        %x = memref.load %row[%j] : memref<4xf32, strided<[1], offset: ?>>
        %b = memref.load %bias[%j] : memref<4xf32>
        %y = arith.addf %x, %b : f32
        %pos = arith.cmpf ogt, %y, %x : f32
        %z = arith.select %pos, %y, %x : f32
        %e = math.exp %z : f32
        memref.store %e, %tmp[%j] : memref<4xf32>
        memref.store %e, %out[%i, %j] : memref<?x4xf32>
      }
      %first = arith.cmpi eq, %i, %c0 : index
      scf.if %first {
        %v = memref.load %tmp[%c0] : memref<4xf32>
        func.call @log(%v) : (f32) -> ()
      }
    }
    bufferization.dealloc (%tmp : memref<4xf32>) if (%true)
    return %out : memref<?x4xf32>
  }
}
