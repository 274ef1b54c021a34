// RUN: onnxc opt %s -p "dealloc-pipeline" | filecheck
// RUN: onnxc opt %s -p "dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT
// RUN: onnxc opt %s -p "dealloc-pipeline,promote-buffers-to-stack,canonicalize,cse" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// Double buffering of scf.while (ONNX Loop) and of loops whose inits they
// may not own: the buffer an iteration is done with is carried on as a
// spare with its ownership flag instead of being freed, and the next
// iteration's allocation takes the spare when it owns it. From the second
// iteration on no iteration allocates or frees: two buffers in all.

// The shape ONNX Loop lowers to: a loop-carried tensor initialised from a
// graph input (not owned: flag false), replaced every iteration.
// CHECK-LABEL: func.func @onnx_loop
// CHECK:       arith.constant 3 : i64
// CHECK-NEXT:  %[[F:.*]] = arith.constant false
// CHECK-NEXT:  scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %arg1, %{{.*}} = %arg1, %{{.*}} = %{{.*}}, %{{.*}} = %[[F]])
// CHECK:       } do {
// CHECK-NEXT:  ^bb0(%{{.*}}: index, %[[XA:.*]]: memref<4xi64>, %[[SA:.*]]: memref<4xi64>, %[[XF:.*]]: i1, %[[SF:.*]]: i1):
// CHECK-NEXT:    %[[N:.*]] = scf.if %[[SF]] -> (memref<4xi64>) {
// CHECK-NEXT:      scf.yield %[[SA]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[A:.*]] = memref.alloc()
// CHECK-NEXT:      scf.yield %[[A]]
// CHECK-NEXT:    }
// CHECK-NOT:     dealloc
// CHECK:         scf.yield %{{.*}}, %[[N]], %[[XA]], %{{.*}}, %[[XF]]
// CHECK:       }
// CHECK-NEXT:  bufferization.dealloc (%{{.*}}#2 : memref<4xi64>) if (%{{.*}}#4)
func.func @onnx_loop(%n: index, %x0: memref<4xi64>) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %k = arith.constant 3 : i64
  %r:2 = scf.while (%i = %c0, %x = %x0) : (index, memref<4xi64>) -> (index, memref<4xi64>) {
    %go = arith.cmpi slt, %i, %n : index
    scf.condition(%go) %i, %x : index, memref<4xi64>
  } do {
  ^bb0(%i: index, %x: memref<4xi64>):
    %y = memref.alloc() {alignment = 64 : i64} : memref<4xi64>
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %x[%j] : memref<4xi64>
      %w = arith.addi %v, %k : i64
      memref.store %w, %y[%j] : memref<4xi64>
    }
    %i2 = arith.addi %i, %c1 : index
    scf.yield %i2, %y : index, memref<4xi64>
  }
  %s = func.call @sum4(%r#1) : (memref<4xi64>) -> i64
  return %s : i64
}

// An owned init of dynamic, loop-invariant size: the same.
// CHECK-LABEL: func.func @owned
// CHECK:       scf.while
// CHECK:       } do {
// CHECK:         scf.if
// CHECK:           memref.alloc(%arg1)
// CHECK-NOT:     dealloc
// CHECK:         scf.yield
func.func @owned(%n: index, %len: index) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = arith.constant 1 : i64
  %a = memref.alloc(%len) : memref<?xi64>
  scf.for %j = %c0 to %len step %c1 {
    %v = arith.index_cast %j : index to i64
    memref.store %v, %a[%j] : memref<?xi64>
  }
  %r:2 = scf.while (%i = %c0, %x = %a) : (index, memref<?xi64>) -> (index, memref<?xi64>) {
    %go = arith.cmpi slt, %i, %n : index
    scf.condition(%go) %i, %x : index, memref<?xi64>
  } do {
  ^bb0(%i: index, %x: memref<?xi64>):
    %y = memref.alloc(%len) : memref<?xi64>
    scf.for %j = %c0 to %len step %c1 {
      %v = memref.load %x[%j] : memref<?xi64>
      %w = arith.addi %v, %k : i64
      memref.store %w, %y[%j] : memref<?xi64>
    }
    %i2 = arith.addi %i, %c1 : index
    scf.yield %i2, %y : index, memref<?xi64>
  }
  %z = arith.constant 0 : i64
  %s = scf.for %j = %c0 to %len step %c1 iter_args(%acc = %z) -> (i64) {
    %v = memref.load %r#1[%j] : memref<?xi64>
    %t = arith.addi %acc, %v : i64
    scf.yield %t : i64
  }
  return %s : i64
}

