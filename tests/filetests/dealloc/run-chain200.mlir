// RUN: onnxc opt %s -p "ownership-based-deallocation,dealloc-simplification" | filecheck
// RUN: onnxc opt %s -p "dealloc-pipeline" | filecheck --check-prefix=REUSE
// RUN: onnxc opt %s -p "dealloc-pipeline" --emit llvm | run-llvm --valgrind | filecheck --check-prefix=RUNOUT

// A straight chain of 200 heap buffers (generated): b[k] = b[k-1] + 1 over
// %n elements (a runtime size). Each buffer is freed right after the loop
// that reads it for the last time, so at most 2 are alive at once (upstream
// frees them all at the end of the block). With buffer-reuse (part of
// dealloc-pipeline) the chain ping-pongs between two allocations.
// Sum of the last one: n * 200.
// RUNOUT: 0
// RUNOUT-NEXT: 200
// RUNOUT-NEXT: 1400

// CHECK-LABEL: func.func @chain
// CHECK-COUNT-200: memref.dealloc
// CHECK-NOT:   memref.dealloc
// CHECK:       return
// REUSE-LABEL: func.func @chain
// REUSE-COUNT-2: memref.alloc
// REUSE-NOT:   memref.alloc
// REUSE:       memref.dealloc
// REUSE-NOT:   memref.dealloc
// REUSE:       return
func.func private @printI64(i64)
func.func private @printNewline()

