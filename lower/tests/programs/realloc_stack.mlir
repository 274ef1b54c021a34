// A growable stack: push 1..n with memref.realloc doubling inside scf.while,
// then pop everything summing squares.
// OUT: 338350
// OUT: 128
func.func private @printI64(i64)
func.func private @printNewline()

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = arith.constant 100 : index
  %init = memref.alloc(%c2) : memref<?xi64>
  %r:3 = scf.while (%buf = %init, %len = %c0, %cap = %c2) : (memref<?xi64>, index, index) -> (memref<?xi64>, index, index) {
    %more = arith.cmpi ult, %len, %n : index
    scf.condition(%more) %buf, %len, %cap : memref<?xi64>, index, index
  } do {
  ^bb0(%buf: memref<?xi64>, %len: index, %cap: index):
    %full = arith.cmpi eq, %len, %cap : index
    %nb:2 = scf.if %full -> (memref<?xi64>, index) {
      %nc = arith.muli %cap, %c2 : index
      %g = memref.realloc %buf(%nc) : memref<?xi64> to memref<?xi64>
      scf.yield %g, %nc : memref<?xi64>, index
    } else {
      scf.yield %buf, %cap : memref<?xi64>, index
    }
    %k = arith.addi %len, %c1 : index
    %v = arith.index_cast %k : index to i64
    memref.store %v, %nb#0[%len] : memref<?xi64>
    scf.yield %nb#0, %k, %nb#1 : memref<?xi64>, index, index
  }
  %z = arith.constant 0 : i64
  %sum = scf.for %i = %c0 to %r#1 step %c1 iter_args(%acc = %z) -> (i64) {
    %v = memref.load %r#0[%i] : memref<?xi64>
    %sq = arith.muli %v, %v : i64
    %a = arith.addi %acc, %sq : i64
    scf.yield %a : i64
  }
  func.call @printI64(%sum) : (i64) -> ()
  func.call @printNewline() : () -> ()
  %cap = arith.index_cast %r#2 : index to i64
  func.call @printI64(%cap) : (i64) -> ()
  func.call @printNewline() : () -> ()
  memref.dealloc %r#0 : memref<?xi64>
  return
}
