// RUN: onnxc opt %s -p convert-scf-to-cf | filecheck

// scf.for becomes a header block with the induction variable and iter_args
// as block arguments, a body, and an exit; no scf op remains.

// CHECK-LABEL: func.func @sum
// CHECK-NOT:     scf.
// CHECK:         cf.br ^bb1(%{{.*}}, %{{.*}} : index, i64)
// CHECK:       ^bb1(%[[IV:.*]]: index, %[[ACC:.*]]: i64):
// CHECK:         %[[LT:.*]] = arith.cmpi slt, %[[IV]], %{{.*}} : index
// CHECK-NEXT:    cf.cond_br %[[LT]], ^bb2, ^bb3(%[[ACC]] : i64)
// CHECK:       ^bb3(%[[R:.*]]: i64):
// CHECK-NEXT:    return %[[R]] : i64
func.func @sum(%n: index) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %z) -> (i64) {
    %v = arith.index_cast %i : index to i64
    %t = arith.addi %s, %v : i64
    scf.yield %t : i64
  }
  return %r : i64
}
