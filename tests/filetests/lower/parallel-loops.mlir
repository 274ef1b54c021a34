// RUN: onnxc opt %s -p lower-parallel{threads=2} | filecheck
// RUN: onnxc opt %s -p lower-parallel{threads=1} | filecheck --check-prefix=SERIAL
// RUN: onnxc opt %s --emit llvm | filecheck --check-prefix=LLVM
// RUN: onnxc opt %s --emit llvm | run-llvm --valgrind --threads 2 | filecheck --check-prefix=EXEC
// RUN: onnxc opt %s --emit llvm | run-llvm --threads 3 | filecheck --check-prefix=EXEC

// (No drd/helgrind run: Debian's libgomp synchronizes with futexes those
// tools do not see, so every write before a barrier reads as a race.)

// Loops marked onnxc.parallel become calls of outlined functions taking
// (lb, ub, step, captured values...); the scratch alloca only the first
// loop uses is cloned into its function (one per thread), constants are
// cloned, the buffers passed. The nested marked loop is taken first: the
// outer function calls it, marked too (it runs serially under a team).
// CHECK-LABEL: func.func @main
// CHECK-NOT: memref.alloca
// CHECK: call @__onnxc_parallel3(%0, %5, %1, %[[A:[0-9]+]]) {onnxc.parallel = 2 : i64} : (index, index, index, memref<100xi64>) -> ()
// CHECK-NEXT: call @__onnxc_parallel2(%1, %5, %2, %[[A]]) {onnxc.parallel = 2 : i64}
// CHECK-NEXT: call @__onnxc_parallel1(%0, %3, %1, %[[B:[0-9]+]]) {onnxc.parallel = 2 : i64}
// CHECK-NEXT: scf.for
// CHECK-NEXT: arith.cmpi
// CHECK-NEXT: cf.assert
// CHECK-NEXT: }
// CHECK-NEXT: call @__onnxc_num_threads() {onnxc.parallel = 2 : i64}
// CHECK-LABEL: func.func private @__onnxc_parallel0(%arg0: index, %arg1: index, %arg2: index, %arg3: index, %arg4: memref<100xi64>) attributes {onnxc.kernel, onnxc.parallel_body}
// CHECK: scf.for %arg5 = %arg0 to %arg1 step
// CHECK-LABEL: func.func private @__onnxc_parallel1(
// CHECK: scf.for %arg4 = %arg0 to %arg1 step
// CHECK-NEXT: func.call @__onnxc_parallel0(%0, %3, %2, %arg4, %arg3) {onnxc.parallel = 2 : i64}
// CHECK-LABEL: func.func private @__onnxc_parallel3(%arg0: index, %arg1: index, %arg2: index, %arg3: memref<100xi64>) attributes {onnxc.kernel, onnxc.parallel_body}
// CHECK: memref.alloca() : memref<2xi64>
// CHECK: scf.for %arg4 = %arg0 to %arg1 step
// CHECK-NOT: onnxc.parallel}
// CHECK: return
//
// SERIAL-NOT: onnxc.parallel
// SERIAL-NOT: __onnxc_num_threads
// SERIAL: arith.constant 1 : index
//
// The trampoline unpacks the context and runs the chunks it claims.
// LLVM: call i64 @__onnxc_team(
// LLVM: call void @GOMP_parallel_loop_dynamic(ptr @__onnxc_parallel{{[0-9]+}}.omp, ptr
// LLVM: define internal void @__onnxc_parallel{{[0-9]+}}.omp(ptr %ctx)
// LLVM: call zeroext i1 @GOMP_loop_dynamic_next(ptr %first, ptr %end)
// LLVM: call void @GOMP_loop_end_nowait()
//
// sum(i*i, i < 100) + 33 * 1000 = 361350; sum of b = 16200.
// EXEC: 361350
// EXEC-NEXT: 16200
// EXEC-NEXT: 1
func.func private @printI64(i64)
func.func private @printNewline()
func.func private @__onnxc_num_threads() -> index

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c25 = arith.constant 25 : index
  %c100 = arith.constant 100 : index
  %k1000 = arith.constant 1000 : i64
  %k100 = arith.constant 100 : i64
  %zero = arith.constant 0 : i64
  %a = memref.alloc() : memref<100xi64>
  %b = memref.alloc() : memref<100xi64>
  %tmp = memref.alloca() : memref<2xi64>
  scf.for %i = %c0 to %c100 step %c1 {
    %v = arith.index_cast %i : index to i64
    memref.store %v, %tmp[%c1] : memref<2xi64>
    %w = memref.load %tmp[%c1] : memref<2xi64>
    %sq = arith.muli %w, %w : i64
    memref.store %sq, %a[%i] : memref<100xi64>
  } {onnxc.parallel}
  scf.for %i = %c1 to %c100 step %c3 {
    %v = memref.load %a[%i] : memref<100xi64>
    %w = arith.addi %v, %k1000 : i64
    memref.store %w, %a[%i] : memref<100xi64>
  } {onnxc.parallel}
  scf.for %r = %c0 to %c4 step %c1 {
    scf.for %c = %c0 to %c25 step %c1 {
      %ri = arith.index_cast %r : index to i64
      %ci = arith.index_cast %c : index to i64
      %h = arith.muli %ri, %k100 : i64
      %v = arith.addi %h, %ci : i64
      %row = arith.muli %r, %c25 : index
      %at = arith.addi %row, %c : index
      memref.store %v, %b[%at] : memref<100xi64>
    } {onnxc.parallel}
  } {onnxc.parallel}
  // A loop with a runtime check stays serial (and unmarked).
  scf.for %i = %c0 to %c4 step %c1 {
    %ok = arith.cmpi slt, %i, %c100 : index
    cf.assert %ok, "in range"
  } {onnxc.parallel}
  %n = func.call @__onnxc_num_threads() : () -> index
  %pos = arith.cmpi sge, %n, %c1 : index
  %s = scf.for %i = %c0 to %c100 step %c1 iter_args(%acc = %zero) -> (i64) {
    %v = memref.load %a[%i] : memref<100xi64>
    %t = arith.addi %acc, %v : i64
    scf.yield %t : i64
  }
  %s2 = scf.for %i = %c0 to %c100 step %c1 iter_args(%acc = %zero) -> (i64) {
    %v = memref.load %b[%i] : memref<100xi64>
    %t = arith.addi %acc, %v : i64
    scf.yield %t : i64
  }
  func.call @printI64(%s) : (i64) -> ()
  func.call @printNewline() : () -> ()
  func.call @printI64(%s2) : (i64) -> ()
  func.call @printNewline() : () -> ()
  %p = arith.extui %pos : i1 to i64
  func.call @printI64(%p) : (i64) -> ()
  func.call @printNewline() : () -> ()
  memref.dealloc %a : memref<100xi64>
  memref.dealloc %b : memref<100xi64>
  return
}
