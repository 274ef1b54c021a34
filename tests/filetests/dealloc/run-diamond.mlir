// RUN: onnxc opt %s -p "dealloc-pipeline" | filecheck
// RUN: onnxc opt %s -p "dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// A diamond: one branch yields a fresh buffer, the other an outer one. The
// scf.if gets an ownership flag; the outer buffer is freed after the last
// use of the result, the fresh one only when the flag says so.
// a[i] = i; then-branch: b[i] = 2*a[i]; s[i] = r[i] + 1.
// n = 5: taken: sum(2i+1) = 25, not taken: sum(i+1) = 15.
// n = 0: both 0.
// RUNOUT: 25
// RUNOUT-NEXT: 15
// RUNOUT-NEXT: 0
// RUNOUT-NEXT: 0

// CHECK-LABEL: func.func @diamond
// CHECK:       %[[A:.*]] = memref.alloc
// CHECK:       %[[R:.*]]:2 = scf.if %{{.*}} -> (memref<?xi64>, i1)
// CHECK:         scf.yield %{{.*}}, %{{.*}} : memref<?xi64>, i1
// CHECK:       } else {
// CHECK-NEXT:    scf.yield %[[A]], %{{.*}} : memref<?xi64>, i1
// CHECK:       bufferization.dealloc (%[[A]], %[[R]]#0 : {{.*}}) if (%{{.*}}, %[[R]]#1)
// CHECK:       return
func.func private @printI64(i64)
func.func private @printNewline()

func.func @sum(%m: memref<?xi64>) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i64
  %n = memref.dim %m, %c0 : memref<?xi64>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (i64) {
    %v = memref.load %m[%i] : memref<?xi64>
    %t = arith.addi %acc, %v : i64
    scf.yield %t : i64
  }
  return %s : i64
}

func.func @diamond(%c: i1, %n: index) -> memref<?xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i64
  %a = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = arith.index_cast %i : index to i64
    memref.store %v, %a[%i] : memref<?xi64>
  }
  %r = scf.if %c -> (memref<?xi64>) {
    %b = memref.alloc(%n) : memref<?xi64>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %a[%i] : memref<?xi64>
      %w = arith.addi %v, %v : i64
      memref.store %w, %b[%i] : memref<?xi64>
    }
    scf.yield %b : memref<?xi64>
  } else {
    scf.yield %a : memref<?xi64>
  }
  %s = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %r[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %s[%i] : memref<?xi64>
  }
  return %s : memref<?xi64>
}

func.func @show(%c: i1, %n: index) {
  %m = func.call @diamond(%c, %n) : (i1, index) -> memref<?xi64>
  %s = func.call @sum(%m) : (memref<?xi64>) -> i64
  func.call @printI64(%s) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}

func.func @main() {
  %t = arith.constant true
  %f = arith.constant false
  %c5 = arith.constant 5 : index
  %c0 = arith.constant 0 : index
  func.call @show(%t, %c5) : (i1, index) -> ()
  func.call @show(%f, %c5) : (i1, index) -> ()
  func.call @show(%t, %c0) : (i1, index) -> ()
  func.call @show(%f, %c0) : (i1, index) -> ()
  return
}
