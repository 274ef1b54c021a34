// RUN: onnxc opt %s -p "expand-realloc,ownership-based-deallocation" | filecheck
// RUN: onnxc opt %s -p "dealloc-pipeline" | filecheck --check-prefix=PIPE

// More of the situations the upstream ownership-based deallocation
// document and the MLIR-HLO deallocation / buffer-reuse notes walk
// through, in our own IR (see also upstream-examples.mlir, cf-branches.mlir,
// loop-results.mlir, buffer-reuse.mlir, hoist-elide.mlir, split-alloc.mlir).

// Upstream's main example: a select of a heap and a stack buffer, and a
// cf.cond_br reaching one block from both edges with different operands
// (the heap buffer, or the caller's). The heap buffer stays alive through
// the select in the successor, so neither edge hands it over (flags
// false, folded away) and it is freed after its last use there; the
// caller's buffer and the stack buffer are never freed.
// CHECK-LABEL: func.func @two_edges_one_block
// CHECK:       %[[A:.*]] = memref.alloc(
// CHECK:       %[[S:.*]] = memref.alloca(
// CHECK:       %[[P:.*]] = arith.select %{{.*}}, %[[A]], %[[S]]
// CHECK:       cf.cond_br %{{.*}}, ^bb1(%[[A]], %{{.*}} : memref<?xi8>, i1), ^bb1(%arg0, %{{.*}} : memref<?xi8>, i1)
// CHECK:     ^bb1(%[[X:.*]]: memref<?xi8>, %{{.*}}: i1):
// CHECK-NEXT:  %[[F:.*]] = arith.constant false
// CHECK-NEXT:  memref.copy %[[X]], %[[P]]
// CHECK:       bufferization.dealloc (%[[X]], %[[A]] : memref<?xi8>, memref<?xi8>) if (%[[F]], %{{.*}})
// PIPE-LABEL:  func.func @two_edges_one_block
// PIPE:        memref.copy
// PIPE-NEXT:   memref.dealloc %{{.*}} : memref<?xi8>
// PIPE-NEXT:   return
func.func @two_edges_one_block(%m: memref<?xi8>, %sel: i1, %br: i1, %n: index) {
  %a = memref.alloc(%n) : memref<?xi8>
  %s = memref.alloca(%n) : memref<?xi8>
  %pick = arith.select %sel, %a, %s : memref<?xi8>
  cf.cond_br %br, ^join(%a : memref<?xi8>), ^join(%m : memref<?xi8>)
^join(%p: memref<?xi8>):
  memref.copy %p, %pick : memref<?xi8> to memref<?xi8>
  return
}

// MLIR-HLO's implicit capture: a loop-carried buffer conditionally grown
// by memref.realloc inside an scf.if. expand-realloc turns the realloc of
// a loop argument into alloc + copy; the old buffer is then freed by the
// ordinary rule, under its flag, after its last use.
// PIPE-LABEL:  func.func @grow_in_loop
// PIPE-NOT:    memref.realloc
// PIPE:        scf.for
// PIPE:          scf.if
// PIPE:            memref.alloc(
// PIPE:          "test.use"
// PIPE-NEXT:     bufferization.dealloc (%{{.*}} : memref<?xi32>) if (%{{.*}}) retain (%{{.*}} : memref<?xi32>)
// PIPE:        bufferization.dealloc
// PIPE-NEXT:   return
func.func @grow_in_loop(%size: index, %n: index, %grow: i1, %new: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %alloc = memref.alloc(%size) : memref<?xi32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %alloc) -> memref<?xi32> {
    %mem = scf.if %grow -> memref<?xi32> {
      %g = memref.realloc %x(%new) : memref<?xi32> to memref<?xi32>
      scf.yield %g : memref<?xi32>
    } else {
      scf.yield %x : memref<?xi32>
    }
    "test.use"(%mem) : (memref<?xi32>) -> ()
    scf.yield %mem : memref<?xi32>
  }
  return
}

// The two forms MLIR-HLO rejects (a realloc in an scf.if without else; a
// realloc of a buffer from outside the loop): here expand-realloc makes
// them copies, so the source is freed once, after the scf.if / loop.
// PIPE-LABEL:  func.func @realloc_no_else
// PIPE:        %[[A:.*]] = memref.alloc() : memref<2xi32>
// PIPE:        scf.if
// PIPE:          memref.dealloc
// PIPE:        }
// PIPE-NEXT:   memref.dealloc %[[A]]
func.func @realloc_no_else(%c: i1) {
  %alloc = memref.alloc() : memref<2xi32>
  scf.if %c {
    %g = memref.realloc %alloc : memref<2xi32> to memref<4xi32>
    "test.use"(%g) : (memref<4xi32>) -> ()
  }
  return
}

// PIPE-LABEL:  func.func @realloc_outer
// PIPE:        %[[A:.*]] = memref.alloc() : memref<2xi32>
// PIPE:        "test.use"
// PIPE-NOT:      memref.dealloc %[[A]]
// PIPE:        }
// PIPE-NEXT:   memref.dealloc %[[A]]
func.func @realloc_outer(%c: i1, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %alloc = memref.alloc() : memref<2xi32>
  scf.for %i = %c0 to %n step %c1 {
    %r = scf.if %c -> memref<4xi32> {
      %g = memref.realloc %alloc : memref<2xi32> to memref<4xi32>
      scf.yield %g : memref<4xi32>
    } else {
      %h = memref.alloc() : memref<4xi32>
      scf.yield %h : memref<4xi32>
    }
    "test.use"(%r) : (memref<4xi32>) -> ()
  }
  return
}
