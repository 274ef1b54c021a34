// RUN: onnxc opt %s -p "constprop,scrub" --stats | filecheck

// A transposed constant is a strided view until scrub packs it; the
// printed values are the same either way.

// CHECK-LABEL: func.func @packed
// CHECK-NEXT:    "onnx.Constant"() {value = dense<{{\[}}[1, 3], [2, 4]]> : tensor<2x2xi8>}
func.func @packed() -> tensor<2x2xi8> {
  %0 = "onnx.Constant"() {value = dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>} : () -> tensor<2x2xi8>
  %1 = "onnx.Transpose"(%0) : (tensor<2x2xi8>) -> tensor<2x2xi8>
  return %1 : tensor<2x2xi8>
}
