// A dense global weight matrix times a vector, then tanh / exp / erf / sqrt
// of the results, in f32 and f64.
// OUT: 4, -1, 0.5, 
// OUT: 0.999329, -0.761594, 0.462117, 
// OUT: 54.5982, 0.367879, 1.64872, 
// OUT: 1, -0.842701, 0.5205, 
// OUT: 2, -nan, 0.707107, 
// OUT: 1.41421
memref.global "private" constant @w : memref<3x2xf32> = dense<[[1.0, 1.5], [-0.5, -0.25], [0.25, 0.125]]>
memref.global "private" constant @x : memref<2xf32> = dense<[1.0, 2.0]>
func.func private @printF32(f32)
func.func private @printF64(f64)
func.func private @printComma()
func.func private @printNewline()

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %w = memref.get_global @w : memref<3x2xf32>
  %x = memref.get_global @x : memref<2xf32>
  %y = memref.alloca() : memref<3xf32>
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c3 step %c1 {
    %s = scf.for %k = %c0 to %c2 step %c1 iter_args(%acc = %zero) -> (f32) {
      %a = memref.load %w[%i, %k] : memref<3x2xf32>
      %b = memref.load %x[%k] : memref<2xf32>
      %p = arith.mulf %a, %b : f32
      %n = arith.addf %acc, %p : f32
      scf.yield %n : f32
    }
    memref.store %s, %y[%i] : memref<3xf32>
  }
  scf.for %i = %c0 to %c3 step %c1 {
    %v = memref.load %y[%i] : memref<3xf32>
    func.call @printF32(%v) : (f32) -> ()
    func.call @printComma() : () -> ()
  }
  func.call @printNewline() : () -> ()
  scf.for %i = %c0 to %c3 step %c1 {
    %v = memref.load %y[%i] : memref<3xf32>
    %t = math.tanh %v : f32
    func.call @printF32(%t) : (f32) -> ()
    func.call @printComma() : () -> ()
  }
  func.call @printNewline() : () -> ()
  scf.for %i = %c0 to %c3 step %c1 {
    %v = memref.load %y[%i] : memref<3xf32>
    %d = arith.extf %v : f32 to f64
    %t = math.exp %d : f64
    func.call @printF64(%t) : (f64) -> ()
    func.call @printComma() : () -> ()
  }
  func.call @printNewline() : () -> ()
  scf.for %i = %c0 to %c3 step %c1 {
    %v = memref.load %y[%i] : memref<3xf32>
    %d = arith.extf %v : f32 to f64
    %t = math.erf %d : f64
    func.call @printF64(%t) : (f64) -> ()
    func.call @printComma() : () -> ()
  }
  func.call @printNewline() : () -> ()
  scf.for %i = %c0 to %c3 step %c1 {
    %v = memref.load %y[%i] : memref<3xf32>
    %t = math.sqrt %v : f32
    func.call @printF32(%t) : (f32) -> ()
    func.call @printComma() : () -> ()
  }
  func.call @printNewline() : () -> ()
  %two = arith.constant 2.0 : f64
  %r = math.sqrt %two : f64
  func.call @printF64(%r) : (f64) -> ()
  func.call @printNewline() : () -> ()
  return
}
