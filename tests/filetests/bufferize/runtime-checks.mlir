// RUN: onnxc opt %s -p bufferize | filecheck

// Dynamic dims and index values come from the caller: where an op's
// contract depends on them, bufferize emits a cf.assert naming the op and
// its node before the loop nest (index checks: where the index is loaded).
// Static shapes are checked at compile time and emit nothing.

// The output dim starts from input 0's, so only input 1 needs a check.
// CHECK-LABEL: func.func @add_dynamic
// CHECK-NOT:     cf.assert {{.*}}input 0
// CHECK:         cf.assert %{{.*}}, "onnx.Add at node 'add1': input 1 dim 0 is not 1 and differs from the output's"
// CHECK-NOT:     cf.assert
// CHECK:         scf.for
// CHECK-NOT:     cf.assert
// CHECK:         return
func.func @add_dynamic(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = "onnx.Add"(%x, %y) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> loc("add1")
  return %0 : tensor<?x4xf32>
}

// A dynamic dim against a static output dim of the same op.
// CHECK-LABEL: func.func @where_mixed
// CHECK-NOT:     cf.assert {{.*}}input 0
// CHECK:         cf.assert %{{.*}}, "onnx.Where at node 'w': input 1 dim 0 is not 1 and differs from the output's"
// CHECK-NOT:     cf.assert
// CHECK:         return
func.func @where_mixed(%c: tensor<3x2xi1>, %x: tensor<?x2xf32>, %y: tensor<1x2xf32>) -> tensor<3x2xf32> {
  %0 = "onnx.Where"(%c, %x, %y) : (tensor<3x2xi1>, tensor<?x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32> loc("w")
  return %0 : tensor<3x2xf32>
}

// CHECK-LABEL: func.func @static_ops
// CHECK-NOT:     cf.assert
// CHECK:         return
func.func @static_ops(%x: tensor<2x3xf32>, %b: tensor<3xf32>, %w: tensor<3x4xf32>, %z: tensor<5x4xf32>) -> tensor<7x4xf32> {
  %0 = "onnx.Add"(%x, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = "onnx.MatMul"(%0, %w) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %2 = "onnx.Concat"(%1, %z) {axis = 0 : i64} : (tensor<2x4xf32>, tensor<5x4xf32>) -> tensor<7x4xf32>
  return %2 : tensor<7x4xf32>
}

// CHECK-LABEL: func.func @matmul_dynamic
// CHECK:         cf.assert %{{.*}}, "onnx.MatMul at node 'mm': the inner dims of A and B differ"
// CHECK:         cf.assert %{{.*}}, "onnx.MatMul at node 'mm': input 1 dim 0 is not 1 and differs from the output's"
// CHECK:         scf.for
// CHECK-NOT:     cf.assert
// CHECK:         return
func.func @matmul_dynamic(%a: tensor<2x3x?xf32>, %b: tensor<?x?x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "onnx.MatMul"(%a, %b) : (tensor<2x3x?xf32>, tensor<?x?x4xf32>) -> tensor<2x3x4xf32> loc("mm")
  return %0 : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @gemm_dynamic
// CHECK:         cf.assert %{{.*}}, "onnx.Gemm at node 'g': the inner dims of A and B differ"
// CHECK:         cf.assert %{{.*}}, "onnx.Gemm at node 'g': input 2 dim 0 is not 1 and differs from the output's"
// CHECK:         scf.for
// CHECK:         return
func.func @gemm_dynamic(%a: tensor<2x?xf32>, %b: tensor<?x4xf32>, %c: tensor<?xf32>) -> tensor<2x4xf32> {
  %0 = "onnx.Gemm"(%a, %b, %c) : (tensor<2x?xf32>, tensor<?x4xf32>, tensor<?xf32>) -> tensor<2x4xf32> loc("g")
  return %0 : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @concat_dynamic
// CHECK-NOT:     cf.assert {{.*}}input 0
// CHECK:         cf.assert %{{.*}}, "onnx.Concat at node 'cat': input 1 dim 1 differs from input 0's"
// CHECK-NOT:     cf.assert
// CHECK:         return
func.func @concat_dynamic(%x: tensor<2x?xf32>, %y: tensor<3x?xf32>) -> tensor<5x?xf32> {
  %0 = "onnx.Concat"(%x, %y) {axis = 0 : i64} : (tensor<2x?xf32>, tensor<3x?xf32>) -> tensor<5x?xf32> loc("cat")
  return %0 : tensor<5x?xf32>
}

// Index values are data: checked where each index is loaded.
// CHECK-LABEL: func.func @gather
// CHECK:         scf.for
// CHECK:           %[[I:.*]] = memref.load %arg1
// CHECK:           cf.assert %{{.*}}, "onnx.Gather at node 'gth': an index is out of range of data dim 0"
// CHECK:           memref.load %arg0
// CHECK:         return
func.func @gather(%x: tensor<5x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf32> {
  %0 = "onnx.Gather"(%x, %i) {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32> loc("gth")
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @reshape_runtime
// CHECK:         cf.assert %{{.*}}, "onnx.Reshape at node 'r': shape entry 0 is negative"
// CHECK:         cf.assert %{{.*}}, "onnx.Reshape at node 'r': shape entry 1 is negative"
// CHECK:         cf.assert %{{.*}}, "onnx.Reshape at node 'r': the new shape's element count differs from the input's"
// CHECK:         memref.reinterpret_cast
func.func @reshape_runtime(%x: tensor<?x4xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = "onnx.Reshape"(%x, %s) : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x?xf32> loc("r")
  return %0 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @expand
// CHECK:         cf.assert %{{.*}}, "onnx.Expand at node 'e': input 0 dim 0 is not 1 and differs from the output's"
// CHECK:         cf.assert %{{.*}}, "onnx.Expand at node 'e': shape entry 0 is not 1 and differs from the output dim"
// CHECK:         scf.for
func.func @expand(%x: tensor<?xf32>, %s: tensor<1xi64>) -> tensor<?xf32> {
  %0 = "onnx.Expand"(%x, %s) : (tensor<?xf32>, tensor<1xi64>) -> tensor<?xf32> loc("e")
  return %0 : tensor<?xf32>
}

// CHECK-LABEL: func.func @scatter_nd
// CHECK:         cf.assert %{{.*}}, "onnx.ScatterND at node 'sc': updates dim 0 differs from the expected size"
// CHECK:         scf.for
// CHECK:           cf.assert %{{.*}}, "onnx.ScatterND at node 'sc': an index is out of range of data dim 0"
func.func @scatter_nd(%x: tensor<4x3xf32>, %i: tensor<?x1xi64>, %u: tensor<?x3xf32>) -> tensor<4x3xf32> {
  %0 = "onnx.ScatterND"(%x, %i, %u) : (tensor<4x3xf32>, tensor<?x1xi64>, tensor<?x3xf32>) -> tensor<4x3xf32> loc("sc")
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @gather_elements
// CHECK-NOT:     cf.assert {{.*}}dim 0 exceeds
// CHECK:         cf.assert %{{.*}}, "onnx.GatherElements at node 'ge': indices dim 1 exceeds the data's"
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             cf.assert %{{.*}}, "onnx.GatherElements at node 'ge': an index is out of range of data dim 0"
func.func @gather_elements(%x: tensor<?x3xf32>, %i: tensor<?x?xi64>) -> tensor<?x?xf32> {
  %0 = "onnx.GatherElements"(%x, %i) {axis = 0 : i64} : (tensor<?x3xf32>, tensor<?x?xi64>) -> tensor<?x?xf32> loc("ge")
  return %0 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @topk
// CHECK:         cf.assert %{{.*}}, "onnx.TopK at node 'tk': k is negative"
// CHECK:         cf.assert %{{.*}}, "onnx.TopK at node 'tk': k exceeds the axis dim"
func.func @topk(%x: tensor<3x5xf32>, %k: tensor<1xi64>) -> (tensor<3x?xf32>, tensor<3x?xi64>) {
  %0:2 = "onnx.TopK"(%x, %k) {axis = 1 : i64} : (tensor<3x5xf32>, tensor<1xi64>) -> (tensor<3x?xf32>, tensor<3x?xi64>) loc("tk")
  return %0#0, %0#1 : tensor<3x?xf32>, tensor<3x?xi64>
}

// CHECK-LABEL: func.func @split
// CHECK:         cf.assert %{{.*}}, "onnx.Split at node 'sp': split size 0 is negative"
// CHECK:         cf.assert %{{.*}}, "onnx.Split at node 'sp': split size 1 is negative"
// CHECK:         cf.assert %{{.*}}, "onnx.Split at node 'sp': the split sizes do not add up to the axis dim"
func.func @split(%x: tensor<?xf32>, %s: tensor<2xi64>) -> (tensor<?xf32>, tensor<?xf32>) {
  %0:2 = "onnx.Split"(%x, %s) {axis = 0 : i64} : (tensor<?xf32>, tensor<2xi64>) -> (tensor<?xf32>, tensor<?xf32>) loc("sp")
  return %0#0, %0#1 : tensor<?xf32>, tensor<?xf32>
}

// CHECK-LABEL: func.func @batch_norm
// CHECK:         cf.assert %{{.*}}, "onnx.BatchNormalization at node 'bn': input 1 length differs from the channel dim"
// CHECK:         cf.assert %{{.*}}, "onnx.BatchNormalization at node 'bn': input 4 length differs from the channel dim"
// CHECK:         scf.for
func.func @batch_norm(%x: tensor<?x?x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<?x?x4xf32> {
  %0 = "onnx.BatchNormalization"(%x, %s, %b, %m, %v) : (tensor<?x?x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x?x4xf32> loc("bn")
  return %0 : tensor<?x?x4xf32>
}

// CHECK-LABEL: func.func @conv
// CHECK:         cf.assert %{{.*}}, "onnx.Conv at node 'cv': the input's channels differ from the weight's times group"
func.func @conv(%x: tensor<1x?x5x5xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %0 = "onnx.Conv"(%x, %w) {group = 1 : i64} : (tensor<1x?x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x3x3xf32> loc("cv")
  return %0 : tensor<1x4x3x3xf32>
}

// Kernels take runtime sizes where shapes are dynamic; what they must
// agree on is checked once before the loop nest. Expand's shape of runtime
// length (the result rank is known): its length against the rank.
// CHECK-LABEL: func.func @expand_runtime_length
// CHECK:         cf.assert %{{.*}}, "onnx.Expand at node 'e2': the shape's length differs from the result rank"
// CHECK:         scf.for
func.func @expand_runtime_length(%x: tensor<?xf32>, %s: tensor<?xi64>) -> tensor<?x?xf32> {
  %0 = "onnx.Expand"(%x, %s) : (tensor<?xf32>, tensor<?xi64>) -> tensor<?x?xf32> loc("e2")
  return %0 : tensor<?x?xf32>
}

// GatherND whose indices' last dim is dynamic: the ranks fix it.
// CHECK-LABEL: func.func @gather_nd_depth
// CHECK:         cf.assert %{{.*}}, "onnx.GatherND at node 'gnd': the last dim of indices does not fit the ranks of data and the result"
// CHECK:         scf.for
func.func @gather_nd_depth(%x: tensor<?x?xf32>, %i: tensor<?x?xi64>) -> tensor<?xf32> {
  %0 = "onnx.GatherND"(%x, %i) : (tensor<?x?xf32>, tensor<?x?xi64>) -> tensor<?xf32> loc("gnd")
  return %0 : tensor<?xf32>
}

// Det of matrices of runtime size: square.
// CHECK-LABEL: func.func @det_runtime
// CHECK:         cf.assert %{{.*}}, "onnx.Det at node 'det': the last two dims differ"
// CHECK:         scf.for
func.func @det_runtime(%x: tensor<?x?x?xf32>) -> tensor<?xf32> {
  %0 = "onnx.Det"(%x) : (tensor<?x?x?xf32>) -> tensor<?xf32> loc("det")
  return %0 : tensor<?xf32>
}
