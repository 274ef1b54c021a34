// RUN: onnxc opt %s -p bufferize | filecheck

// A chain of element-wise ops is computed in one loop up to ew_fusion's
// MAX_CHAIN (16) deferred ops: 20 Negs are one loop of 17 (16 deferred
// and their consumer), stored once, then one of 3. Exported models hold
// chains of thousands; the bound keeps loop bodies and the recursion that
// builds them small.
// CHECK-LABEL: func.func @negs
// CHECK-COUNT-17: arith.negf
// CHECK-NEXT:    memref.store
// CHECK-COUNT-3: arith.negf
// CHECK-NEXT:    memref.store
// CHECK-NOT:     arith.negf
func.func @negs(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "onnx.Neg"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = "onnx.Neg"(%0) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = "onnx.Neg"(%1) : (tensor<8xf32>) -> tensor<8xf32>
  %3 = "onnx.Neg"(%2) : (tensor<8xf32>) -> tensor<8xf32>
  %4 = "onnx.Neg"(%3) : (tensor<8xf32>) -> tensor<8xf32>
  %5 = "onnx.Neg"(%4) : (tensor<8xf32>) -> tensor<8xf32>
  %6 = "onnx.Neg"(%5) : (tensor<8xf32>) -> tensor<8xf32>
  %7 = "onnx.Neg"(%6) : (tensor<8xf32>) -> tensor<8xf32>
  %8 = "onnx.Neg"(%7) : (tensor<8xf32>) -> tensor<8xf32>
  %9 = "onnx.Neg"(%8) : (tensor<8xf32>) -> tensor<8xf32>
  %10 = "onnx.Neg"(%9) : (tensor<8xf32>) -> tensor<8xf32>
  %11 = "onnx.Neg"(%10) : (tensor<8xf32>) -> tensor<8xf32>
  %12 = "onnx.Neg"(%11) : (tensor<8xf32>) -> tensor<8xf32>
  %13 = "onnx.Neg"(%12) : (tensor<8xf32>) -> tensor<8xf32>
  %14 = "onnx.Neg"(%13) : (tensor<8xf32>) -> tensor<8xf32>
  %15 = "onnx.Neg"(%14) : (tensor<8xf32>) -> tensor<8xf32>
  %16 = "onnx.Neg"(%15) : (tensor<8xf32>) -> tensor<8xf32>
  %17 = "onnx.Neg"(%16) : (tensor<8xf32>) -> tensor<8xf32>
  %18 = "onnx.Neg"(%17) : (tensor<8xf32>) -> tensor<8xf32>
  %19 = "onnx.Neg"(%18) : (tensor<8xf32>) -> tensor<8xf32>
  return %19 : tensor<8xf32>
}
