// RUN: onnxc opt %s -p bufferize | filecheck

// A large constant that repeats its values (here 80 KB of one value) is
// stored as its distinct values and expanded at run time, not written
// out whole: a global of one element, a fill loop.
// CHECK:       memref.global "private" constant @[[ONE:.*]] : memref<1x1xf32> = dense<{{\[\[}}2.5e-01]]>
// CHECK-LABEL: func.func @returned_splat() -> memref<200x100xf32>
// CHECK:         %[[G:.*]] = memref.get_global @[[ONE]] : memref<1x1xf32>
// CHECK:         %[[B:.*]] = memref.alloc() {{.*}} : memref<200x100xf32>
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             %[[V:.*]] = memref.load %[[G]]
// CHECK:             memref.store %[[V]], %[[B]]
// CHECK:         return %[[B]]
func.func @returned_splat() -> tensor<200x100xf32> {
  %c = "onnx.Constant"() {value = dense<2.5e-01> : tensor<200x100xf32>} : () -> tensor<200x100xf32>
  return %c : tensor<200x100xf32>
}
