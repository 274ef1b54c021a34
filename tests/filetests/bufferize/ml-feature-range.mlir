// RUN: onnxc opt %s -p bufferize --verify-diagnostics

// A static feature count below a feature a branch reads.
func.func @feature_range(%x: tensor<?x2xf32>) -> tensor<?x1xf32> {
  // expected-error @+1 {{feature 5 is out of range of the input's features}}
  %0 = "onnx_ml.TreeEnsembleRegressor"(%x) {n_targets = 1 : i64, nodes_falsenodeids = [2, 0, 0], nodes_featureids = [5, 0, 0], nodes_modes = ["BRANCH_LEQ", "LEAF", "LEAF"], nodes_nodeids = [0, 1, 2], nodes_treeids = [0, 0, 0], nodes_truenodeids = [1, 0, 0], nodes_values = [0.0 : f32, 0.0 : f32, 0.0 : f32], target_ids = [0], target_nodeids = [2], target_treeids = [0], target_weights = [1.0 : f32]} : (tensor<?x2xf32>) -> tensor<?x1xf32>
  return %0 : tensor<?x1xf32>
}
