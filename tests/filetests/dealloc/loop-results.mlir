// RUN: onnxc opt %s -p "dealloc-pipeline" | filecheck

// The loop passes of the buffer-reuse family (MLIR-HLO's loop
// simplification and double buffering), on loops whose inits are owned
// buffers handed to the loop (the loop is their last use).

func.func private @step(memref<64xi32>, memref<64xi32>)

// @rotate: a while loop that only rotates two buffers. Its results are the
// two allocations in some order, so the frees after the loop go onto the
// allocations themselves (unconditional), and nothing is freed inside.
// CHECK-LABEL: func.func @rotate
// CHECK:       %[[A:.*]] = memref.alloc()
// CHECK:       %[[B:.*]] = memref.alloc()
// CHECK:       scf.while
// CHECK-NOT:   dealloc
// CHECK:       } do {
// CHECK-NOT:   dealloc
// CHECK:       }
// CHECK-DAG:   memref.dealloc %[[A]]
// CHECK-DAG:   memref.dealloc %[[B]]
// CHECK:       return
func.func @rotate(%go: i1) {
  %a = memref.alloc() : memref<64xi32>
  %b = memref.alloc() : memref<64xi32>
  func.call @step(%a, %b) : (memref<64xi32>, memref<64xi32>) -> ()
  %r:2 = scf.while (%x = %a, %y = %b) : (memref<64xi32>, memref<64xi32>) -> (memref<64xi32>, memref<64xi32>) {
    scf.condition(%go) %y, %x : memref<64xi32>, memref<64xi32>
  } do {
  ^bb0(%x: memref<64xi32>, %y: memref<64xi32>):
    func.call @step(%x, %y) : (memref<64xi32>, memref<64xi32>) -> ()
    scf.yield %x, %y : memref<64xi32>, memref<64xi32>
  }
  func.call @step(%r#0, %r#1) : (memref<64xi32>, memref<64xi32>) -> ()
  return
}

// @next: every iteration computes a new buffer from the carried one, which
// it then frees: the two live ranges overlap, so plain hoisting cannot
// apply. Double buffering allocates the second buffer once before the loop
// and swaps the two; after loop-result simplification both are freed
// unconditionally after the loop. No allocation is left in the loop.
// CHECK-LABEL: func.func @next
// CHECK:       %[[A:.*]] = memref.alloc()
// CHECK:       %[[S:.*]] = memref.alloc()
// CHECK:       %[[R:.*]]:4 = scf.for {{.*}} iter_args(%[[X:.*]] = %[[A]], %[[Y:.*]] = %[[S]], {{.*}}) -> (memref<64xi32>, memref<64xi32>, i1, i1)
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     dealloc
// CHECK:         func.call @step(%[[Y]], %[[X]])
// CHECK-NEXT:    scf.yield %[[Y]], %[[X]],
// CHECK:       call @step(%[[R]]#0, %[[R]]#0)
// CHECK-DAG:   memref.dealloc %[[A]]
// CHECK-DAG:   memref.dealloc %[[S]]
func.func @next(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<64xi32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a) -> memref<64xi32> {
    %t = memref.alloc() : memref<64xi32>
    func.call @step(%t, %x) : (memref<64xi32>, memref<64xi32>) -> ()
    scf.yield %t : memref<64xi32>
  }
  func.call @step(%r, %r) : (memref<64xi32>, memref<64xi32>) -> ()
  return
}

// @grows: the new buffer's size changes every iteration: no double
// buffering; the allocation stays in the loop and the carried buffer is
// freed there under its flag.
// CHECK-LABEL: func.func @grows
// CHECK:       scf.for
// CHECK:         memref.alloc(%{{.*}})
// CHECK:         bufferization.dealloc
// CHECK:         scf.yield
func.func @grows(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc(%c1) : memref<?xi32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a) -> memref<?xi32> {
    %t = memref.alloc(%i) : memref<?xi32>
    "test.fill"(%t, %x) : (memref<?xi32>, memref<?xi32>) -> ()
    scf.yield %t : memref<?xi32>
  }
  "test.use"(%r) : (memref<?xi32>) -> ()
  return
}

// @kept: the init is used after the loop, so the loop does not own it
// (flag false): no rewrite may free it early or move its free.
// CHECK-LABEL: func.func @kept
// CHECK:       %[[A:.*]] = memref.alloc()
// CHECK:       scf.for
// CHECK:         memref.alloc()
// CHECK:       call @step(%[[A]],
// CHECK:       dealloc
func.func @kept(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<64xi32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a) -> memref<64xi32> {
    %t = memref.alloc() : memref<64xi32>
    func.call @step(%t, %x) : (memref<64xi32>, memref<64xi32>) -> ()
    scf.yield %t : memref<64xi32>
  }
  func.call @step(%a, %r) : (memref<64xi32>, memref<64xi32>) -> ()
  return
}
