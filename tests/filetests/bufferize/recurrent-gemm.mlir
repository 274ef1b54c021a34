// RUN: onnxc opt %s -p bufferize | filecheck

// A recurrent cell multiplies X by W for every step at once, before the
// time loop, and the state by R once per step, both on the packed GEMM.
// Constant W and R are transposed and packed at compile time into the
// GEMM's B panels (K × 16 columns: the 12 gate rows padded to 16), so a
// step reads R's panels in place (the M = 1 path for one sequence).
// CHECK:       memref.global "private" constant @[[R:__constant_[0-9]+]] : memref<48xf32>
// CHECK:       memref.global "private" constant @[[W:__constant_[0-9]+]] : memref<64xf32>
// CHECK-LABEL: func.func @lstm_packed
// CHECK:         memref.get_global @[[R]] : memref<48xf32>
// CHECK:         memref.get_global @[[W]] : memref<64xf32>
// CHECK:         call @[[F:__onnxc_gemm_f32_v8_m1_[0-9a-f]+]](
// CHECK:         scf.for
// CHECK:           func.call @[[F]](
// CHECK:           scf.for
// CHECK:         return
func.func @lstm_packed(%x: tensor<?x?x4xf32>) -> tensor<?x1x?x3xf32> {
  %w = "onnx.Constant"() {value = dense<0.5> : tensor<1x12x4xf32>} : () -> tensor<1x12x4xf32>
  %r = "onnx.Constant"() {value = dense<0.25> : tensor<1x12x3xf32>} : () -> tensor<1x12x3xf32>
  %none = "onnx.NoValue"() : () -> none
  %y, %yh, %yc = "onnx.LSTM"(%x, %w, %r, %none, %none, %none, %none, %none) {hidden_size = 3 : si64} : (tensor<?x?x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32>, none, none, none, none, none) -> (tensor<?x1x?x3xf32>, none, none)
  return %y : tensor<?x1x?x3xf32>
}

// Weights known only at run time are read through strides (B packed per
// call). GRU without linear_before_reset multiplies r ⊙ h by the h gate's
// rows after the z and r rows: two products per step.
// CHECK-LABEL: func.func @gru_runtime
// CHECK:         call @[[G:__onnxc_gemm_f32_v8_ms_[0-9a-f]+]](
// CHECK:         scf.for
// CHECK:           func.call @[[G]](
// CHECK:           scf.for
// CHECK:           func.call @[[G]](
// CHECK:           scf.for
// CHECK:         return
func.func @gru_runtime(%x: tensor<?x?x4xf32>, %w: tensor<1x9x4xf32>, %r: tensor<1x9x3xf32>) -> tensor<?x1x?x3xf32> {
  %none = "onnx.NoValue"() : () -> none
  %y, %yh = "onnx.GRU"(%x, %w, %r, %none, %none, %none) {hidden_size = 3 : si64} : (tensor<?x?x4xf32>, tensor<1x9x4xf32>, tensor<1x9x3xf32>, none, none, none) -> (tensor<?x1x?x3xf32>, none)
  return %y : tensor<?x1x?x3xf32>
}

// Other float types take loop nests for the same products, summed in f32.
// CHECK-LABEL: func.func @rnn_half
// CHECK-NOT:     call @__onnxc_gemm
// CHECK:         scf.for {{.*}} iter_args({{.*}}) -> (f32)
// CHECK:           arith.extf {{.*}} : f16 to f32
// CHECK:         return
func.func @rnn_half(%x: tensor<?x?x4xf16>, %w: tensor<1x3x4xf16>, %r: tensor<1x3x3xf16>) -> tensor<?x1x?x3xf16> {
  %none = "onnx.NoValue"() : () -> none
  %y, %yh = "onnx.RNN"(%x, %w, %r, %none, %none, %none) {hidden_size = 3 : si64} : (tensor<?x?x4xf16>, tensor<1x3x4xf16>, tensor<1x3x3xf16>, none, none, none) -> (tensor<?x1x?x3xf16>, none)
  return %y : tensor<?x1x?x3xf16>
}
