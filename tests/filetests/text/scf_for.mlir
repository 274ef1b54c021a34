// RUN: onnxc opt %s
// scf.for with and without iter_args, nested, with non-index bounds.

// CHECK: module {
// CHECK-LABEL: func.func @sum(%arg0: memref<?xf32>, %arg1: index) -> f32 {
// CHECK-NEXT: %0 = arith.constant 0 : index
// CHECK-NEXT: %1 = arith.constant 1 : index
// CHECK-NEXT: %2 = arith.constant 0.0e+00 : f32
// CHECK-NEXT: %3 = scf.for %arg2 = %0 to %arg1 step %1 iter_args(%arg3 = %2) -> (f32) {
// CHECK-NEXT: %4 = memref.load %arg0[%arg2] : memref<?xf32>
// CHECK-NEXT: %5 = arith.addf %arg3, %4 : f32
// CHECK-NEXT: scf.yield %5 : f32
// CHECK-NEXT: }
// CHECK-NEXT: return %3 : f32
// CHECK-NEXT: }
// CHECK-LABEL: func.func @fill(%arg0: memref<?x?xf32>, %arg1: f32) {
// CHECK-NEXT: %0 = arith.constant 0 : index
// CHECK-NEXT: %1 = arith.constant 1 : index
// CHECK-NEXT: %2 = memref.dim %arg0, %0 : memref<?x?xf32>
// CHECK-NEXT: %3 = memref.dim %arg0, %1 : memref<?x?xf32>
// CHECK-NEXT: scf.for %arg2 = %0 to %2 step %1 {
// CHECK-NEXT: scf.for %arg3 = %0 to %3 step %1 {
// CHECK-NEXT: memref.store %arg1, %arg0[%arg2, %arg3] : memref<?x?xf32>
// CHECK-NEXT: }
// CHECK-NEXT: } {test.loop}
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK-LABEL: func.func @two_carried(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: f32) -> (f32, i32) {
// CHECK-NEXT: %0:2 = scf.for %arg4 = %arg0 to %arg1 step %arg2 iter_args(%arg5 = %arg3, %arg6 = %arg0) -> (f32, i32)  : i32 {
// CHECK-NEXT: %1 = arith.mulf %arg5, %arg5 : f32
// CHECK-NEXT: %2 = arith.addi %arg6, %arg4 : i32
// CHECK-NEXT: scf.yield %1, %2 : f32, i32
// CHECK-NEXT: }
// CHECK-NEXT: scf.for %arg4 = %arg0 to %arg1 step %arg2  : i32 {
// CHECK-NEXT: }
// CHECK-NEXT: return %0#0, %0#1 : f32, i32
// CHECK-NEXT: }
// CHECK-NEXT: }

func.func @sum(%m: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %m[%i] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    scf.yield %s : f32
  }
  return %r : f32
}
func.func @fill(%m: memref<?x?xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = memref.dim %m, %c0 : memref<?x?xf32>
  %d1 = memref.dim %m, %c1 : memref<?x?xf32>
  scf.for %i = %c0 to %d0 step %c1 {
    scf.for %j = %c0 to %d1 step %c1 {
      memref.store %v, %m[%i, %j] : memref<?x?xf32>
    }
  } {test.loop}
  return
}
func.func @two_carried(%lb: i32, %ub: i32, %st: i32, %a: f32) -> (f32, i32) {
  %r:2 = scf.for %i = %lb to %ub step %st iter_args(%x = %a, %k = %lb) -> (f32, i32) : i32 {
    %y = arith.mulf %x, %x : f32
    %j = arith.addi %k, %i : i32
    scf.yield %y, %j : f32, i32
  }
  scf.for %i = %lb to %ub step %st : i32 {
  }
  return %r#0, %r#1 : f32, i32
}
