// 4x4 f32 matmul with iter_args, an scf.if with results inside a loop
// (ReLU-style clamp with a count), and a few casts.
// OUT: 80, 
// OUT: 20, 10, 0, -10, 
// OUT: 6
// OUT: 4294967295, 255, -1, 3
func.func private @printF32(f32)
func.func private @printI64(i64)
func.func private @printComma()
func.func private @printNewline()

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<4x4xf32>
  %b = memref.alloc() : memref<4x4xf32>
  %c = memref.alloc() : memref<4x4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %s = arith.addi %i, %j : index
      %d = arith.subi %i, %j : index
      %si = arith.index_cast %s : index to i32
      %di = arith.index_cast %d : index to i32
      %sf = arith.sitofp %si : i32 to f32
      %df = arith.sitofp %di : i32 to f32
      memref.store %sf, %a[%i, %j] : memref<4x4xf32>
      memref.store %df, %b[%i, %j] : memref<4x4xf32>
    }
  }
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
        %x = memref.load %a[%i, %k] : memref<4x4xf32>
        %y = memref.load %b[%k, %j] : memref<4x4xf32>
        %p = arith.mulf %x, %y : f32
        %n = arith.addf %acc, %p : f32
        scf.yield %n : f32
      }
      memref.store %r, %c[%i, %j] : memref<4x4xf32>
    }
  }
  %total = scf.for %i = %c0 to %c4 step %c1 iter_args(%t = %zero) -> (f32) {
    %row = scf.for %j = %c0 to %c4 step %c1 iter_args(%u = %t) -> (f32) {
      %v = memref.load %c[%i, %j] : memref<4x4xf32>
      %n = arith.addf %u, %v : f32
      scf.yield %n : f32
    }
    scf.yield %row : f32
  }
  func.call @printF32(%total) : (f32) -> ()
  func.call @printComma() : () -> ()
  func.call @printNewline() : () -> ()
  // Row 1 of c, then how many entries of c are negative (clamped to 0).
  scf.for %j = %c0 to %c4 step %c1 {
    %v = memref.load %c[%c1, %j] : memref<4x4xf32>
    func.call @printF32(%v) : (f32) -> ()
    func.call @printComma() : () -> ()
  }
  func.call @printNewline() : () -> ()
  %z64 = arith.constant 0 : i64
  %neg = scf.for %i = %c0 to %c4 step %c1 iter_args(%n0 = %z64) -> (i64) {
    %n2 = scf.for %j = %c0 to %c4 step %c1 iter_args(%n1 = %n0) -> (i64) {
      %v = memref.load %c[%i, %j] : memref<4x4xf32>
      %lt = arith.cmpf olt, %v, %zero : f32
      %r:2 = scf.if %lt -> (f32, i64) {
        %one = arith.constant 1 : i64
        %m = arith.addi %n1, %one : i64
        scf.yield %zero, %m : f32, i64
      } else {
        scf.yield %v, %n1 : f32, i64
      }
      memref.store %r#0, %c[%i, %j] : memref<4x4xf32>
      scf.yield %r#1 : i64
    }
    scf.yield %n2 : i64
  }
  func.call @printI64(%neg) : (i64) -> ()
  func.call @printNewline() : () -> ()
  %m1 = arith.constant -1 : i32
  %u = arith.extui %m1 : i32 to i64
  func.call @printI64(%u) : (i64) -> ()
  func.call @printComma() : () -> ()
  %i8 = arith.trunci %m1 : i32 to i8
  %idx = arith.index_castui %i8 : i8 to index
  %i64 = arith.index_cast %idx : index to i64
  func.call @printI64(%i64) : (i64) -> ()
  func.call @printComma() : () -> ()
  %sidx = arith.index_cast %i8 : i8 to index
  %s64 = arith.index_cast %sidx : index to i64
  func.call @printI64(%s64) : (i64) -> ()
  func.call @printComma() : () -> ()
  %f = arith.constant 3.99 : f64
  %fi = arith.fptoui %f : f64 to i64
  func.call @printI64(%fi) : (i64) -> ()
  func.call @printNewline() : () -> ()
  memref.dealloc %a : memref<4x4xf32>
  memref.dealloc %b : memref<4x4xf32>
  memref.dealloc %c : memref<4x4xf32>
  return
}
