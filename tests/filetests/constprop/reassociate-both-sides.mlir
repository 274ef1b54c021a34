// RUN: onnxc opt %s -p constprop | filecheck

// Constants are first moved right of Add/Mul, then two steps of Add/Sub
// (or Mul/Div) with a constant each compose into one, whichever side the
// constants are on.

// (c1 + x) + c2 and c2 + (x + c1): x + (c1 + c2). In i8 the sum wraps
// exactly as the two adds would: 100 + 100 = -56.
// CHECK-LABEL: func.func @add_both_sides
// CHECK-NEXT:  %[[C:.*]] = "onnx.Constant"() {value = dense<-56> : tensor<i8>}
// CHECK-NEXT:  %[[A:.*]] = "onnx.Add"(%arg0, %[[C]])
// CHECK-NEXT:  %[[D:.*]] = "onnx.Constant"() {value = dense<11> : tensor<i32>}
// CHECK-NEXT:  %[[B:.*]] = "onnx.Add"(%arg1, %[[D]])
// CHECK-NEXT:  return %[[A]], %[[B]]
func.func @add_both_sides(%x: tensor<4xi8>, %y: tensor<4xi32>) -> (tensor<4xi8>, tensor<4xi32>) {
  %h = "onnx.Constant"() {value = dense<100> : tensor<i8>} : () -> tensor<i8>
  %a = "onnx.Add"(%h, %x) : (tensor<i8>, tensor<4xi8>) -> tensor<4xi8>
  %b = "onnx.Add"(%a, %h) : (tensor<4xi8>, tensor<i8>) -> tensor<4xi8>
  %c1 = "onnx.Constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %c10 = "onnx.Constant"() {value = dense<10> : tensor<i32>} : () -> tensor<i32>
  %p = "onnx.Add"(%y, %c1) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %q = "onnx.Add"(%c10, %p) : (tensor<i32>, tensor<4xi32>) -> tensor<4xi32>
  return %b, %q : tensor<4xi8>, tensor<4xi32>
}

