// RUN: onnxc opt %s -p "ownership-based-deallocation" | filecheck

// Memrefs crossing blocks through cf.br / cf.cond_br. Every memref block
// argument gets an i1 ownership argument; each edge that ends a buffer's
// life frees it in a dealloc before the branch, its condition anded with
// the edge condition, retaining the edge's memref operands: the retained
// results are the successor's ownership flags.

// @edges: %b dies on the true edge (freed under %c) and moves into ^right
// on the false edge (freed there under not-%c unless retained, i.e. never:
// the flag says ^right owns it). %a is used in ^right, so it stays owned
// by the entry block and its edge flag is false.
// CHECK-LABEL: func.func @edges
// CHECK:       %[[A:.*]] = memref.alloc()
// CHECK:       %[[B:.*]] = memref.alloc()
// CHECK:       %[[T:.*]] = bufferization.dealloc (%[[B]] : memref<2xf32>) if (%[[C:.*]]) retain (%[[A]] : memref<2xf32>)
// CHECK:       %[[NOT:.*]] = arith.xori %[[C]], %{{.*}} : i1
// CHECK:       %[[F:.*]] = bufferization.dealloc (%[[B]] : memref<2xf32>) if (%[[NOT]]) retain (%[[B]] : memref<2xf32>)
// CHECK:       cf.cond_br %[[C]], ^bb1(%[[A]], %[[T]] : memref<2xf32>, i1), ^bb2(%[[B]], %[[F]] : memref<2xf32>, i1)
// CHECK:     ^bb2(%[[Y:.*]]: memref<2xf32>, %[[YF:.*]]: i1):
// CHECK:       %[[S:.*]] = arith.select %{{.*}}, %[[Y]], %[[A]]
// CHECK:       %[[SF:.*]] = bufferization.dealloc (%[[Y]] : memref<2xf32>) if (%[[YF]]) retain (%[[S]] : memref<2xf32>)
// CHECK:       cf.br ^bb3(%[[S]], %[[SF]] : memref<2xf32>, i1)
// CHECK:     ^bb3(%[[R:.*]]: memref<2xf32>, %[[RF:.*]]: i1):
// CHECK:       bufferization.dealloc (%[[R]], %[[A]] : memref<2xf32>, memref<2xf32>) if (%[[RF]], %{{.*}}) retain (%[[R]] : memref<2xf32>)
// CHECK-NEXT:  return %[[R]]
func.func @edges(%c: i1, %d: i1) -> memref<2xf32> {
  %a = memref.alloc() : memref<2xf32>
  %b = memref.alloc() : memref<2xf32>
  cf.cond_br %c, ^left(%a : memref<2xf32>), ^right(%b : memref<2xf32>)
^left(%x: memref<2xf32>):
  cf.br ^join(%x : memref<2xf32>)
^right(%y: memref<2xf32>):
  %s = arith.select %d, %y, %a : memref<2xf32>
  cf.br ^join(%s : memref<2xf32>)
^join(%r: memref<2xf32>):
  return %r : memref<2xf32>
}

// @loop: a loop from back edges (upstream rejects these). The inits are
// used only by the branch into the header, so the loop owns them (the
// retained results are true); on the back edge the body frees what it stops carrying and
// retains the new pair. The exit frees both carried buffers after the
// last use of %x.
// CHECK-LABEL: func.func @loop
// CHECK:       %[[I0:.*]] = memref.alloc()
// CHECK:       %[[I1:.*]] = memref.alloc()
// CHECK:       %[[IN:.*]]:2 = bufferization.dealloc (%[[I0]], %[[I1]] : {{.*}}) if ({{.*}}) retain (%[[I0]], %[[I1]] : {{.*}})
// CHECK-NEXT:  cf.br ^bb1(%{{.*}}, %[[I0]], %[[I1]], %[[IN]]#0, %[[IN]]#1 : index, memref<4xf32>, memref<4xf32>, i1, i1)
// CHECK:     ^bb1(%{{.*}}: index, %[[X:.*]]: memref<4xf32>, %[[Y:.*]]: memref<4xf32>, %[[XF:.*]]: i1, %[[YF:.*]]: i1):
// CHECK:       cf.cond_br
// CHECK:     ^bb2:
// CHECK:       %[[N:.*]] = memref.alloc()
// CHECK:       %[[K:.*]]:2 = bufferization.dealloc (%[[X]], %[[Y]], %[[N]] : {{.*}}) if (%[[XF]], %[[YF]], %{{.*}}) retain (%[[N]], %[[X]] : memref<4xf32>, memref<4xf32>)
// CHECK-NEXT:  cf.br ^bb1(%{{.*}}, %[[N]], %[[X]], %[[K]]#0, %[[K]]#1 : index, memref<4xf32>, memref<4xf32>, i1, i1)
// CHECK:     ^bb3:
// CHECK:       memref.copy %[[X]], %[[R:.*]] :
// CHECK:       bufferization.dealloc (%[[X]], %[[Y]] : memref<4xf32>, memref<4xf32>) if (%[[XF]], %[[YF]])
// CHECK-NEXT:  return %[[R]]
func.func @loop(%n: index) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  cf.br ^head(%c0, %a, %b : index, memref<4xf32>, memref<4xf32>)
^head(%i: index, %x: memref<4xf32>, %y: memref<4xf32>):
  %go = arith.cmpi slt, %i, %n : index
  cf.cond_br %go, ^body, ^exit
^body:
  memref.copy %x, %y : memref<4xf32> to memref<4xf32>
  %t = memref.alloc() : memref<4xf32>
  memref.copy %y, %t : memref<4xf32> to memref<4xf32>
  %i2 = arith.addi %i, %c1 : index
  cf.br ^head(%i2, %t, %x : index, memref<4xf32>, memref<4xf32>)
^exit:
  %r = memref.alloc() : memref<4xf32>
  memref.copy %x, %r : memref<4xf32> to memref<4xf32>
  return %r : memref<4xf32>
}

// @through: a buffer used after the join stays owned by its block: the
// argument that may alias it gets flag false and keeps it alive.
// CHECK-LABEL: func.func @through
// CHECK:       %[[FALSE:.*]] = arith.constant false
// CHECK:       %[[A:.*]] = memref.alloc()
// CHECK:       cf.cond_br %{{.*}}, ^bb1, ^bb2(%[[A]], %[[FALSE]] : memref<2xf32>, i1)
// CHECK:     ^bb2(%[[P:.*]]: memref<2xf32>, %[[PF:.*]]: i1):
// CHECK:       memref.copy %[[P]], %[[A]]
// CHECK:       bufferization.dealloc (%[[P]], %[[A]] : memref<2xf32>, memref<2xf32>) if (%[[PF]], %{{.*}})
func.func @through(%c: i1) {
  %a = memref.alloc() : memref<2xf32>
  cf.cond_br %c, ^fresh, ^join(%a : memref<2xf32>)
^fresh:
  %b = memref.alloc() : memref<2xf32>
  cf.br ^join(%b : memref<2xf32>)
^join(%p: memref<2xf32>):
  memref.copy %p, %a : memref<2xf32> to memref<2xf32>
  return
}
