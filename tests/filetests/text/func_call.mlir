// RUN: onnxc opt %s
// Functions: definitions, declarations, calls and returns.

// CHECK: module {
// CHECK-LABEL: func.func private @ext(memref<?xf32> {llvm.noalias}, index) -> f32
// CHECK-LABEL: func.func nested @nested_decl() -> (f32 {test.res})
// CHECK-LABEL: func.func @id(%arg0: f32) -> f32 {
// CHECK-NEXT: return %arg0 : f32
// CHECK-NEXT: }
// CHECK-LABEL: func.func @two(%arg0: i32, %arg1: f32) -> (f32, i32) attributes {llvm.emit_c_interface, test.weight = 3 : i32} {
// CHECK-NEXT: %0 = call @id(%arg1) : (f32) -> f32
// CHECK-NEXT: return %0, %arg0 : f32, i32
// CHECK-NEXT: }
// CHECK-LABEL: func.func @no_results(%arg0: memref<?xf32>, %arg1: index) {
// CHECK-NEXT: %0 = call @ext(%arg0, %arg1) : (memref<?xf32>, index) -> f32
// CHECK-NEXT: %1 = arith.constant 4 : i32
// CHECK-NEXT: %2:2 = call @two(%1, %0) {test.tag} : (i32, f32) -> (f32, i32)
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK-NEXT: }

module {
  func.func private @ext(memref<?xf32> {llvm.noalias}, index) -> f32
  func.func nested @nested_decl() -> (f32 {test.res})
  func.func @id(%x: f32) -> f32 {
    return %x : f32
  }
  func.func @two(%a: i32, %b: f32) -> (f32, i32) attributes {llvm.emit_c_interface, test.weight = 3 : i32} {
    %r = func.call @id(%b) : (f32) -> f32
    func.return %r, %a : f32, i32
  }
  func.func @no_results(%m: memref<?xf32>, %n: index) {
    %v = call @ext(%m, %n) : (memref<?xf32>, index) -> f32
    %c = arith.constant 4 : i32
    %p:2 = call @two(%c, %v) {test.tag} : (i32, f32) -> (f32, i32)
    return
  }
}
