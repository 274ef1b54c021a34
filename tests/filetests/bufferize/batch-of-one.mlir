// RUN: onnxc opt %s -p bufferize | filecheck

// A nest of independent iterations (here RotaryEmbedding's, each element
// its own) whose outermost trip count is dynamic (a batch, often 1 at run
// time) shares out its two outermost loops as one parallel loop over
// their product, so that a batch of 1 still splits over the threads; the
// pair's indices are the quotient and the remainder. The innermost loop
// stays a loop.
// CHECK-LABEL: func.func @rotary
// CHECK:         %[[PAIRS:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    scf.for %[[P:.*]] = %{{.*}} to %[[PAIRS]] step
// CHECK-NEXT:      %[[I:.*]] = arith.divui %[[P]], %{{.*}} : index
// CHECK-NEXT:      %[[J:.*]] = arith.remui %[[P]], %{{.*}} : index
// CHECK-NEXT:      scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK:             memref.store %{{.*}}[%[[I]], %[[J]], %[[K]]]
// CHECK:         } {onnxc.parallel}
func.func @rotary(%x: tensor<?x?x64xf32>, %pos: tensor<?x?xi64>) -> tensor<?x?x64xf32> {
  %cos = "onnx.Constant"() {value = dense<0.5> : tensor<256x16xf32>} : () -> tensor<256x16xf32>
  %sin = "onnx.Constant"() {value = dense<0.25> : tensor<256x16xf32>} : () -> tensor<256x16xf32>
  %y = "onnx.RotaryEmbedding"(%x, %cos, %sin, %pos) {num_heads = 2 : i64} : (tensor<?x?x64xf32>, tensor<256x16xf32>, tensor<256x16xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// A static outer trip count of 8 or more keeps its own parallel loop.
// CHECK-LABEL: func.func @static_batch
// CHECK-NOT:     arith.divui %arg
// CHECK:         } {onnxc.parallel}
func.func @static_batch(%x: tensor<16x512x64xf32>, %pos: tensor<16x512xi64>) -> tensor<16x512x64xf32> {
  %cos = "onnx.Constant"() {value = dense<0.5> : tensor<1024x16xf32>} : () -> tensor<1024x16xf32>
  %sin = "onnx.Constant"() {value = dense<0.25> : tensor<1024x16xf32>} : () -> tensor<1024x16xf32>
  %y = "onnx.RotaryEmbedding"(%x, %cos, %sin, %pos) {num_heads = 2 : i64} : (tensor<16x512x64xf32>, tensor<1024x16xf32>, tensor<1024x16xf32>, tensor<16x512xi64>) -> tensor<16x512x64xf32>
  return %y : tensor<16x512x64xf32>
}
