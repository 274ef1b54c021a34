// RUN: onnxc opt %s
// Unstructured control flow: branches with block arguments and a loop.

// CHECK: module {
// CHECK-LABEL: func.func @loop(%arg0: index, %arg1: memref<?xf32>, %arg2: f32) {
// CHECK-NEXT: %0 = arith.constant 0 : index
// CHECK-NEXT: %1 = arith.constant 1 : index
// CHECK-NEXT: cf.br ^bb1(%0 : index)
// CHECK-NEXT: ^bb1(%2: index):
// CHECK-NEXT: %3 = arith.cmpi sge, %2, %arg0 : index
// CHECK-NEXT: cf.cond_br %3, ^bb3, ^bb2(%2, %arg2 : index, f32)
// CHECK-NEXT: ^bb2(%4: index, %5: f32):
// CHECK-NEXT: memref.store %5, %arg1[%4] : memref<?xf32>
// CHECK-NEXT: %6 = arith.addi %4, %1 : index
// CHECK-NEXT: cf.br ^bb1(%6 : index)
// CHECK-NEXT: ^bb3:
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK-LABEL: func.func @diamond(%arg0: i1, %arg1: f32, %arg2: f32) -> f32 {
// CHECK-NEXT: cf.assert %arg0, "condition must hold"
// CHECK-NEXT: cf.cond_br %arg0, ^bb1, ^bb2
// CHECK-NEXT: ^bb1:
// CHECK-NEXT: cf.br ^bb3(%arg1 : f32)
// CHECK-NEXT: ^bb2:
// CHECK-NEXT: %0 = arith.negf %arg2 : f32
// CHECK-NEXT: cf.br ^bb3(%0 : f32) {test.tag}
// CHECK-NEXT: ^bb3(%1: f32):
// CHECK-NEXT: return %1 : f32
// CHECK-NEXT: }
// CHECK-LABEL: func.func @forward_use(%arg0: i1) -> i32 {
// CHECK-NEXT: cf.cond_br %arg0, ^bb2, ^bb2
// CHECK-NEXT: ^bb1:
// CHECK-NEXT: return %0 : i32
// CHECK-NEXT: ^bb2:
// CHECK-NEXT: %0 = arith.constant 5 : i32
// CHECK-NEXT: cf.br ^bb1
// CHECK-NEXT: }
// CHECK-NEXT: }

func.func @loop(%n: index, %m: memref<?xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  cf.br ^header(%c0 : index)
^header(%i: index):
  %done = arith.cmpi sge, %i, %n : index
  cf.cond_br %done, ^exit, ^body(%i, %v : index, f32)
^body(%j: index, %x: f32):
  memref.store %x, %m[%j] : memref<?xf32>
  %next = arith.addi %j, %c1 : index
  cf.br ^header(%next : index)
^exit:
  return
}
func.func @diamond(%c: i1, %a: f32, %b: f32) -> f32 {
  cf.assert %c, "condition must hold"
  cf.cond_br %c, ^left, ^right
^left:
  cf.br ^join(%a : f32)
^right:
  %n = arith.negf %b : f32
  cf.br ^join(%n : f32) {test.tag}
^join(%r: f32):
  return %r : f32
}
func.func @forward_use(%c: i1) -> i32 {
  cf.cond_br %c, ^def, ^def
^use:
  return %x : i32
^def:
  %x = arith.constant 5 : i32
  cf.br ^use
}
