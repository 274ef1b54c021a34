// RUN: onnxc opt %s -p bufferize | filecheck

// Element-wise ops become one loop nest over the output; broadcast input
// dims are indexed with 0, and each result gets a fresh 64-byte aligned
// buffer. Inputs become memref arguments.

// CHECK-LABEL: func.func @add_relu(%arg0: memref<2x3xf32>, %arg1: memref<3xf32>) -> memref<2x3xf32>
// CHECK:         %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x3xf32>
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        %[[A:.*]] = memref.load %arg0[%[[I]], %[[J]]]
// CHECK-NEXT:        %[[B:.*]] = memref.load %arg1[%[[J]]]
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:        memref.store %[[S]], %[[OUT]][%[[I]], %[[J]]]
// CHECK:         arith.maximumf
// CHECK:         return
func.func @add_relu(%x: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "onnx.Add"(%x, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = "onnx.Relu"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// Dynamic dims: the output size comes from memref.dim of the input.
// CHECK-LABEL: func.func @dynamic(%arg0: memref<?x4xf32>) -> memref<?x4xf32>
// CHECK:         %[[D:.*]] = memref.dim %arg0, %{{.*}} : memref<?x4xf32>
// CHECK:         memref.alloc(%[[D]]) {alignment = 64 : i64} : memref<?x4xf32>
func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = "onnx.Sigmoid"(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// A dynamic dim that may be 1 at run time (no symbol says otherwise)
// broadcasts then: its index is the output's times 0 or 1, chosen once
// outside the loop. Not a select of the index: to LLVM's vectorizer that
// is a symbolic stride, so it versions the loop and runs vectors when
// nothing broadcasts.
// CHECK-LABEL: func.func @add_maybe_broadcast
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:        %[[KEEP:.*]] = arith.select %{{.*}}, %{{.*}}, %[[C1]] : index
// CHECK-NEXT:        %[[XI:.*]] = arith.muli %[[I]], %[[KEEP]] : index
// CHECK:             %[[XJ:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK-NEXT:        memref.load %arg0[%[[XI]], %[[XJ]]] : memref<?x?xf32>
// CHECK:             %[[YJ:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK-NEXT:        memref.load %arg1[%{{.*}}, %[[YJ]]] : memref<1x?xf32>
// CHECK-NOT:     arith.select %{{.*}}, %{{.*}}, %[[J]]
// CHECK:         return
func.func @add_maybe_broadcast(%x: tensor<?x?xf32>, %y: tensor<1x?xf32>) -> tensor<?x?xf32> {
  %0 = "onnx.Add"(%x, %y) : (tensor<?x?xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// Inference names the broadcast of two different symbols after the
// first (`a`), but `a` is 1 at run time when `x` is the side that
// broadcasts: with `y` holding another symbol there, `x`'s dim 0 is not
// taken for the result's (its index may be pinned), while dim 1, `n` on
// both sides, is indexed directly.
// CHECK-LABEL: func.func @add_other_symbol
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK:             %[[XI:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK-NEXT:        memref.load %arg0[%[[XI]], %[[J]]] : memref<?x?xf32>
// CHECK:             %[[YI:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK-NEXT:        memref.load %arg1[%[[YI]], %[[J]]] : memref<?x?xf32>
func.func @add_other_symbol(%x: tensor<?x?xf32, #onnx.dims<"a, n">>, %y: tensor<?x?xf32, #onnx.dims<"c, n">>) -> tensor<?x?xf32, #onnx.dims<"a, n">> {
  %0 = "onnx.Add"(%x, %y) : (tensor<?x?xf32, #onnx.dims<"a, n">>, tensor<?x?xf32, #onnx.dims<"c, n">>) -> tensor<?x?xf32, #onnx.dims<"a, n">>
  return %0 : tensor<?x?xf32, #onnx.dims<"a, n">>
}

// Dynamic dims that inference proved equal to the result's (the same
// symbols) never broadcast; with every operand of the result's shape and
// row-major, the nest is one loop over flat views of all the elements (a
// long loop for LLVM to vectorize, however short the last dim is), with
// no per-element select.
// CHECK-LABEL: func.func @add_same_symbols
// CHECK:         %[[X:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%[[N:.*]]], strides: [1] : memref<?x8x?xf32> to memref<?xf32>
// CHECK:         %[[Y:.*]] = memref.reinterpret_cast %arg1 to offset: [0], sizes: [%[[N]]], strides: [1]
// CHECK:         %[[O:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [%[[N]]], strides: [1]
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %[[N]] step
// CHECK-NEXT:      memref.load %[[X]][%[[I]]]
// CHECK-NEXT:      memref.load %[[Y]][%[[I]]]
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      memref.store %{{.*}}, %[[O]][%[[I]]]
func.func @add_same_symbols(%x: tensor<?x8x?xf32, #onnx.dims<"n, 8, l">>, %y: tensor<?x8x?xf32, #onnx.dims<"n, 8, l">>) -> tensor<?x8x?xf32, #onnx.dims<"n, 8, l">> {
  %0 = "onnx.Add"(%x, %y) : (tensor<?x8x?xf32, #onnx.dims<"n, 8, l">>, tensor<?x8x?xf32, #onnx.dims<"n, 8, l">>) -> tensor<?x8x?xf32, #onnx.dims<"n, 8, l">>
  return %0 : tensor<?x8x?xf32, #onnx.dims<"n, 8, l">>
}
