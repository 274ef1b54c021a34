// RUN: onnxc opt %s -p 'constprop{expansion-bound=4}' | filecheck --check-prefix=BOUND
// RUN: onnxc opt %s -p constprop | filecheck --check-prefix=FREE

// Tile makes 64 elements from 2 (+ the 8-byte repeats): 16x the operands'
// bytes. Under a bound of 4 it stays; without a bound it folds.
// BOUND-LABEL: func.func @tile
// BOUND:         onnx.Tile
// FREE-LABEL:  func.func @tile
// FREE-NEXT:     "onnx.Constant"() {value = dense<[1.0e+00, 2.0e+00, 1.0e+00
// FREE-NOT:      onnx.Tile
func.func @tile() -> tensor<64xf32> {
  %x = "onnx.Constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %r = "onnx.Constant"() {value = dense<[32]> : tensor<1xi64>} : () -> tensor<1xi64>
  %t = "onnx.Tile"(%x, %r) : (tensor<2xf32>, tensor<1xi64>) -> tensor<64xf32>
  return %t : tensor<64xf32>
}
