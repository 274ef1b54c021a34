// RUN: onnxc opt %s -p bufferize | filecheck

// GlobalMaxPool and GlobalAveragePool reduce each channel's plane as one
// row of the contiguous input, folded in vectors like a ReduceMax/Mean
// over the trailing dims: with dynamic spatial dims a scalar chain of
// NaN-propagating maxima took 4× a static build's (whose LLVM unrolled
// the known plane). Max keeps NaNs (maximumf); the average divides once
// per plane by its element count.
// CHECK-LABEL: func.func @global_max
// CHECK:         %[[X:.*]] = memref.reinterpret_cast %arg0 {{.*}} to memref<?xf32>
// CHECK:         scf.for
// CHECK:           scf.for {{.*}} -> (vector<8xf32>) {
// CHECK:             vector.load %[[X]][%{{.*}}] : memref<?xf32>, vector<8xf32>
// CHECK-NEXT:        arith.maximumf %{{.*}} : vector<8xf32>
// CHECK:           vector.maskedload %[[X]]
// CHECK:           vector.reduction <maximumf>, %{{.*}} : vector<8xf32> into f32
// CHECK-NOT:     memref.load %arg0
// CHECK-LABEL: func.func @global_average
// CHECK:         %[[N:.*]] = arith.sitofp %{{.*}} : i64 to f32
// CHECK:         scf.for
// CHECK:           scf.for {{.*}} -> (vector<8xf32>) {
// CHECK:             arith.addf %{{.*}} : vector<8xf32>
// CHECK:           %[[S:.*]] = vector.reduction <add>, %{{.*}} : vector<8xf32> into f32
// CHECK-NEXT:      arith.divf %[[S]], %[[N]] : f32
// CHECK-NOT:     memref.load %arg0
func.func @global_max(%x: tensor<?x32x?xf32>) -> tensor<?x32x1xf32> {
  %y = "onnx.GlobalMaxPool"(%x) : (tensor<?x32x?xf32>) -> tensor<?x32x1xf32>
  return %y : tensor<?x32x1xf32>
}

func.func @global_average(%x: tensor<?x16x?x?xf32>) -> tensor<?x16x1x1xf32> {
  %y = "onnx.GlobalAveragePool"(%x) : (tensor<?x16x?x?xf32>) -> tensor<?x16x1x1xf32>
  return %y : tensor<?x16x1x1xf32>
}
