// Functions taking and returning memrefs (two results), memref.dim on a
// dynamic allocation, memref.copy into a fresh buffer.
// OUT: 1998
// OUT: 828
// OUT: 37
func.func private @printI64(i64)
func.func private @printNewline()

func.func private @iota(%n: index) -> (memref<?xi64>, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %c3 = arith.constant 3 : index
    %t = arith.muli %i, %c3 : index
    %v = arith.index_cast %t : index to i64
    memref.store %v, %m[%i] : memref<?xi64>
  }
  %c2 = arith.constant 2 : index
  %twice = arith.muli %n, %c2 : index
  return %m, %twice : memref<?xi64>, index
}

func.func @sum(%m: memref<?xi64>) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i64
  %n = memref.dim %m, %c0 : memref<?xi64>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (i64) {
    %v = memref.load %m[%i] : memref<?xi64>
    %b = arith.addi %a, %v : i64
    scf.yield %b : i64
  }
  return %s : i64
}

func.func @main() {
  %c37 = arith.constant 37 : index
  %m, %t = func.call @iota(%c37) : (index) -> (memref<?xi64>, index)
  %c0 = arith.constant 0 : index
  %n = memref.dim %m, %c0 : memref<?xi64>
  %copy = memref.alloc(%n) : memref<?xi64>
  memref.copy %m, %copy : memref<?xi64> to memref<?xi64>
  memref.dealloc %m : memref<?xi64>
  %s = func.call @sum(%copy) : (memref<?xi64>) -> i64
  func.call @printI64(%s) : (i64) -> ()
  func.call @printNewline() : () -> ()
  %half = arith.constant 2 : index
  %k = arith.divui %t, %half : index
  %c24 = arith.constant 24 : index
  %sv = memref.subview %copy[0] [%c24] [1] : memref<?xi64> to memref<?xi64, strided<[1]>>
  %id = memref.cast %sv : memref<?xi64, strided<[1]>> to memref<?xi64, strided<[1]>>
  %short = memref.alloc(%c24) : memref<?xi64>
  memref.copy %id, %short : memref<?xi64, strided<[1]>> to memref<?xi64>
  %s2 = func.call @sum(%short) : (memref<?xi64>) -> i64
  func.call @printI64(%s2) : (i64) -> ()
  func.call @printNewline() : () -> ()
  %k64 = arith.index_cast %k : index to i64
  func.call @printI64(%k64) : (i64) -> ()
  func.call @printNewline() : () -> ()
  memref.dealloc %short : memref<?xi64>
  memref.dealloc %copy : memref<?xi64>
  return
}
