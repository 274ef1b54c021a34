// RUN: onnxc opt %s -p bufferize | filecheck

// A nest of independent iterations whose outermost trip count is dynamic
// (a batch, often 1 at run time) shares out its two outermost loops as one
// parallel loop over their product, so that a batch of 1 still splits over
// the threads; the pair's indices are the quotient and the remainder.
// CHECK-LABEL: func.func @bias_add
// CHECK:         %[[PAIRS:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK:         scf.for %[[P:.*]] = %{{.*}} to %[[PAIRS]] step
// CHECK-NEXT:      %[[I:.*]] = arith.divui %[[P]], %{{.*}} : index
// CHECK-NEXT:      %[[J:.*]] = arith.remui %[[P]], %{{.*}} : index
// CHECK:           scf.for
// CHECK:             memref.store %{{.*}}[%[[I]], %[[J]], %{{.*}}]
// CHECK:         } {onnxc.parallel}
func.func @bias_add(%x: tensor<?x?x256xf32>, %b: tensor<256xf32>) -> tensor<?x?x256xf32> {
  %0 = "onnx.Add"(%x, %b) : (tensor<?x?x256xf32>, tensor<256xf32>) -> tensor<?x?x256xf32>
  return %0 : tensor<?x?x256xf32>
}

// A static outer trip count of 8 or more keeps its own parallel loop.
// CHECK-LABEL: func.func @static_batch
// CHECK-NOT:     arith.divui
// CHECK:         } {onnxc.parallel}
func.func @static_batch(%x: tensor<16x64x256xf32>, %b: tensor<256xf32>) -> tensor<16x64x256xf32> {
  %0 = "onnx.Add"(%x, %b) : (tensor<16x64x256xf32>, tensor<256xf32>) -> tensor<16x64x256xf32>
  return %0 : tensor<16x64x256xf32>
}
