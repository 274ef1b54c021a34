// RUN: onnxc opt %s
// arith.constant in every literal form.

// CHECK: module {
// CHECK-LABEL: func.func @constants() -> (index, i1, f32, tensor<2x2xf32>) {
// CHECK-NEXT: %0 = arith.constant 0 : index
// CHECK-NEXT: %1 = arith.constant -7 : i8
// CHECK-NEXT: %2 = arith.constant 9223372036854775807 : i64
// CHECK-NEXT: %3 = arith.constant true
// CHECK-NEXT: %4 = arith.constant false
// CHECK-NEXT: %5 = arith.constant 1.5e+00 : f32
// CHECK-NEXT: %6 = arith.constant -2.5e-07 : f64
// CHECK-NEXT: %7 = arith.constant 1.0e+00 : f16
// CHECK-NEXT: %8 = arith.constant 3.0e+00 : bf16
// CHECK-NEXT: %9 = arith.constant 0x7FC00000 : f32
// CHECK-NEXT: %10 = arith.constant 0x7FF0000000000000 : f64
// CHECK-NEXT: %11 = arith.constant dense<{{\[\[}}1.0e+00, 2.0e+00], [3.0e+00, 4.0e+00]]> : tensor<2x2xf32>
// CHECK-NEXT: %12 = arith.constant dense<5.0e-01> : tensor<4x4xf32>
// CHECK-NEXT: %13 = arith.constant dense<7> : tensor<3xi32>
// CHECK-NEXT: %14 = arith.constant dense<[1.0e+00, 2.0e+00]> : tensor<2xf32>
// CHECK-NEXT: %15 = arith.constant dense<[true, false, true]> : tensor<3xi1>
// CHECK-NEXT: %16 = arith.constant dense<[0, 255]> : tensor<2xui8>
// CHECK-NEXT: %17 = arith.constant dense<[]> : tensor<0xf32>
// CHECK-NEXT: %18 = arith.constant {test.extra} 42 : i32
// CHECK-NEXT: return %0, %3, %5, %11 : index, i1, f32, tensor<2x2xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

func.func @constants() -> (index, i1, f32, tensor<2x2xf32>) {
  %c0 = arith.constant 0 : index
  %cm = arith.constant -7 : i8
  %big = arith.constant 9223372036854775807 : i64
  %t = arith.constant true
  %f = arith.constant false
  %cst = arith.constant 1.5 : f32
  %small = arith.constant -2.5e-07 : f64
  %h = arith.constant 1.0 : f16
  %bf = arith.constant 3.0 : bf16
  %nan = arith.constant 0x7FC00000 : f32
  %inf = arith.constant 0x7FF0000000000000 : f64
  %d = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %s = arith.constant dense<0.5> : tensor<4x4xf32>
  %same = arith.constant dense<[7, 7, 7]> : tensor<3xi32>
  %hex = arith.constant dense<"0x0000803F00000040"> : tensor<2xf32>
  %b = arith.constant dense<[true, false, true]> : tensor<3xi1>
  %u = arith.constant dense<[0, 255]> : tensor<2xui8>
  %e = arith.constant dense<> : tensor<0xf32>
  %r = arith.constant {test.extra} 42 : i32
  return %c0, %t, %cst, %d : index, i1, f32, tensor<2x2xf32>
}