func.func @chain(%n: index) -> memref<?xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i64
  %z = arith.constant 0 : i64
  %b0 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    memref.store %z, %b0[%i] : memref<?xi64>
  }
  %b1 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b0[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b1[%i] : memref<?xi64>
  }
  %b2 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b1[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b2[%i] : memref<?xi64>
  }
  %b3 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b2[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b3[%i] : memref<?xi64>
  }
  %b4 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b3[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b4[%i] : memref<?xi64>
  }
  %b5 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b4[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b5[%i] : memref<?xi64>
  }
  %b6 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b5[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b6[%i] : memref<?xi64>
  }
  %b7 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b6[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b7[%i] : memref<?xi64>
  }
  %b8 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b7[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b8[%i] : memref<?xi64>
  }
  %b9 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b8[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b9[%i] : memref<?xi64>
  }
  %b10 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b9[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b10[%i] : memref<?xi64>
  }
  %b11 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b10[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b11[%i] : memref<?xi64>
  }
  %b12 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b11[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b12[%i] : memref<?xi64>
  }
  %b13 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b12[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b13[%i] : memref<?xi64>
  }
  %b14 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b13[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b14[%i] : memref<?xi64>
  }
  %b15 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b14[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b15[%i] : memref<?xi64>
  }
  %b16 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b15[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b16[%i] : memref<?xi64>
  }
  %b17 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b16[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b17[%i] : memref<?xi64>
  }
  %b18 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b17[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b18[%i] : memref<?xi64>
  }
  %b19 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b18[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b19[%i] : memref<?xi64>
  }
  %b20 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b19[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b20[%i] : memref<?xi64>
  }
  %b21 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b20[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b21[%i] : memref<?xi64>
  }
  %b22 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b21[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b22[%i] : memref<?xi64>
  }
  %b23 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b22[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b23[%i] : memref<?xi64>
  }
  %b24 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b23[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b24[%i] : memref<?xi64>
  }
  %b25 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b24[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b25[%i] : memref<?xi64>
  }
  %b26 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b25[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b26[%i] : memref<?xi64>
  }
  %b27 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b26[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b27[%i] : memref<?xi64>
  }
  %b28 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b27[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b28[%i] : memref<?xi64>
  }
  %b29 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b28[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b29[%i] : memref<?xi64>
  }
  %b30 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b29[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b30[%i] : memref<?xi64>
  }
  %b31 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b30[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b31[%i] : memref<?xi64>
  }
  %b32 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b31[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b32[%i] : memref<?xi64>
  }
  %b33 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b32[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b33[%i] : memref<?xi64>
  }
  %b34 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b33[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b34[%i] : memref<?xi64>
  }
  %b35 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b34[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b35[%i] : memref<?xi64>
  }
  %b36 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b35[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b36[%i] : memref<?xi64>
  }
  %b37 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b36[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b37[%i] : memref<?xi64>
  }
  %b38 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b37[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b38[%i] : memref<?xi64>
  }
  %b39 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b38[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b39[%i] : memref<?xi64>
  }
  %b40 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b39[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b40[%i] : memref<?xi64>
  }
  %b41 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b40[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b41[%i] : memref<?xi64>
  }
  %b42 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b41[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b42[%i] : memref<?xi64>
  }
  %b43 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b42[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b43[%i] : memref<?xi64>
  }
  %b44 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b43[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b44[%i] : memref<?xi64>
  }
  %b45 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b44[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b45[%i] : memref<?xi64>
  }
  %b46 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b45[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b46[%i] : memref<?xi64>
  }
  %b47 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b46[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b47[%i] : memref<?xi64>
  }
  %b48 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b47[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b48[%i] : memref<?xi64>
  }
  %b49 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b48[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b49[%i] : memref<?xi64>
  }
  %b50 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b49[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b50[%i] : memref<?xi64>
  }
  %b51 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b50[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b51[%i] : memref<?xi64>
  }
  %b52 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b51[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b52[%i] : memref<?xi64>
  }
  %b53 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b52[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b53[%i] : memref<?xi64>
  }
  %b54 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b53[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b54[%i] : memref<?xi64>
  }
  %b55 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b54[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b55[%i] : memref<?xi64>
  }
  %b56 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b55[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b56[%i] : memref<?xi64>
  }
  %b57 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b56[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b57[%i] : memref<?xi64>
  }
  %b58 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b57[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b58[%i] : memref<?xi64>
  }
  %b59 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b58[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b59[%i] : memref<?xi64>
  }
  %b60 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b59[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b60[%i] : memref<?xi64>
  }
  %b61 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b60[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b61[%i] : memref<?xi64>
  }
  %b62 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b61[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b62[%i] : memref<?xi64>
  }
  %b63 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b62[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b63[%i] : memref<?xi64>
  }
  %b64 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b63[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b64[%i] : memref<?xi64>
  }
  %b65 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b64[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b65[%i] : memref<?xi64>
  }
  %b66 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b65[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b66[%i] : memref<?xi64>
  }
  %b67 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b66[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b67[%i] : memref<?xi64>
  }
  %b68 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b67[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b68[%i] : memref<?xi64>
  }
  %b69 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b68[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b69[%i] : memref<?xi64>
  }
  %b70 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b69[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b70[%i] : memref<?xi64>
  }
  %b71 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b70[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b71[%i] : memref<?xi64>
  }
  %b72 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b71[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b72[%i] : memref<?xi64>
  }
  %b73 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b72[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b73[%i] : memref<?xi64>
  }
  %b74 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b73[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b74[%i] : memref<?xi64>
  }
  %b75 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b74[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b75[%i] : memref<?xi64>
  }
  %b76 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b75[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b76[%i] : memref<?xi64>
  }
  %b77 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b76[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b77[%i] : memref<?xi64>
  }
  %b78 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b77[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b78[%i] : memref<?xi64>
  }
  %b79 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b78[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b79[%i] : memref<?xi64>
  }
  %b80 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b79[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b80[%i] : memref<?xi64>
  }
  %b81 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b80[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b81[%i] : memref<?xi64>
  }
  %b82 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b81[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b82[%i] : memref<?xi64>
  }
  %b83 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b82[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b83[%i] : memref<?xi64>
  }
  %b84 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b83[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b84[%i] : memref<?xi64>
  }
  %b85 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b84[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b85[%i] : memref<?xi64>
  }
  %b86 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b85[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b86[%i] : memref<?xi64>
  }
  %b87 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b86[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b87[%i] : memref<?xi64>
  }
  %b88 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b87[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b88[%i] : memref<?xi64>
  }
  %b89 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b88[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b89[%i] : memref<?xi64>
  }
  %b90 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b89[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b90[%i] : memref<?xi64>
  }
  %b91 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b90[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b91[%i] : memref<?xi64>
  }
  %b92 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b91[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b92[%i] : memref<?xi64>
  }
  %b93 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b92[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b93[%i] : memref<?xi64>
  }
  %b94 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b93[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b94[%i] : memref<?xi64>
  }
  %b95 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b94[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b95[%i] : memref<?xi64>
  }
  %b96 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b95[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b96[%i] : memref<?xi64>
  }
  %b97 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b96[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b97[%i] : memref<?xi64>
  }
  %b98 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b97[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b98[%i] : memref<?xi64>
  }
  %b99 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b98[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b99[%i] : memref<?xi64>
  }
  %b100 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b99[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b100[%i] : memref<?xi64>
  }
  %b101 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b100[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b101[%i] : memref<?xi64>
  }
  %b102 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b101[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b102[%i] : memref<?xi64>
  }
  %b103 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b102[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b103[%i] : memref<?xi64>
  }
  %b104 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b103[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b104[%i] : memref<?xi64>
  }
  %b105 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b104[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b105[%i] : memref<?xi64>
  }
  %b106 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b105[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b106[%i] : memref<?xi64>
  }
  %b107 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b106[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b107[%i] : memref<?xi64>
  }
  %b108 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b107[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b108[%i] : memref<?xi64>
  }
  %b109 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b108[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b109[%i] : memref<?xi64>
  }
  %b110 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b109[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b110[%i] : memref<?xi64>
  }
  %b111 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b110[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b111[%i] : memref<?xi64>
  }
  %b112 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b111[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b112[%i] : memref<?xi64>
  }
  %b113 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b112[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b113[%i] : memref<?xi64>
  }
  %b114 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b113[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b114[%i] : memref<?xi64>
  }
  %b115 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b114[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b115[%i] : memref<?xi64>
  }
  %b116 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b115[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b116[%i] : memref<?xi64>
  }
  %b117 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b116[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b117[%i] : memref<?xi64>
  }
  %b118 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b117[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b118[%i] : memref<?xi64>
  }
  %b119 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b118[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b119[%i] : memref<?xi64>
  }
  %b120 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b119[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b120[%i] : memref<?xi64>
  }
  %b121 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b120[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b121[%i] : memref<?xi64>
  }
  %b122 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b121[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b122[%i] : memref<?xi64>
  }
  %b123 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b122[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b123[%i] : memref<?xi64>
  }
  %b124 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b123[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b124[%i] : memref<?xi64>
  }
  %b125 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b124[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b125[%i] : memref<?xi64>
  }
  %b126 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b125[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b126[%i] : memref<?xi64>
  }
  %b127 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b126[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b127[%i] : memref<?xi64>
  }
  %b128 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b127[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b128[%i] : memref<?xi64>
  }
  %b129 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b128[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b129[%i] : memref<?xi64>
  }
  %b130 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b129[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b130[%i] : memref<?xi64>
  }
  %b131 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b130[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b131[%i] : memref<?xi64>
  }
  %b132 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b131[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b132[%i] : memref<?xi64>
  }
  %b133 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b132[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b133[%i] : memref<?xi64>
  }
  %b134 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b133[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b134[%i] : memref<?xi64>
  }
  %b135 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b134[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b135[%i] : memref<?xi64>
  }
  %b136 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b135[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b136[%i] : memref<?xi64>
  }
  %b137 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b136[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b137[%i] : memref<?xi64>
  }
  %b138 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b137[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b138[%i] : memref<?xi64>
  }
  %b139 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b138[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b139[%i] : memref<?xi64>
  }
  %b140 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b139[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b140[%i] : memref<?xi64>
  }
  %b141 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b140[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b141[%i] : memref<?xi64>
  }
  %b142 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b141[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b142[%i] : memref<?xi64>
  }
  %b143 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b142[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b143[%i] : memref<?xi64>
  }
  %b144 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b143[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b144[%i] : memref<?xi64>
  }
  %b145 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b144[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b145[%i] : memref<?xi64>
  }
  %b146 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b145[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b146[%i] : memref<?xi64>
  }
  %b147 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b146[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b147[%i] : memref<?xi64>
  }
  %b148 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b147[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b148[%i] : memref<?xi64>
  }
  %b149 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b148[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b149[%i] : memref<?xi64>
  }
  %b150 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b149[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b150[%i] : memref<?xi64>
  }
  %b151 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b150[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b151[%i] : memref<?xi64>
  }
  %b152 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b151[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b152[%i] : memref<?xi64>
  }
  %b153 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b152[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b153[%i] : memref<?xi64>
  }
  %b154 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b153[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b154[%i] : memref<?xi64>
  }
  %b155 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b154[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b155[%i] : memref<?xi64>
  }
  %b156 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b155[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b156[%i] : memref<?xi64>
  }
  %b157 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b156[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b157[%i] : memref<?xi64>
  }
  %b158 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b157[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b158[%i] : memref<?xi64>
  }
  %b159 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b158[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b159[%i] : memref<?xi64>
  }
  %b160 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b159[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b160[%i] : memref<?xi64>
  }
  %b161 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b160[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b161[%i] : memref<?xi64>
  }
  %b162 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b161[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b162[%i] : memref<?xi64>
  }
  %b163 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b162[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b163[%i] : memref<?xi64>
  }
  %b164 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b163[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b164[%i] : memref<?xi64>
  }
  %b165 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b164[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b165[%i] : memref<?xi64>
  }
  %b166 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b165[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b166[%i] : memref<?xi64>
  }
  %b167 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b166[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b167[%i] : memref<?xi64>
  }
  %b168 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b167[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b168[%i] : memref<?xi64>
  }
  %b169 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b168[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b169[%i] : memref<?xi64>
  }
  %b170 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b169[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b170[%i] : memref<?xi64>
  }
  %b171 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b170[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b171[%i] : memref<?xi64>
  }
  %b172 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b171[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b172[%i] : memref<?xi64>
  }
  %b173 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b172[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b173[%i] : memref<?xi64>
  }
  %b174 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b173[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b174[%i] : memref<?xi64>
  }
  %b175 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b174[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b175[%i] : memref<?xi64>
  }
  %b176 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b175[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b176[%i] : memref<?xi64>
  }
  %b177 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b176[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b177[%i] : memref<?xi64>
  }
  %b178 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b177[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b178[%i] : memref<?xi64>
  }
  %b179 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b178[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b179[%i] : memref<?xi64>
  }
  %b180 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b179[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b180[%i] : memref<?xi64>
  }
  %b181 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b180[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b181[%i] : memref<?xi64>
  }
  %b182 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b181[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b182[%i] : memref<?xi64>
  }
  %b183 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b182[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b183[%i] : memref<?xi64>
  }
  %b184 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b183[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b184[%i] : memref<?xi64>
  }
  %b185 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b184[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b185[%i] : memref<?xi64>
  }
  %b186 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b185[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b186[%i] : memref<?xi64>
  }
  %b187 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b186[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b187[%i] : memref<?xi64>
  }
  %b188 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b187[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b188[%i] : memref<?xi64>
  }
  %b189 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b188[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b189[%i] : memref<?xi64>
  }
  %b190 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b189[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b190[%i] : memref<?xi64>
  }
  %b191 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b190[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b191[%i] : memref<?xi64>
  }
  %b192 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b191[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b192[%i] : memref<?xi64>
  }
  %b193 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b192[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b193[%i] : memref<?xi64>
  }
  %b194 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b193[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b194[%i] : memref<?xi64>
  }
  %b195 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b194[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b195[%i] : memref<?xi64>
  }
  %b196 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b195[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b196[%i] : memref<?xi64>
  }
  %b197 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b196[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b197[%i] : memref<?xi64>
  }
  %b198 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b197[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b198[%i] : memref<?xi64>
  }
  %b199 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b198[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b199[%i] : memref<?xi64>
  }
  %b200 = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b199[%i] : memref<?xi64>
    %w = arith.addi %v, %one : i64
    memref.store %w, %b200[%i] : memref<?xi64>
  }
  return %b200 : memref<?xi64>
}

func.func @show(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i64
  %m = func.call @chain(%n) : (index) -> memref<?xi64>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (i64) {
    %v = memref.load %m[%i] : memref<?xi64>
    %t = arith.addi %acc, %v : i64
    scf.yield %t : i64
  }
  func.call @printI64(%s) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  func.call @show(%c0) : (index) -> ()
  func.call @show(%c1) : (index) -> ()
  func.call @show(%c7) : (index) -> ()
  return
}
