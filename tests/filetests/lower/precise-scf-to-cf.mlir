// RUN: onnxc opt %s -p convert-scf-to-cf
// PRECISE-OUTPUT
// The whole output is pinned; `ONNXC_BLESS=1 cargo test -p onnxc --test filetests` rewrites it.

func.func @select_max(%c: i1, %a: f32, %b: f32) -> f32 {
  %r = scf.if %c -> (f32) {
    scf.yield %a : f32
  } else {
    scf.yield %b : f32
  }
  return %r : f32
}

// ----- OUTPUT -----
// module {
//   func.func @select_max(%arg0: i1, %arg1: f32, %arg2: f32) -> f32 {
//     cf.cond_br %arg0, ^bb1, ^bb2
//   ^bb1:
//     cf.br ^bb3(%arg1 : f32)
//   ^bb2:
//     cf.br ^bb3(%arg2 : f32)
//   ^bb3(%0: f32):
//     return %0 : f32
//   }
// }
