// RUN: onnxc opt %s -p bufferize | filecheck

// ai.onnx.ml models over rows of features. A tree ensemble is constant
// tables (feature per node, -1 at leaves; thresholds; yes/no children;
// vote ranges, targets and weights; roots) walked per row and tree by an
// scf.while; only the node tests the forest uses are emitted.

// One mode (BRANCH_LEQ): one compare, no mode table, no NaN test.
// CHECK-LABEL: func.func @regressor
// CHECK:         memref.alloc(%{{.*}}) {{.*}} : memref<?x1xf32>
// CHECK:         scf.for
// CHECK:           scf.while
// CHECK:             arith.cmpi sge
// CHECK:             scf.condition
// CHECK:           } do {
// CHECK-NOT:         arith.cmpf uno
// CHECK:             arith.cmpf ole
// CHECK-NOT:         arith.cmpf
// CHECK:             arith.select
// CHECK:             scf.yield
// CHECK:           scf.for
// CHECK:             arith.addf
// CHECK:         return
func.func @regressor(%x: tensor<?x3xf32>) -> tensor<?x1xf32> {
  %0 = "onnx_ml.TreeEnsembleRegressor"(%x) {base_values = [5.0e-01 : f32], n_targets = 1 : i64, nodes_falsenodeids = [2, 0, 0], nodes_featureids = [2, 0, 0], nodes_modes = ["BRANCH_LEQ", "LEAF", "LEAF"], nodes_nodeids = [0, 1, 2], nodes_treeids = [0, 0, 0], nodes_truenodeids = [1, 0, 0], nodes_values = [2.5e-01 : f32, 0.0 : f32, 0.0 : f32], target_ids = [0, 0], target_nodeids = [1, 2], target_treeids = [0, 0], target_weights = [-1.0 : f32, 2.0 : f32]} : (tensor<?x3xf32>) -> tensor<?x1xf32> loc("gb")
  return %0 : tensor<?x1xf32>
}

// Two modes select on the node's mode code; a node that sends missing
// values to yes adds the NaN test. The feature count is dynamic: checked.
// CHECK-LABEL: func.func @modes
// CHECK:         cf.assert %{{.*}}, "onnx_ml.TreeEnsembleRegressor at node 'two': feature 1 is out of range of the input's features"
// CHECK:         memref.get_global @[[MODES:__constant_[0-9]+]] : memref<5xi32>
// CHECK:         scf.while
// CHECK:         } do {
// CHECK-DAG:       arith.cmpf olt
// CHECK-DAG:       arith.cmpf une
// CHECK:           arith.select
// CHECK:           arith.cmpf uno
// CHECK:           arith.ori
// CHECK:         return
func.func @modes(%x: tensor<?x?xf32>) -> tensor<?x1xf32> {
  %0 = "onnx_ml.TreeEnsembleRegressor"(%x) {n_targets = 1 : i64, nodes_falsenodeids = [2, 0, 4, 0, 0], nodes_featureids = [0, 0, 1, 0, 0], nodes_missing_value_tracks_true = [0, 0, 1, 0, 0], nodes_modes = ["BRANCH_LT", "LEAF", "BRANCH_NEQ", "LEAF", "LEAF"], nodes_nodeids = [0, 1, 2, 3, 4], nodes_treeids = [0, 0, 0, 0, 0], nodes_truenodeids = [1, 0, 3, 0, 0], nodes_values = [0.0 : f32, 0.0 : f32, 1.0 : f32, 0.0 : f32, 0.0 : f32], target_ids = [0, 0, 0], target_nodeids = [1, 3, 4], target_treeids = [0, 0, 0], target_weights = [1.0 : f32, 2.0 : f32, 3.0 : f32]} : (tensor<?x?xf32>) -> tensor<?x1xf32> loc("two")
  return %0 : tensor<?x1xf32>
}

// A multi-class linear classifier: scores per row in a scratch row, the
// label of the first largest from the label table, then the softmax.
// CHECK-LABEL: func.func @linear_classifier
// CHECK:         memref.get_global @{{.*}} : memref<3x2xf32>
// CHECK:         memref.alloc(%{{.*}}) {{.*}} : memref<?xi64>
// CHECK:         memref.alloc(%{{.*}}) {{.*}} : memref<?x3xf32>
// CHECK:         memref.get_global @{{.*}} : memref<3xi64>
// CHECK:         scf.for
// CHECK:           arith.mulf
// CHECK:           arith.cmpf ogt
// CHECK:           memref.load %{{.*}} : memref<3xi64>
// CHECK:           math.exp
// CHECK:           arith.divf
// CHECK:         return
func.func @linear_classifier(%x: tensor<?x2xf32>) -> (tensor<?xi64>, tensor<?x3xf32>) {
  %0:2 = "onnx_ml.LinearClassifier"(%x) {classlabels_ints = [3, 5, 7], coefficients = [1.0 : f32, 0.0 : f32, 0.0 : f32, 1.0 : f32, 1.0 : f32, 1.0 : f32], intercepts = [0.0 : f32, 0.5 : f32, -0.5 : f32], post_transform = "SOFTMAX"} : (tensor<?x2xf32>) -> (tensor<?xi64>, tensor<?x3xf32>)
  return %0#0, %0#1 : tensor<?xi64>, tensor<?x3xf32>
}

// A binary classifier with one score column: the label by a threshold,
// the probabilities [1 - s, s].
// CHECK-LABEL: func.func @binary_forest
// CHECK:         scf.while
// CHECK:         arith.constant 5.0e-01 : f32
// CHECK:         arith.cmpf ogt
// CHECK:         arith.select
// CHECK:         arith.subf
// CHECK:         return
func.func @binary_forest(%x: tensor<?x1xf32>) -> (tensor<?xi64>, tensor<?x2xf32>) {
  %0:2 = "onnx_ml.TreeEnsembleClassifier"(%x) {class_ids = [0, 0], class_nodeids = [1, 2], class_treeids = [0, 0], class_weights = [2.5e-01 : f32, 7.5e-01 : f32], classlabels_int64s = [0, 1], nodes_falsenodeids = [2, 0, 0], nodes_featureids = [0, 0, 0], nodes_modes = ["BRANCH_LEQ", "LEAF", "LEAF"], nodes_nodeids = [0, 1, 2], nodes_treeids = [0, 0, 0], nodes_truenodeids = [1, 0, 0], nodes_values = [0.0 : f32, 0.0 : f32, 0.0 : f32]} : (tensor<?x1xf32>) -> (tensor<?xi64>, tensor<?x2xf32>)
  return %0#0, %0#1 : tensor<?xi64>, tensor<?x2xf32>
}

// Scaler and Normalizer: per-feature constants from a table, a row norm.
// CHECK-LABEL: func.func @preprocess
// CHECK:         arith.subf
// CHECK:         arith.mulf
// CHECK:         math.absf
// CHECK:         arith.cmpf one
// CHECK:         arith.select
// CHECK:         return
func.func @preprocess(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %0 = "onnx_ml.Scaler"(%x) {offset = [1.0 : f32, 2.0 : f32], scale = [0.5 : f32, 2.0 : f32]} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %1 = "onnx_ml.Normalizer"(%0) {norm = "L1"} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  return %1 : tensor<?x2xf32>
}
