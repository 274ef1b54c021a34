// RUN: onnxc opt %s -p canonicalize | filecheck

// Integer folding at the type's width, two's complement; what arith leaves
// undefined (division by zero, shifts by the width) stays.
// CHECK-LABEL: func.func @ints
// CHECK-DAG:   arith.constant 7 : index
// CHECK-DAG:   arith.constant -128 : i8
// CHECK-DAG:   arith.constant 126 : i8
// CHECK-DAG:   arith.constant -4 : i32
// CHECK-DAG:   arith.constant 255 : i32
// CHECK-DAG:   arith.constant -2 : i64
// CHECK-DAG:   arith.constant true
// CHECK-DAG:   arith.divsi
// CHECK-DAG:   arith.shli
// CHECK-NOT:   arith.addi
// CHECK-NOT:   arith.floordivsi
func.func @ints() -> (index, i8, i8, i32, i32, i32, i64, i1, i32, i32) {
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %a = arith.addi %c3, %c4 : index
  %m = arith.constant 127 : i8
  %one = arith.constant 1 : i8
  %wrap = arith.addi %m, %one : i8
  %two = arith.constant 2 : i8
  %neg = arith.constant -128 : i8
  %sub = arith.subi %neg, %two : i8
  %x = arith.constant -7 : i32
  %y = arith.constant 2 : i32
  %fl = arith.floordivsi %x, %y : i32
  %cd = arith.ceildivsi %x, %y : i32
  %r = arith.constant -3 : i32
  %nr = arith.remsi %r, %y : i32
  %s = arith.constant 255 : i32
  %e = arith.extui %s : i32 to i64
  %t = arith.trunci %e : i64 to i8
  %u = arith.extui %t : i8 to i32
  %mx = arith.constant -2 : i64
  %mm = arith.maxsi %mx, %mx : i64
  %lt = arith.cmpi ult, %c3, %c4 : index
  %z = arith.constant 0 : i32
  %dz = arith.divsi %x, %z : i32
  %big = arith.constant 32 : i32
  %sh = arith.shli %x, %big : i32
  %q = arith.addi %nr, %cd : i32
  return %a, %wrap, %sub, %fl, %q, %u, %mm, %lt, %dz, %sh : index, i8, i8, i32, i32, i32, i64, i1, i32, i32
}

// Identities: x + 0, 0 + x (constants go right), x * 1, x - x, x & x,
// select with equal sides or a constant condition; floats only exactly:
// x * 1.0 and x + -0.0 fold, x + 0.0 and x * 0.0 do not.
// CHECK-LABEL: func.func @identities
// CHECK-SAME:  (%[[X:.*]]: index, %[[C:.*]]: i1, %[[F:.*]]: f32)
// CHECK-DAG:   %[[Z:.*]] = arith.constant 0 : index
// CHECK-DAG:   %[[P:.*]] = arith.addf %[[F]], %{{.*}} : f32
// CHECK-DAG:   %[[Q:.*]] = arith.mulf %[[F]], %{{.*}} : f32
// CHECK:       return %[[X]], %[[X]], %[[Z]], %[[X]], %[[X]], %[[X]], %[[F]], %[[F]], %[[P]], %[[Q]]
func.func @identities(%x: index, %c: i1, %f: f32) -> (index, index, index, index, index, index, f32, f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = arith.constant true
  %a = arith.addi %x, %c0 : index
  %b = arith.addi %c0, %x : index
  %d = arith.subi %a, %b : index
  %e = arith.muli %c1, %x : index
  %g = arith.andi %e, %x : index
  %s = arith.select %c, %g, %g : index
  %s2 = arith.select %t, %s, %c0 : index
  %one = arith.constant 1.0 : f32
  %nz = arith.constant -0.0 : f32
  %pz = arith.constant 0.0 : f32
  %f1 = arith.mulf %f, %one : f32
  %f2 = arith.addf %f, %nz : f32
  %f3 = arith.addf %f, %pz : f32
  %f4 = arith.mulf %f, %pz : f32
  return %a, %b, %d, %e, %s, %s2, %f1, %f2, %f3, %f4 : index, index, index, index, index, index, f32, f32, f32, f32
}

// Floats fold in their own width: 2^24 + 1 is 2^24 in f32, not in f64;
// NaN compares unordered.
// CHECK-LABEL: func.func @floats
// CHECK-NEXT:  %[[A:.*]] = arith.constant 1.6777216e+07 : f32
// CHECK-NEXT:  %[[D:.*]] = arith.constant 1.6777217e+07 : f64
// CHECK-NEXT:  %[[B:.*]] = arith.constant true
// CHECK-NEXT:  return %[[A]], %[[D]], %[[B]]
func.func @floats() -> (f32, f64, i1) {
  %a = arith.constant 16777216.0 : f32
  %b = arith.constant 1.0 : f32
  %s = arith.addf %a, %b : f32
  %a64 = arith.constant 16777216.0 : f64
  %b64 = arith.constant 1.0 : f64
  %s64 = arith.addf %a64, %b64 : f64
  %n = arith.constant 0x7FC00000 : f32
  %u = arith.cmpf uno, %n, %a : f32
  return %s, %s64, %u : f32, f64, i1
}

// scf.if on a constant runs its branch in place; a result both branches
// yield the same way is that value; a loop without iterations is its
// inits; dims of static shapes and of allocations are known; loops and
// branches that only compute and whose results are unused go away.
// CHECK-LABEL: func.func @control
// CHECK-SAME:  (%[[N:.*]]: index, %[[C:.*]]: i1, %[[M:.*]]: memref<4xf32>)
// CHECK-NOT:   scf.
// CHECK:       %[[A:.*]] = memref.alloc(%[[N]])
// CHECK:       memref.store
// CHECK-NOT:   scf.
// CHECK:       return %[[N]], %[[M]]
func.func @control(%n: index, %c: i1, %m: memref<4xf32>) -> (index, memref<4xf32>, index, index, i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = arith.constant true
  %v = arith.constant 2.0 : f32
  %r = scf.if %t -> (index) {
    %a = memref.alloc(%n) : memref<?xf32>
    memref.store %v, %a[%c0] : memref<?xf32>
    %d = memref.dim %a, %c0 : memref<?xf32>
    scf.yield %d : index
  } else {
    scf.yield %c0 : index
  }
  %w = scf.for %i = %c1 to %c0 step %c1 iter_args(%acc = %m) -> (memref<4xf32>) {
    scf.yield %acc : memref<4xf32>
  }
  %four = memref.dim %m, %c0 : memref<4xf32>
  %k = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (index) {
    %s = arith.addi %acc, %i : index
    scf.yield %s : index
  }
  %f:2 = scf.if %c -> (i1, index) {
    scf.yield %t, %k : i1, index
  } else {
    %tt = arith.constant true
    scf.yield %tt, %c1 : i1, index
  }
  return %r, %w, %four, %c0, %f#0 : index, memref<4xf32>, index, index, i1
}
