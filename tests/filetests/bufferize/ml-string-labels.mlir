// RUN: onnxc opt %s -p bufferize --verify-diagnostics

// String class labels have no tensor type in onnxc or its C ABI.
func.func @string_labels(%x: tensor<?x1xf32>) -> (tensor<?xi64>, tensor<?x2xf32>) {
  // expected-error @+1 {{string class labels are not supported}}
  %0:2 = "onnx_ml.LinearClassifier"(%x) {classlabels_strings = ["no", "yes"], coefficients = [1.0 : f32, -1.0 : f32]} : (tensor<?x1xf32>) -> (tensor<?xi64>, tensor<?x2xf32>)
  return %0#0, %0#1 : tensor<?xi64>, tensor<?x2xf32>
}
