// RUN: onnxc opt %s -p "dealloc-pipeline" --verify-diagnostics

// A buffer live across a branch op other than cf.br / cf.cond_br: the pass
// cannot place the free on that edge, so it refuses.
func.func @g(%i: index) -> f32 {
  %a = memref.alloc() : memref<4xf32>
  // expected-error @+1 {{a buffer stays live across 'test.br': only cf.br and cf.cond_br are supported}}
  "test.br"()[^bb1] : () -> ()
^bb1:
  %v = memref.load %a[%i] : memref<4xf32>
  return %v : f32
}
