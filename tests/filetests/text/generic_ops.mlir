// RUN: onnxc opt %s
// Unregistered ops print in generic form; registered ops parse from it.

// CHECK: module {
// CHECK-NEXT: "test.top"() {test.level = 0 : i64} : () -> ()
// CHECK-LABEL: func.func @generic(%arg0: i32, %arg1: f32) -> i32 {
// CHECK-NEXT: %0 = "test.op"(%arg0, %arg1) {arr = array<i64: 1, 2>, attr = "s", flag, list = [1, 2], sym = @generic, t = tensor<2x?xf32>} : (i32, f32) -> i32
// CHECK-NEXT: %1:2 = "test.multi"(%0) : (i32) -> (i32, f32)
// CHECK-NEXT: "test.region"(%1#0) ({
// CHECK-NEXT: ^bb0(%arg2: i32):
// CHECK-NEXT: "test.inner"(%arg2, %1#1) : (i32, f32) -> ()
// CHECK-NEXT: "test.terminator"() : () -> ()
// CHECK-NEXT: }, {
// CHECK-NEXT: }) : (i32) -> ()
// CHECK-NEXT: %2 = arith.addi %1#0, %arg0 : i32
// CHECK-NEXT: %3 = "test.opaque"() : () -> !foo.thing<"x", [1, 2]>
// CHECK-NEXT: "test.consume"(%3) : (!foo.thing<"x", [1, 2]>) -> ()
// CHECK-NEXT: return %2 : i32
// CHECK-NEXT: }
// CHECK-NEXT: }

"test.top"() {test.level = 0 : i64} : () -> ()
func.func @generic(%a: i32, %b: f32) -> i32 {
  %0 = "test.op"(%a, %b) {attr = "s", flag, list = [1, 2], arr = array<i64: 1, 2>, t = tensor<2x?xf32>, sym = @generic} : (i32, f32) -> i32
  %1:2 = "test.multi"(%0) : (i32) -> (i32, f32)
  "test.region"(%1#0) ({
  ^bb0(%x: i32):
    "test.inner"(%x, %1#1) : (i32, f32) -> ()
    "test.terminator"() : () -> ()
  }, {
  }) : (i32) -> ()
  %2 = "arith.addi"(%1#0, %a) : (i32, i32) -> i32
  %3 = "test.opaque"() : () -> !foo.thing<"x", [1, 2]>
  "test.consume"(%3) : (!foo.thing<"x", [1, 2]>) -> ()
  "func.return"(%2) : (i32) -> ()
}
