// RUN: onnxc opt %s -p "dealloc-pipeline" --verify-diagnostics

// Region ops other than scf.if/scf.for/scf.while get no ownership flags:
// a memref result of one is rejected, not freed wrongly.
func.func @f() {
  // expected-error @+1 {{memref results of region op 'test.region' are not supported (only scf.if, scf.for and scf.while)}}
  %r = "test.region"() ({
    %a = memref.alloc() : memref<4xf32>
    "test.yield"(%a) : (memref<4xf32>) -> ()
  }) : () -> memref<4xf32>
  return
}
