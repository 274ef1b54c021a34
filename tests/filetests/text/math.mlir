// RUN: onnxc opt %s
// math dialect ops (SameType form).

// CHECK: module {
// CHECK-LABEL: func.func @math(%arg0: f32, %arg1: f32, %arg2: f32, %arg3: i32) -> f32 {
// CHECK-NEXT: %0 = math.exp %arg0 : f32
// CHECK-NEXT: %1 = math.log %0 : f32
// CHECK-NEXT: %2 = math.sqrt %1 : f32
// CHECK-NEXT: %3 = math.rsqrt %2 : f32
// CHECK-NEXT: %4 = math.tanh %3 : f32
// CHECK-NEXT: %5 = math.powf %4, %arg1 : f32
// CHECK-NEXT: %6 = math.fma %5, %arg1, %arg2 : f32
// CHECK-NEXT: %7 = math.absf %6 : f32
// CHECK-NEXT: %8 = math.floor %7 : f32
// CHECK-NEXT: %9 = math.ceil %8 : f32
// CHECK-NEXT: %10 = math.erf %9 : f32
// CHECK-NEXT: %11 = math.atan2 %10, %arg0 : f32
// CHECK-NEXT: %12 = math.absi %arg3 : i32
// CHECK-NEXT: %13 = math.ctpop %12 : i32
// CHECK-NEXT: %14 = "test.source"() : () -> tensor<2xf32>
// CHECK-NEXT: %15 = math.exp %14 : tensor<2xf32>
// CHECK-NEXT: return %11 : f32
// CHECK-NEXT: }
// CHECK-NEXT: }

func.func @math(%a: f32, %b: f32, %c: f32, %i: i32) -> f32 {
  %0 = math.exp %a : f32
  %1 = math.log %0 : f32
  %2 = math.sqrt %1 : f32
  %3 = math.rsqrt %2 : f32
  %4 = math.tanh %3 : f32
  %5 = math.powf %4, %b : f32
  %6 = math.fma %5, %b, %c : f32
  %7 = math.absf %6 : f32
  %8 = math.floor %7 : f32
  %9 = math.ceil %8 : f32
  %10 = math.erf %9 : f32
  %11 = math.atan2 %10, %a : f32
  %12 = math.absi %i : i32
  %13 = math.ctpop %12 : i32
  %arg = "test.source"() : () -> tensor<2xf32>
  %v = math.exp %arg : tensor<2xf32>
  return %11 : f32
}
