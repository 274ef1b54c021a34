// RUN: onnxc opt %s -p bufferize | filecheck

// If becomes scf.if on the loaded condition; each branch is lowered into
// its region and yields its buffer, cast to the result type when the
// branches' shapes differ.
// CHECK-LABEL: func.func @if_else
// CHECK:         %[[C:.*]] = memref.load %arg0[] : memref<i1>
// CHECK:         %[[R:.*]] = scf.if %[[C]] -> (memref<?xf32>) {
// CHECK:           %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2xf32>
// CHECK:           %[[CA:.*]] = memref.cast %[[A]] : memref<2xf32> to memref<?xf32>
// CHECK:           scf.yield %[[CA]] : memref<?xf32>
// CHECK:         } else {
// CHECK:           %[[G:.*]] = memref.get_global
// CHECK:           %[[CG:.*]] = memref.cast %[[G]] : memref<3xf32> to memref<?xf32>
// CHECK:           scf.yield %[[CG]] : memref<?xf32>
// CHECK:         }
// CHECK:         return %[[R]]
func.func @if_else(%c: tensor<i1>, %x: tensor<2xf32>) -> tensor<?xf32> {
  %0 = "onnx.If"(%c) ({
    %1 = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "onnx.Yield"(%1) : (tensor<2xf32>) -> ()
  }, {
    %2 = "onnx.Constant"() {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
    "onnx.Yield"(%2) : (tensor<3xf32>) -> ()
  }) : (tensor<i1>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// A scan output whose slices have a dynamic shape: its stack is allocated
// in the first iteration from the slice's dims (an empty placeholder until
// then, carried through the loop); later slices must have the same dims.
// CHECK-LABEL: func.func @scan_dynamic_rows
// CHECK:         %[[P:.*]] = memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?xf32>
// CHECK:         %[[F:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %arg0, %[[S:.*]] = %[[P]])
// CHECK:           %[[B:.*]] = scf.if %{{.*}} -> (memref<?x?xf32>) {
// CHECK:             %[[A:.*]] = memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?xf32>
// CHECK:             scf.yield %[[A]]
// CHECK:           } else {
// CHECK:             scf.yield %[[S]]
// CHECK:           cf.assert %{{.*}}, "onnx.Scan at node 's': result 1: slice dim 0 changes between iterations"
// CHECK:           memref.store %{{.*}}, %[[B]][%[[I]], %{{.*}}]
// CHECK:           scf.yield %{{.*}}, %[[B]]
// CHECK:         return %[[F]]#0, %[[F]]#1
func.func @scan_dynamic_rows(%init: tensor<?xf32>, %x: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>) {
  %0:2 = "onnx.Scan"(%init, %x) ({
  ^bb0(%acc: tensor<?xf32>, %xt: tensor<?xf32>):
    %1 = "onnx.Add"(%acc, %xt) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    "onnx.Yield"(%1, %1) : (tensor<?xf32>, tensor<?xf32>) -> ()
  }) {num_scan_inputs = 1 : i64} : (tensor<?xf32>, tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>) loc("s")
  return %0#0, %0#1 : tensor<?xf32>, tensor<?x?xf32>
}

// A branch that failed shape inference (recorded on the If by inference or
// constprop) is not lowered: taken, it aborts with the error; it yields an
// empty buffer cast to the result type, which nothing reads.
// CHECK-LABEL: func.func @if_failing_branch
// CHECK:         scf.if %{{.*}} -> (memref<2x3xf32>) {
// CHECK:           memref.alloc() {alignment = 64 : i64} : memref<2x3xf32>
// CHECK:         } else {
// CHECK-NOT:       onnx.
// CHECK:           %[[F:.*]] = arith.constant false
// CHECK:           cf.assert %[[F]], "onnx.If at node 'vad': the else branch fails: onnx.LSTM at node 'l': X must have rank 3, got 4"
// CHECK:           %[[E:.*]] = memref.alloc(%{{.*}}, %{{.*}}) {alignment = 64 : i64} : memref<?x?xf32>
// CHECK:           %[[C:.*]] = memref.cast %[[E]] : memref<?x?xf32> to memref<2x3xf32>
// CHECK:           scf.yield %[[C]] : memref<2x3xf32>
func.func @if_failing_branch(%c: tensor<i1>, %x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "onnx.If"(%c) ({
    %1 = "onnx.Relu"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    "onnx.Yield"(%1) : (tensor<2x3xf32>) -> ()
  }, {
    %2 = "onnx.Neg"(%x) : (tensor<2x3xf32>) -> tensor<*xf32>
    "onnx.Yield"(%2) : (tensor<*xf32>) -> ()
  }) {onnx.branch_errors = ["", "onnx.LSTM at node 'l': X must have rank 3, got 4"]} : (tensor<i1>) -> tensor<2x3xf32> loc("vad")
  return %0 : tensor<2x3xf32>
}

// A branch a kernel cannot lower (here an index known to be out of range)
// is treated alike: it aborts with the kernel's error if taken.
// CHECK-LABEL: func.func @if_branch_kernel_error
// CHECK:         scf.if %{{.*}} -> (memref<2xf32>) {
// CHECK:           memref.alloc() {alignment = 64 : i64} : memref<2xf32>
// CHECK:         } else {
// CHECK-NOT:       memref.load
// CHECK:           cf.assert %{{.*}}, "onnx.If at node 'gif': the else branch fails: onnx.Gather at node 'g': an index is out of range of data dim 0"
// CHECK:           scf.yield
func.func @if_branch_kernel_error(%c: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "onnx.If"(%c) ({
    %1 = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "onnx.Yield"(%1) : (tensor<2xf32>) -> ()
  }, {
    %i = "onnx.Constant"() {value = dense<[5, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
    %2 = "onnx.Gather"(%x, %i) {axis = 0 : i64} : (tensor<2xf32>, tensor<2xi64>) -> tensor<2xf32> loc("g")
    "onnx.Yield"(%2) : (tensor<2xf32>) -> ()
  }) : (tensor<i1>) -> tensor<2xf32> loc("gif")
  return %0 : tensor<2xf32>
}

// A Loop's scan output grows as the loop runs (no trip count needed): a
// flat buffer and its capacity in rows are carried through the scf.while;
// when full it is reallocated to twice the rows (the element count
// saturating instead of overflowing). The row (a view of it at `i * row`)
// is made ready at the top of the iteration, as soon as the slice's dims
// are known, and the slice is copied into it with a disjoint-slot copy
// (write-into-destination then computes the slice there). The result is
// the first `trips` rows.
// CHECK-LABEL: func.func @loop_scan_grows
// CHECK:         %[[E:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xf32>
// CHECK:         %[[W:.*]]:{{.*}} = scf.while (%[[I0:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %arg0, %[[B:.*]] = %[[E]], %[[CAP:.*]] = %{{.*}}, %{{.*}} = %{{.*}})
// CHECK:           arith.cmpi slt
// CHECK:         } do {
// CHECK-NEXT:    ^bb0(%[[I:[a-z0-9]*]]: index
// CHECK:           %[[FULL:.*]] = arith.cmpi uge
// CHECK:           %[[G:.*]]:2 = scf.if %[[FULL]] -> (memref<?xf32>, index) {
// CHECK:             arith.select
// CHECK:             %[[R:.*]] = memref.realloc
// CHECK:             scf.yield %[[R]]
// CHECK:           } else {
// CHECK:             scf.yield %{{.*}}, %{{.*}} : memref<?xf32>, index
// CHECK:           %[[AT:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK:           %[[ROW:.*]] = memref.reinterpret_cast %[[G]]#0 to offset: [%[[AT]]], sizes: [3], strides: [1] : memref<?xf32> to memref<3xf32, strided<[1], offset: ?>>
// CHECK:           %[[Y:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3xf32>
// CHECK:           arith.addf
// CHECK:           memref.copy %[[Y]], %[[ROW]] {onnxc.disjoint_slot}
// CHECK:           scf.yield
// CHECK:         memref.reinterpret_cast %[[W]]#3
func.func @loop_scan_grows(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<?x3xf32>) {
  %n = "onnx.NoValue"() : () -> none
  %c = "onnx.Constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %0:2 = "onnx.Loop"(%n, %c, %x) ({
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %acc: tensor<3xf32>):
    %four = "onnx.Constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %go = "onnx.Less"(%i, %four) : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %1 = "onnx.Add"(%acc, %acc) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "onnx.Yield"(%go, %1, %1) : (tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> ()
  }) : (none, tensor<i1>, tensor<3xf32>) -> (tensor<3xf32>, tensor<?x3xf32>) loc("l")
  return %0#0, %0#1 : tensor<3xf32>, tensor<?x3xf32>
}
