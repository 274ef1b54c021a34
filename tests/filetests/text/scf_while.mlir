// RUN: onnxc opt %s
// scf.while loops, with and without carried values.

// CHECK: module {
// CHECK-LABEL: func.func @count(%arg0: i32, %arg1: i32) -> i32 {
// CHECK-NEXT: %0 = arith.constant 1 : i32
// CHECK-NEXT: %1 = scf.while (%arg2 = %arg0) : (i32) -> i32 {
// CHECK-NEXT: %2 = arith.cmpi slt, %arg2, %arg1 : i32
// CHECK-NEXT: scf.condition(%2) %arg2 : i32
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%arg2: i32):
// CHECK-NEXT: %2 = arith.addi %arg2, %0 : i32
// CHECK-NEXT: scf.yield %2 : i32
// CHECK-NEXT: }
// CHECK-NEXT: return %1 : i32
// CHECK-NEXT: }
// CHECK-LABEL: func.func @pair(%arg0: f32, %arg1: index) -> (f32, index) {
// CHECK-NEXT: %0 = arith.constant 1 : index
// CHECK-NEXT: %1:2 = scf.while (%arg2 = %arg0, %arg3 = %arg1) : (f32, index) -> (f32, index) {
// CHECK-NEXT: %2 = arith.constant 0 : index
// CHECK-NEXT: %3 = arith.cmpi ne, %arg3, %2 : index
// CHECK-NEXT: scf.condition(%3) %arg2, %arg3 : f32, index
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%arg2: f32, %arg3: index):
// CHECK-NEXT: %2 = arith.addf %arg2, %arg2 : f32
// CHECK-NEXT: %3 = arith.subi %arg3, %0 : index
// CHECK-NEXT: scf.yield %2, %3 : f32, index
// CHECK-NEXT: } attributes {test.loop}
// CHECK-NEXT: return %1#0, %1#1 : f32, index
// CHECK-NEXT: }
// CHECK-LABEL: func.func @flag(%arg0: i1) {
// CHECK-NEXT: scf.while : () -> () {
// CHECK-NEXT: scf.condition(%arg0)
// CHECK-NEXT: } do {
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK-NEXT: }

func.func @count(%init: i32, %limit: i32) -> i32 {
  %one = arith.constant 1 : i32
  %r = scf.while (%i = %init) : (i32) -> i32 {
    %c = arith.cmpi slt, %i, %limit : i32
    scf.condition(%c) %i : i32
  } do {
  ^bb0(%x: i32):
    %next = arith.addi %x, %one : i32
    scf.yield %next : i32
  }
  return %r : i32
}
func.func @pair(%a: f32, %n: index) -> (f32, index) {
  %c1 = arith.constant 1 : index
  %r:2 = scf.while (%x = %a, %k = %n) : (f32, index) -> (f32, index) {
    %c0 = arith.constant 0 : index
    %go = arith.cmpi ne, %k, %c0 : index
    scf.condition(%go) %x, %k : f32, index
  } do {
  ^bb0(%y: f32, %j: index):
    %y2 = arith.addf %y, %y : f32
    %j2 = arith.subi %j, %c1 : index
    scf.yield %y2, %j2 : f32, index
  } attributes {test.loop}
  return %r#0, %r#1 : f32, index
}
func.func @flag(%c: i1) {
  scf.while : () -> () {
    scf.condition(%c)
  } do {
    scf.yield
  }
  return
}
