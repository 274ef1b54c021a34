// RUN: onnxc opt %s -p constprop | filecheck

// Constant Sub/Div regroup with Add/Mul when the inner result has one use.

// (x - 1) + 10 → x - (1 - 10).
// CHECK-LABEL: func.func @add_sub
// CHECK-NEXT:    %[[C:.*]] = "onnx.Constant"() {value = dense<-9> : tensor<i32>}
// CHECK-NEXT:    %[[R:.*]] = "onnx.Sub"(%arg0, %[[C]])
// CHECK-NEXT:    return %[[R]]
func.func @add_sub(%x: tensor<2xi32>) -> tensor<2xi32> {
  %c1 = "onnx.Constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %c10 = "onnx.Constant"() {value = dense<10> : tensor<i32>} : () -> tensor<i32>
  %a = "onnx.Sub"(%x, %c1) : (tensor<2xi32>, tensor<i32>) -> tensor<2xi32>
  %b = "onnx.Add"(%a, %c10) : (tensor<2xi32>, tensor<i32>) -> tensor<2xi32>
  return %b : tensor<2xi32>
}

// ((((x * 6) / 3) / 2) / 4) regroups step by step: x * 2, x * 1,
// x * 0.25.
// CHECK-LABEL: func.func @mul_div
// CHECK-NEXT:    %[[C:.*]] = "onnx.Constant"() {value = dense<2.5e-01> : tensor<f32>}
// CHECK-NEXT:    %[[M:.*]] = "onnx.Mul"(%arg0, %[[C]])
// CHECK-NEXT:    return %[[M]]
func.func @mul_div(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c6 = "onnx.Constant"() {value = dense<6.0> : tensor<f32>} : () -> tensor<f32>
  %c3 = "onnx.Constant"() {value = dense<3.0> : tensor<f32>} : () -> tensor<f32>
  %c2 = "onnx.Constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %c4 = "onnx.Constant"() {value = dense<4.0> : tensor<f32>} : () -> tensor<f32>
  %a = "onnx.Mul"(%x, %c6) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %b = "onnx.Div"(%a, %c3) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %c = "onnx.Div"(%b, %c2) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %d = "onnx.Div"(%c, %c4) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %d : tensor<4xf32>
}

// Integer division truncates at each step: (x / 2) / 3 stays; an inner
// result with a second use stays too.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: "onnx.Constant"
// CHECK-NEXT:    %[[A:.*]] = "onnx.Div"(%arg0
// CHECK-NEXT:    "onnx.Div"(%[[A]]
// CHECK-NEXT:    %[[S:.*]] = "onnx.Sub"(%arg1
// CHECK-NEXT:    "onnx.Sub"(%[[S]]
func.func @kept(%x: tensor<2xi32>, %y: tensor<2xf32>) -> (tensor<2xi32>, tensor<2xf32>, tensor<2xf32>) {
  %c2 = "onnx.Constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
  %f2 = "onnx.Constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %c3 = "onnx.Constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
  %a = "onnx.Div"(%x, %c2) : (tensor<2xi32>, tensor<i32>) -> tensor<2xi32>
  %b = "onnx.Div"(%a, %c3) : (tensor<2xi32>, tensor<i32>) -> tensor<2xi32>
  %s = "onnx.Sub"(%y, %f2) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %t = "onnx.Sub"(%s, %f2) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  return %b, %s, %t : tensor<2xi32>, tensor<2xf32>, tensor<2xf32>
}