// A size that changes every iteration cannot reuse the spare: unchanged.
// CHECK-LABEL: func.func @growing
// CHECK:       } do {
// CHECK:         memref.alloc(%{{.*}}) : memref<?xi64>
// CHECK:         bufferization.dealloc
func.func @growing(%n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc(%c1) : memref<?xi64>
  %r:2 = scf.while (%i = %c1, %x = %a) : (index, memref<?xi64>) -> (index, memref<?xi64>) {
    %go = arith.cmpi slt, %i, %n : index
    scf.condition(%go) %i, %x : index, memref<?xi64>
  } do {
  ^bb0(%i: index, %x: memref<?xi64>):
    %i2 = arith.addi %i, %c1 : index
    %y = memref.alloc(%i2) : memref<?xi64>
    scf.yield %i2, %y : index, memref<?xi64>
  }
  %d = memref.dim %r#1, %c0 : memref<?xi64>
  return %d : index
}

// onnx_loop(n, [1, 2, 3, 4]) = 10 + 12n: n = 0, 1, 2, 5. owned(n, 3) =
// 3 + 3n: n = 0, 1, 4. growing(n) = max(n, 1): n = 0, 3.
// RUNOUT: 10
// RUNOUT-NEXT: 22
// RUNOUT-NEXT: 34
// RUNOUT-NEXT: 70
// RUNOUT-NEXT: 3
// RUNOUT-NEXT: 6
// RUNOUT-NEXT: 15
// RUNOUT-NEXT: 1
// RUNOUT-NEXT: 3
func.func private @printI64(i64)
func.func private @printNewline()

func.func @sum4(%m: memref<4xi64>) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0 : i64
  %s = scf.for %j = %c0 to %c4 step %c1 iter_args(%acc = %z) -> (i64) {
    %v = memref.load %m[%j] : memref<4xi64>
    %t = arith.addi %acc, %v : i64
    scf.yield %t : i64
  }
  return %s : i64
}

func.func @show(%v: i64) {
  func.call @printI64(%v) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %x = memref.alloc() : memref<4xi64>
  scf.for %j = %c0 to %c4 step %c1 {
    %v = arith.index_cast %j : index to i64
    %one = arith.constant 1 : i64
    %w = arith.addi %v, %one : i64
    memref.store %w, %x[%j] : memref<4xi64>
  }
  %a0 = func.call @onnx_loop(%c0, %x) : (index, memref<4xi64>) -> i64
  func.call @show(%a0) : (i64) -> ()
  %a1 = func.call @onnx_loop(%c1, %x) : (index, memref<4xi64>) -> i64
  func.call @show(%a1) : (i64) -> ()
  %a2 = func.call @onnx_loop(%c2, %x) : (index, memref<4xi64>) -> i64
  func.call @show(%a2) : (i64) -> ()
  %a5 = func.call @onnx_loop(%c5, %x) : (index, memref<4xi64>) -> i64
  func.call @show(%a5) : (i64) -> ()
  %b0 = func.call @owned(%c0, %c3) : (index, index) -> i64
  func.call @show(%b0) : (i64) -> ()
  %b1 = func.call @owned(%c1, %c3) : (index, index) -> i64
  func.call @show(%b1) : (i64) -> ()
  %b4 = func.call @owned(%c4, %c3) : (index, index) -> i64
  func.call @show(%b4) : (i64) -> ()
  %g0 = func.call @growing(%c0) : (index) -> index
  %g0i = arith.index_cast %g0 : index to i64
  func.call @show(%g0i) : (i64) -> ()
  %g3 = func.call @growing(%c3) : (index) -> index
  %g3i = arith.index_cast %g3 : index to i64
  func.call @show(%g3i) : (i64) -> ()
  return
}
