// RUN: onnxc opt %s -p cse | filecheck
// RUN: onnxc opt %s -p canonicalize,cse | filecheck --check-prefix=BOTH

// Pure ops repeating a dominating op merge: constants, arithmetic, dims,
// views. Loads (memory may change in between), allocations and calls do
// not, nor do ops whose attributes or result types differ.
// CHECK-LABEL: func.func @straight
// CHECK-SAME:  (%[[M:.*]]: memref<?xf32>, %[[I:.*]]: index)
// CHECK-NEXT:  %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:  %[[C1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:  %[[A:.*]] = arith.addi %[[I]], %[[C0]]
// CHECK-NEXT:  %[[D:.*]] = memref.dim %[[M]], %[[C0]]
// CHECK-NEXT:  %[[L1:.*]] = memref.load %[[M]][%[[A]]]
// CHECK-NEXT:  memref.store %[[L1]], %[[M]][%[[D]]]
// CHECK-NEXT:  %[[L2:.*]] = memref.load %[[M]][%[[A]]]
// CHECK-NEXT:  %[[X:.*]] = memref.alloc(%[[D]])
// CHECK-NEXT:  %[[Y:.*]] = memref.alloc(%[[D]])
// CHECK-NEXT:  %[[S:.*]] = arith.subi %[[I]], %[[C0]]
// CHECK-NEXT:  return %[[A]], %[[A]], %[[D]], %[[L1]], %[[L2]], %[[X]], %[[Y]], %[[S]], %[[C1]]
func.func @straight(%m: memref<?xf32>, %i: index) -> (index, index, index, f32, f32, memref<?xf32>, memref<?xf32>, index, i64) {
  %c0 = arith.constant 0 : index
  %c0b = arith.constant 0 : index
  %c1 = arith.constant 1 : i64
  %a = arith.addi %i, %c0 : index
  %b = arith.addi %i, %c0b : index
  %d = memref.dim %m, %c0 : memref<?xf32>
  %d2 = memref.dim %m, %c0b : memref<?xf32>
  %l1 = memref.load %m[%a] : memref<?xf32>
  memref.store %l1, %m[%d] : memref<?xf32>
  %l2 = memref.load %m[%b] : memref<?xf32>
  %x = memref.alloc(%d) : memref<?xf32>
  %y = memref.alloc(%d2) : memref<?xf32>
  %s = arith.subi %i, %c0 : index
  %c1b = arith.constant 1 : i64
  return %a, %b, %d, %l1, %l2, %x, %y, %s, %c1b : index, index, index, f32, f32, memref<?xf32>, memref<?xf32>, index, i64
}

// Regions see what their enclosing blocks computed, not the reverse, and
// not what a sibling branch computed.
// CHECK-LABEL: func.func @regions
// CHECK-SAME:  (%[[C:.*]]: i1, %[[I:.*]]: index)
// CHECK-NEXT:  %[[K:.*]] = arith.constant 5 : index
// CHECK-NEXT:  %[[A:.*]] = arith.muli %[[I]], %[[K]]
// CHECK-NEXT:  %[[R:.*]] = scf.if %[[C]] -> (index) {
// CHECK-NEXT:    %[[B:.*]] = arith.addi %[[A]], %[[I]]
// CHECK-NEXT:    scf.yield %[[B]]
// CHECK-NEXT:  } else {
// CHECK-NEXT:    %[[E:.*]] = arith.addi %[[A]], %[[I]]
// CHECK-NEXT:    scf.yield %[[E]]
// CHECK-NEXT:  }
// CHECK-NEXT:  %[[F:.*]] = arith.addi %[[A]], %[[I]]
// CHECK-NEXT:  return %[[R]], %[[F]]
// BOTH-LABEL: func.func @regions
// BOTH:        scf.if
func.func @regions(%c: i1, %i: index) -> (index, index) {
  %k = arith.constant 5 : index
  %a = arith.muli %i, %k : index
  %r = scf.if %c -> (index) {
    %k2 = arith.constant 5 : index
    %a2 = arith.muli %i, %k2 : index
    %b = arith.addi %a2, %i : index
    scf.yield %b : index
  } else {
    %e = arith.addi %a, %i : index
    scf.yield %e : index
  }
  %f = arith.addi %a, %i : index
  return %r, %f : index, index
}

// Blocks see the blocks that dominate them: ^bb1 and ^bb2 reuse the
// entry's sum; ^bb3 (reached from both) cannot reuse ^bb1's product.
// CHECK-LABEL: func.func @blocks
// CHECK:       %[[S:.*]] = arith.addi
// CHECK:       ^bb1:
// CHECK-NEXT:    %[[P:.*]] = arith.muli %[[S]], %[[S]]
// CHECK-NEXT:    cf.br ^bb3(%[[S]] : index)
// CHECK:       ^bb2:
// CHECK-NEXT:    cf.br ^bb3(%[[S]] : index)
// CHECK:       ^bb3(%[[V:.*]]: index):
// CHECK-NEXT:    %[[Q:.*]] = arith.muli %[[S]], %[[S]]
// CHECK-NEXT:    return %[[Q]]
// BOTH-LABEL: func.func @blocks
// BOTH:        ^bb1:
// BOTH-NEXT:     cf.br ^bb3
func.func @blocks(%c: i1, %i: index) -> index {
  %s = arith.addi %i, %i : index
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  %s1 = arith.addi %i, %i : index
  %p = arith.muli %s1, %s1 : index
  cf.br ^bb3(%s1 : index)
^bb2:
  %s2 = arith.addi %i, %i : index
  cf.br ^bb3(%s2 : index)
^bb3(%v: index):
  %q = arith.muli %s, %s : index
  return %q : index
}

// Large constants merge too: splats by their value, stored ones by their
// bytes; a different value stays.
// CHECK-LABEL: func.func @large_constants
// CHECK-NEXT:  %[[A:.*]] = arith.constant dense<2.5{{.*}}> : tensor<4096xf32>
// CHECK-NEXT:  %[[B:.*]] = arith.constant dense<5.0{{.*}}> : tensor<4096xf32>
// CHECK-NEXT:  return %[[A]], %[[A]], %[[B]]
func.func @large_constants() -> (tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>) {
  %a = arith.constant dense<0.25> : tensor<4096xf32>
  %b = arith.constant dense<0.25> : tensor<4096xf32>
  %c = arith.constant dense<0.5> : tensor<4096xf32>
  return %a, %b, %c : tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>
}
