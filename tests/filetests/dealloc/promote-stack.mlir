// RUN: onnxc opt %s -p "promote-buffers-to-stack" | filecheck
// RUN: onnxc opt %s -p "promote-buffers-to-stack{max-bytes=64}" | filecheck --check-prefix=SMALL
// RUN: onnxc opt %s -p "dealloc-pipeline,promote-buffers-to-stack" | filecheck --check-prefix=AFTER
// RUN: onnxc opt %s -p "promote-buffers-to-stack,dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT
// RUN: onnxc opt %s -p "dealloc-pipeline,promote-buffers-to-stack" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// Small statically shaped buffers that never leave their region become
// memref.alloca at the start of the function (budget: 1024 bytes each,
// 16 KiB per function by default), in any block: one allocated in a loop
// or a branch is made once there, so the stack does not grow per
// iteration. Not promoted: returned, yielded or branch-passed buffers,
// dynamic shapes, buffers over the budget. After deallocation (the default
// pipeline runs it last) the promoted buffers' frees go.
// CHECK-LABEL: func.func @f
// CHECK-NEXT:  memref.alloca() : memref<16xf32>
// CHECK-NEXT:  memref.alloca() : memref<2xf32>
// CHECK:       memref.alloc() : memref<1024xf32>
// CHECK:       memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:       memref.alloc() : memref<4xf32>
// CHECK:       scf.for
// CHECK-NOT:     memref.alloc
// CHECK:       return
// SMALL-LABEL: func.func @f
// SMALL:       memref.alloca() : memref<16xf32>
// SMALL-LABEL: func.func @g
// SMALL:       memref.alloc() : memref<32xf32>
// AFTER-LABEL: func.func @f
// AFTER-NEXT:  %[[S:.*]] = memref.alloca() : memref<16xf32>
// AFTER-NEXT:  %[[T:.*]] = memref.alloca() : memref<2xf32>
// AFTER-NOT:   memref.dealloc %[[S]]
// AFTER-NOT:   memref.dealloc %[[T]]
// AFTER:       return
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

// Executed: a fixed-size buffer used per iteration (promoted, made once)
// and a loop-carried one (yielded: stays on the heap): 7, then
// sum over i < 100 of (i + 1) = 5050 and the carried buffer's final 100.
// RUNOUT: 7
// RUNOUT-NEXT: 5050
// RUNOUT-NEXT: 100
// RUNOUT-NEXT: 10
func.func private @printI64(i64)
func.func private @printNewline()
// A small buffer handed to a while loop that frees it through its block
// argument: not promoted (the loop may free it), nor are the buffers the
// loop yields. [0..4) + n per element, n = 1: sum 10.
// AFTER-LABEL: func.func @carried
// AFTER:       %[[A:.*]] = memref.alloc() : memref<4xi64>
// AFTER:       scf.while ({{.*}}%[[A]]
func.func @carried(%n: index) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1 : i64
  %z = arith.constant 0 : i64
  %a = memref.alloc() : memref<4xi64>
  scf.for %j = %c0 to %c4 step %c1 {
    %v = arith.index_cast %j : index to i64
    memref.store %v, %a[%j] : memref<4xi64>
  }
  %r:2 = scf.while (%i = %c0, %x = %a) : (index, memref<4xi64>) -> (index, memref<4xi64>) {
    %go = arith.cmpi slt, %i, %n : index
    scf.condition(%go) %i, %x : index, memref<4xi64>
  } do {
  ^bb0(%i: index, %x: memref<4xi64>):
    %b = memref.alloc() : memref<4xi64>
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %x[%j] : memref<4xi64>
      %w = arith.addi %v, %one : i64
      memref.store %w, %b[%j] : memref<4xi64>
    }
    %i2 = arith.addi %i, %c1 : index
    scf.yield %i2, %b : index, memref<4xi64>
  }
  %s = scf.for %j = %c0 to %c4 step %c1 iter_args(%acc = %z) -> (i64) {
    %v = memref.load %r#1[%j] : memref<4xi64>
    %t = arith.addi %acc, %v : i64
    scf.yield %t : i64
  }
  return %s : i64
}

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
  %c1 = arith.constant 1 : index
  %c100 = arith.constant 100 : index
  %z = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %init = memref.alloc() : memref<2xi64>
  memref.store %z, %init[%c0] : memref<2xi64>
  %r:2 = scf.for %i = %c0 to %c100 step %c1 iter_args(%acc = %z, %buf = %init) -> (i64, memref<2xi64>) {
    %t = memref.alloc() : memref<8xi64>
    %iv = arith.index_cast %i : index to i64
    %iv1 = arith.addi %iv, %one : i64
    memref.store %iv1, %t[%c3] : memref<8xi64>
    %l = memref.load %t[%c3] : memref<8xi64>
    %s = arith.addi %acc, %l : i64
    %n = memref.alloc() : memref<2xi64>
    %old = memref.load %buf[%c0] : memref<2xi64>
    %new = arith.addi %old, %one : i64
    memref.store %new, %n[%c0] : memref<2xi64>
    scf.yield %s, %n : i64, memref<2xi64>
  }
  func.call @printI64(%r#0) : (i64) -> ()
  func.call @printNewline() : () -> ()
  %last = memref.load %r#1[%c0] : memref<2xi64>
  func.call @printI64(%last) : (i64) -> ()
  func.call @printNewline() : () -> ()
  %sum = func.call @carried(%c1) : (index) -> i64
  func.call @printI64(%sum) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}
