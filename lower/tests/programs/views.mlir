// Views over a 4x6 buffer holding 0..23: subview (static, strided, dynamic,
// rank-reducing), reinterpret_cast, collapse_shape, expand_shape.
// OUT: 72
// OUT: 34
// OUT: 138
// OUT: 87
// OUT: 33
// OUT: 17
// OUT: 17
// OUT: 23
// OUT: 6
func.func private @printI64(i64)
func.func private @printNewline()

func.func @print(%v: i64) {
  func.call @printI64(%v) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}

func.func @sum2(%m: memref<?x?xi64, strided<[?, ?], offset: ?>>) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i64
  %d0 = memref.dim %m, %c0 : memref<?x?xi64, strided<[?, ?], offset: ?>>
  %d1 = memref.dim %m, %c1 : memref<?x?xi64, strided<[?, ?], offset: ?>>
  %s = scf.for %i = %c0 to %d0 step %c1 iter_args(%a = %z) -> (i64) {
    %t = scf.for %j = %c0 to %d1 step %c1 iter_args(%b = %a) -> (i64) {
      %v = memref.load %m[%i, %j] : memref<?x?xi64, strided<[?, ?], offset: ?>>
      %n = arith.addi %b, %v : i64
      scf.yield %n : i64
    }
    scf.yield %t : i64
  }
  return %s : i64
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c17 = arith.constant 17 : index
  %a = memref.alloc() : memref<4x6xi64>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c6 step %c1 {
      %r = arith.muli %i, %c6 : index
      %k = arith.addi %r, %j : index
      %v = arith.index_cast %k : index to i64
      memref.store %v, %a[%i, %j] : memref<4x6xi64>
    }
  }
  %s1 = memref.subview %a[1, 2] [2, 3] [1, 1] : memref<4x6xi64> to memref<2x3xi64, strided<[6, 1], offset: 8>>
  %g1 = memref.cast %s1 : memref<2x3xi64, strided<[6, 1], offset: 8>> to memref<?x?xi64, strided<[?, ?], offset: ?>>
  %r1 = func.call @sum2(%g1) : (memref<?x?xi64, strided<[?, ?], offset: ?>>) -> i64
  func.call @print(%r1) : (i64) -> ()
  %s2 = memref.subview %a[0, 1] [2, 2] [2, 3] : memref<4x6xi64> to memref<2x2xi64, strided<[12, 3], offset: 1>>
  %g2 = memref.cast %s2 : memref<2x2xi64, strided<[12, 3], offset: 1>> to memref<?x?xi64, strided<[?, ?], offset: ?>>
  %r2 = func.call @sum2(%g2) : (memref<?x?xi64, strided<[?, ?], offset: ?>>) -> i64
  func.call @print(%r2) : (i64) -> ()
  %s3 = memref.subview %a[%c1, 0] [2, 6] [1, 1] : memref<4x6xi64> to memref<2x6xi64, strided<[6, 1], offset: ?>>
  %g3 = memref.cast %s3 : memref<2x6xi64, strided<[6, 1], offset: ?>> to memref<?x?xi64, strided<[?, ?], offset: ?>>
  %r3 = func.call @sum2(%g3) : (memref<?x?xi64, strided<[?, ?], offset: ?>>) -> i64
  func.call @print(%r3) : (i64) -> ()
  %row = memref.subview %a[2, 0] [1, 6] [1, 1] : memref<4x6xi64> to memref<6xi64, strided<[1], offset: 12>>
  %z = arith.constant 0 : i64
  %r4 = scf.for %j = %c0 to %c6 step %c1 iter_args(%b = %z) -> (i64) {
    %v = memref.load %row[%j] : memref<6xi64, strided<[1], offset: 12>>
    %n = arith.addi %b, %v : i64
    scf.yield %n : i64
  }
  func.call @print(%r4) : (i64) -> ()
  %rc = memref.reinterpret_cast %a to offset: [5], sizes: [3], strides: [6] : memref<4x6xi64> to memref<3xi64, strided<[6], offset: 5>>
  %r5 = scf.for %j = %c0 to %c3 step %c1 iter_args(%b = %z) -> (i64) {
    %v = memref.load %rc[%j] : memref<3xi64, strided<[6], offset: 5>>
    %n = arith.addi %b, %v : i64
    scf.yield %n : i64
  }
  func.call @print(%r5) : (i64) -> ()
  %flat = memref.collapse_shape %a [[0, 1]] : memref<4x6xi64> into memref<24xi64>
  %v6 = memref.load %flat[%c17] : memref<24xi64>
  func.call @print(%v6) : (i64) -> ()
  %ex = memref.expand_shape %flat [[0, 1]] output_shape [2, 12] : memref<24xi64> into memref<2x12xi64>
  %v7 = memref.load %ex[%c1, %c5] : memref<2x12xi64>
  func.call @print(%v7) : (i64) -> ()
  %dflat = memref.cast %flat : memref<24xi64> to memref<?xi64>
  %dex = memref.expand_shape %dflat [[0, 1]] output_shape [%c6, 4] : memref<?xi64> into memref<?x4xi64>
  %v8 = memref.load %dex[%c5, %c3] : memref<?x4xi64>
  func.call @print(%v8) : (i64) -> ()
  %d = memref.dim %dex, %c0 : memref<?x4xi64>
  %d64 = arith.index_cast %d : index to i64
  func.call @print(%d64) : (i64) -> ()
  memref.dealloc %a : memref<4x6xi64>
  return
}
