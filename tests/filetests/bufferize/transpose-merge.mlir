// RUN: onnxc opt %s -p bufferize | filecheck

// A Transpose moves runs of neighbouring dims as one: NHWC -> NCHW is a
// batch of [HW, C] -> [C, HW] transposes over flat views, so its loop is
// HW long whether or not H and W are known. The input's short static row
// (3 channels) is copied whole per iteration: three loads of consecutive
// elements, which LLVM vectorizes as one interleaved stream.
// CHECK-LABEL: func.func @nhwc_to_nchw
// CHECK:         %[[X:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%{{.*}}, %[[HW:.*]], 3], strides: [%{{.*}}, 3, 1] : memref<?x?x?x3xf32> to memref<?x?x3xf32, strided<[?, 3, 1]>>
// CHECK:         %[[Y:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [%{{.*}}, 3, %{{.*}}], strides: [%{{.*}}, %{{.*}}, 1] : memref<?x3x?x?xf32> to memref<?x3x?xf32, strided<[?, ?, 1]>>
// CHECK:         scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      scf.for %[[P:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NOT:         scf.for
// CHECK-COUNT-3:     memref.store %{{.*}}, %[[Y]][%[[N]], %{{.*}}, %[[P]]]
// CHECK-NEXT:      }
func.func @nhwc_to_nchw(%x: tensor<?x?x?x3xf32>) -> tensor<?x3x?x?xf32> {
  %0 = "onnx.Transpose"(%x) {perm = [0, 3, 1, 2]} : (tensor<?x?x?x3xf32>) -> tensor<?x3x?x?xf32>
  return %0 : tensor<?x3x?x?xf32>
}

// Attention's head split has no neighbouring dims to merge: a nest over
// the output, the contiguous head dim innermost.
// CHECK-LABEL: func.func @heads
// CHECK-NOT:     memref.reinterpret_cast
// CHECK:         memref.load %arg0[%[[B:.*]], %[[S:.*]], %[[H:.*]], %[[D:.*]]] : memref<?x?x4x8xf32>
// CHECK-NEXT:    memref.store %{{.*}}, %{{.*}}[%[[B]], %[[H]], %[[S]], %[[D]]] : memref<?x4x?x8xf32>
func.func @heads(%x: tensor<?x?x4x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = "onnx.Transpose"(%x) {perm = [0, 2, 1, 3]} : (tensor<?x?x4x8xf32>) -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
