// RUN: onnxc opt %s -p "promote-buffers-to-stack" | filecheck
// RUN: onnxc opt %s -p "promote-buffers-to-stack{max-bytes=64}" | filecheck --check-prefix=SMALL
// RUN: onnxc opt %s -p "promote-buffers-to-stack,dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// Small statically shaped buffers of the entry block that never leave the
// function become memref.alloca (budget: 1024 bytes each, 16 KiB per
// function by default). Not promoted: returned or yielded buffers, dynamic
// shapes, buffers over the budget, buffers inside loops or branches.
// CHECK-LABEL: func.func @f
// CHECK:       memref.alloca() : memref<16xf32>
// CHECK:       memref.alloc() : memref<1024xf32>
// CHECK:       memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:       memref.alloc() : memref<4xf32>
// CHECK:       scf.for
// CHECK:         memref.alloc() : memref<2xf32>
// SMALL-LABEL: func.func @f
// SMALL:       memref.alloca() : memref<16xf32>
// SMALL-LABEL: func.func @g
// SMALL:       memref.alloc() : memref<32xf32>
func.func @f(%n: index) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = arith.constant 1.0 : f32
  %small = memref.alloc() : memref<16xf32>
  %big = memref.alloc() : memref<1024xf32>
  %dyn = memref.alloc(%n) : memref<?xf32>
  %ret = memref.alloc() : memref<4xf32>
  memref.store %x, %small[%c0] : memref<16xf32>
  memref.store %x, %big[%c0] : memref<1024xf32>
  memref.store %x, %dyn[%c0] : memref<?xf32>
  memref.store %x, %ret[%c0] : memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.alloc() : memref<2xf32>
    memref.store %x, %t[%c0] : memref<2xf32>
  }
  return %ret : memref<4xf32>
}

// 128 bytes: promoted by default, not with max-bytes=64.
// CHECK-LABEL: func.func @g
// CHECK:       memref.alloca() : memref<32xf32>
func.func @g() -> f32 {
  %c0 = arith.constant 0 : index
  %x = arith.constant 2.0 : f32
  %a = memref.alloc() : memref<32xf32>
  memref.store %x, %a[%c0] : memref<32xf32>
  %y = memref.load %a[%c0] : memref<32xf32>
  return %y : f32
}

// RUNOUT: 7
func.func private @printI64(i64)
func.func private @printNewline()
func.func @main() {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %v = arith.constant 7 : i64
  %a = memref.alloc() : memref<4xi64>
  %b = memref.alloc(%c3) : memref<?xi64>
  memref.store %v, %a[%c0] : memref<4xi64>
  %x = memref.load %a[%c0] : memref<4xi64>
  memref.store %x, %b[%c0] : memref<?xi64>
  %y = memref.load %b[%c0] : memref<?xi64>
  func.call @printI64(%y) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}
