// RUN: onnxc opt %s -p "ownership-based-deallocation{private-function-dynamic-ownership=true},dealloc-simplification" | filecheck
// RUN: onnxc opt %s -p "ownership-based-deallocation{private-function-dynamic-ownership=true},dealloc-simplification" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT
// RUN: onnxc opt %s -p "dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// With private-function-dynamic-ownership, the private @choose returns an
// ownership flag next to its memref result instead of copying the argument
// it may return; the caller frees the result under that flag and keeps the
// argument alive while the result may alias it. Without the option (last
// RUN line) @choose returns a clone of the argument: same output.
// choose(c, x): c ? fresh buffer x+1 : x. x = [3, 3]: sums 8, 6.
// RUNOUT: 8
// RUNOUT-NEXT: 6

// CHECK-LABEL: func.func private @choose
// CHECK-SAME:  -> (memref<2xi64>, i1)
// CHECK-NOT:   bufferization.clone
// CHECK:       return %{{.*}}, %{{.*}} : memref<2xi64>, i1
// CHECK-LABEL: func.func @show
// CHECK:       %[[R:.*]]:2 = call @choose
// CHECK:       bufferization.dealloc (%{{.*}}, %[[R]]#0 : memref<2xi64>, memref<2xi64>) if (%{{.*}}, %[[R]]#1)
func.func private @printI64(i64)
func.func private @printNewline()

func.func private @choose(%c: i1, %x: memref<2xi64>) -> memref<2xi64> {
  %r = scf.if %c -> (memref<2xi64>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %one = arith.constant 1 : i64
    %f = memref.alloc() : memref<2xi64>
    scf.for %i = %c0 to %c2 step %c1 {
      %v = memref.load %x[%i] : memref<2xi64>
      %w = arith.addi %v, %one : i64
      memref.store %w, %f[%i] : memref<2xi64>
    }
    scf.yield %f : memref<2xi64>
  } else {
    scf.yield %x : memref<2xi64>
  }
  return %r : memref<2xi64>
}

func.func @show(%c: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %three = arith.constant 3 : i64
  %x = memref.alloc() : memref<2xi64>
  scf.for %i = %c0 to %c2 step %c1 {
    memref.store %three, %x[%i] : memref<2xi64>
  }
  %r = func.call @choose(%c, %x) : (i1, memref<2xi64>) -> memref<2xi64>
  %a = memref.load %r[%c0] : memref<2xi64>
  %b = memref.load %r[%c1] : memref<2xi64>
  %s = arith.addi %a, %b : i64
  func.call @printI64(%s) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}

func.func @main() {
  %t = arith.constant true
  %f = arith.constant false
  func.call @show(%t) : (i1) -> ()
  func.call @show(%f) : (i1) -> ()
  return
}
