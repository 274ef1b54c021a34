// RUN: onnxc opt %s -p "ownership-based-deallocation,dealloc-simplification" | filecheck

// The situations the upstream "Ownership-based Buffer Deallocation" and
// "Buffer Deallocation - Internals" documents walk through, in our IR.

// Function boundary: arguments belong to the caller, results to the caller
// too, so returning an argument returns a copy.
// CHECK-LABEL: func.func @return_arg
// CHECK:       %[[C:.*]] = bufferization.clone %arg0
// CHECK-NEXT:  return %[[C]]
func.func @return_arg(%a: memref<2xf32>) -> memref<2xf32> {
  return %a : memref<2xf32>
}

// Stack buffers and globals are never owned: nothing is freed.
// CHECK-LABEL: func.func @never_owned
// CHECK-NOT:   dealloc
// CHECK:       return
memref.global "private" constant @g : memref<2xf32> = dense<[1.0, 2.0]>
func.func @never_owned() -> f32 {
  %c0 = arith.constant 0 : index
  %s = memref.alloca() : memref<2xf32>
  %g = memref.get_global @g : memref<2xf32>
  memref.copy %g, %s : memref<2xf32> to memref<2xf32>
  %x = memref.load %s[%c0] : memref<2xf32>
  return %x : f32
}

// A view keeps its source alive: the free follows the view's last use.
// CHECK-LABEL: func.func @view
// CHECK:       %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK:       %[[V:.*]] = memref.subview %[[A]]
// CHECK:       memref.load %[[V]]
// CHECK-NEXT:  memref.dealloc %[[A]]
func.func @view() -> f32 {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<8xf32>
  %v = memref.subview %a[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
  %x = memref.load %v[%c0] : memref<4xf32, strided<[1], offset: 2>>
  return %x : f32
}

// The scf.if of the "Internals" document: one branch yields a new buffer,
// the other an existing one; the result's ownership is a runtime flag and
// the outer buffer is only freed once the result is dead.
// CHECK-LABEL: func.func @branch
// CHECK:       %[[A:.*]] = memref.alloc()
// CHECK:       %[[R:.*]]:2 = scf.if %arg0 -> (memref<2xf32>, i1)
// CHECK:         %[[B:.*]] = memref.alloc()
// CHECK:         scf.yield %[[B]], %{{.*}} : memref<2xf32>, i1
// CHECK:         scf.yield %[[A]], %{{.*}} : memref<2xf32>, i1
// CHECK:       memref.load %[[R]]#0
// CHECK-NEXT:  arith.constant true
// CHECK-NEXT:  bufferization.dealloc (%[[A]], %[[R]]#0 : memref<2xf32>, memref<2xf32>) if (%{{.*}}, %[[R]]#1)
func.func @branch(%c: i1) -> f32 {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<2xf32>
  %r = scf.if %c -> (memref<2xf32>) {
    %b = memref.alloc() : memref<2xf32>
    scf.yield %b : memref<2xf32>
  } else {
    scf.yield %a : memref<2xf32>
  }
  %x = memref.load %r[%c0] : memref<2xf32>
  return %x : f32
}

// The loop of the upstream document: each iteration may replace the carried
// buffer. The init dies at the loop, so the loop owns it (flag true); the
// body frees the buffer it no longer carries, under its flag.
// CHECK-LABEL: func.func @loop
// CHECK:       %[[I:.*]] = memref.alloc()
// CHECK:       scf.for {{.*}} iter_args(%[[X:.*]] = %[[I]], %[[O:.*]] = %[[T:.*]]) -> (memref<2xf32>, i1)
// CHECK:         scf.if
// CHECK:         bufferization.dealloc (%[[X]] : memref<2xf32>) if (%[[O]]) retain
// CHECK:         scf.yield
func.func @loop(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = memref.alloc() : memref<2xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %init) -> (memref<2xf32>) {
    %big = arith.cmpi ugt, %i, %c1 : index
    %y = scf.if %big -> (memref<2xf32>) {
      %f = memref.alloc() : memref<2xf32>
      scf.yield %f : memref<2xf32>
    } else {
      scf.yield %x : memref<2xf32>
    }
    scf.yield %y : memref<2xf32>
  }
  %v = memref.load %r[%c0] : memref<2xf32>
  return %v : f32
}