// 0.5 * x * 2 is x * 1, which is x.
// CHECK-LABEL: func.func @half_twice
// CHECK-NEXT:  return %arg0
func.func @half_twice(%x: tensor<4xf32>) -> tensor<4xf32> {
  %h = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %t = "onnx.Constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %a = "onnx.Mul"(%h, %x) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %b = "onnx.Mul"(%a, %t) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}

// Subtractions from a constant: 1 - (x - 3) = 4 - x; 10 - (4 - x) =
// x + 6; (5 - x) + 2 = 7 - x. In ui8, 200 - (x - 100) = 44 - x (mod 256).
// CHECK-LABEL: func.func @sub_from_constant
// CHECK-NEXT:  %[[C4:.*]] = "onnx.Constant"() {value = dense<4> : tensor<i32>}
// CHECK-NEXT:  %[[A:.*]] = "onnx.Sub"(%[[C4]], %arg0)
// CHECK-NEXT:  %[[C6:.*]] = "onnx.Constant"() {value = dense<6> : tensor<i32>}
// CHECK-NEXT:  %[[B:.*]] = "onnx.Add"(%arg0, %[[C6]])
// CHECK-NEXT:  %[[C7:.*]] = "onnx.Constant"() {value = dense<7> : tensor<i32>}
// CHECK-NEXT:  %[[C:.*]] = "onnx.Sub"(%[[C7]], %arg0)
// CHECK-NEXT:  %[[C44:.*]] = "onnx.Constant"() {value = dense<44> : tensor<ui8>}
// CHECK-NEXT:  %[[D:.*]] = "onnx.Sub"(%[[C44]], %arg1)
// CHECK-NEXT:  return %[[A]], %[[B]], %[[C]], %[[D]]
func.func @sub_from_constant(%x: tensor<4xi32>, %u: tensor<4xui8>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xui8>) {
  %c1 = "onnx.Constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %c2 = "onnx.Constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
  %c3 = "onnx.Constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
  %c4 = "onnx.Constant"() {value = dense<4> : tensor<i32>} : () -> tensor<i32>
  %c5 = "onnx.Constant"() {value = dense<5> : tensor<i32>} : () -> tensor<i32>
  %c10 = "onnx.Constant"() {value = dense<10> : tensor<i32>} : () -> tensor<i32>
  %a0 = "onnx.Sub"(%x, %c3) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %a = "onnx.Sub"(%c1, %a0) : (tensor<i32>, tensor<4xi32>) -> tensor<4xi32>
  %b0 = "onnx.Sub"(%c4, %x) : (tensor<i32>, tensor<4xi32>) -> tensor<4xi32>
  %b = "onnx.Sub"(%c10, %b0) : (tensor<i32>, tensor<4xi32>) -> tensor<4xi32>
  %d0 = "onnx.Sub"(%c5, %x) : (tensor<i32>, tensor<4xi32>) -> tensor<4xi32>
  %d = "onnx.Add"(%d0, %c2) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %h = "onnx.Constant"() {value = dense<100> : tensor<ui8>} : () -> tensor<ui8>
  %t = "onnx.Constant"() {value = dense<200> : tensor<ui8>} : () -> tensor<ui8>
  %u0 = "onnx.Sub"(%u, %h) : (tensor<4xui8>, tensor<ui8>) -> tensor<4xui8>
  %u1 = "onnx.Sub"(%t, %u0) : (tensor<ui8>, tensor<4xui8>) -> tensor<4xui8>
  return %a, %b, %d, %u1 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xui8>
}

// Float division from a constant: 6 / (3 / x) = x * 2; 8 / (x * 4) = 2 / x.
// Integer division truncates at each step: 6 * (x / 3) and 12 / (x * 2)
// stay; 6 * (x * 7) regroups (multiplication is exact modulo 2^n).
// CHECK-LABEL: func.func @div_sides
// CHECK:       %[[M:.*]] = "onnx.Mul"(%arg0, %{{.*}}) : (tensor<4xf32>, tensor<f32>)
// CHECK:       %[[D:.*]] = "onnx.Div"(%{{.*}}, %arg0) : (tensor<f32>, tensor<4xf32>)
// CHECK:       "onnx.Div"(%arg1,
// CHECK:       "onnx.Mul"(
// CHECK:       "onnx.Mul"(%arg1,
// CHECK:       "onnx.Div"(
// CHECK:       %[[C42:.*]] = "onnx.Constant"() {value = dense<42> : tensor<i32>}
// CHECK-NEXT:  "onnx.Mul"(%arg1, %[[C42]])
func.func @div_sides(%x: tensor<4xf32>, %n: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %f3 = "onnx.Constant"() {value = dense<3.0> : tensor<f32>} : () -> tensor<f32>
  %f4 = "onnx.Constant"() {value = dense<4.0> : tensor<f32>} : () -> tensor<f32>
  %f6 = "onnx.Constant"() {value = dense<6.0> : tensor<f32>} : () -> tensor<f32>
  %f8 = "onnx.Constant"() {value = dense<8.0> : tensor<f32>} : () -> tensor<f32>
  %a0 = "onnx.Div"(%f3, %x) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %a = "onnx.Div"(%f6, %a0) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %b0 = "onnx.Mul"(%x, %f4) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %b = "onnx.Div"(%f8, %b0) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %i2 = "onnx.Constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
  %i3 = "onnx.Constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
  %i6 = "onnx.Constant"() {value = dense<6> : tensor<i32>} : () -> tensor<i32>
  %i7 = "onnx.Constant"() {value = dense<7> : tensor<i32>} : () -> tensor<i32>
  %i12 = "onnx.Constant"() {value = dense<12> : tensor<i32>} : () -> tensor<i32>
  %c0 = "onnx.Div"(%n, %i3) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %c = "onnx.Mul"(%i6, %c0) : (tensor<i32>, tensor<4xi32>) -> tensor<4xi32>
  %d0 = "onnx.Mul"(%n, %i2) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %d = "onnx.Div"(%i12, %d0) : (tensor<i32>, tensor<4xi32>) -> tensor<4xi32>
  %e0 = "onnx.Mul"(%n, %i7) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %e = "onnx.Mul"(%i6, %e0) : (tensor<i32>, tensor<4xi32>) -> tensor<4xi32>
  return %a, %b, %c, %d, %e : tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// An inner result with a second use stays.
// CHECK-LABEL: func.func @shared
// CHECK:       %[[A:.*]] = "onnx.Add"(%arg0,
// CHECK:       "onnx.Add"(%[[A]],
func.func @shared(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %c1 = "onnx.Constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %a = "onnx.Add"(%c1, %x) : (tensor<i32>, tensor<4xi32>) -> tensor<4xi32>
  %b = "onnx.Add"(%a, %c1) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  return %a, %b : tensor<4xi32>, tensor<4xi32>
}
