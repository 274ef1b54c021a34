// RUN: onnxc opt %s -p "dealloc-pipeline" --verify-diagnostics

// Memrefs cross blocks only through cf.br and cf.cond_br: their successor
// operands carry the ownership flags. An unknown branch op cannot.
func.func @f() {
  %a = memref.alloc() : memref<4xf32>
  // expected-error @+1 {{passing memrefs through 'test.br' to another block is not supported (only cf.br and cf.cond_br)}}
  "test.br"(%a)[^bb1] : (memref<4xf32>) -> ()
^bb1(%b: memref<4xf32>):
  return
}
