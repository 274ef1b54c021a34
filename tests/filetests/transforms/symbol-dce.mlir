// RUN: onnxc opt %s -p symbol-dce | filecheck

// Private globals nobody reads go; a referenced one and a public one stay.
// CHECK-NOT:   @unused
// CHECK:       memref.global "private" constant @used
// CHECK-NOT:   @unused
// CHECK:       memref.global @exported
// CHECK-NOT:   @unused
// CHECK-LABEL: func.func @f
// CHECK:         memref.get_global @used
memref.global "private" constant @unused : memref<2xf32> = dense<[1.0, 2.0]>
memref.global "private" constant @used : memref<2xf32> = dense<[3.0, 4.0]>
memref.global @exported : memref<2xf32> = dense<[5.0, 6.0]>
func.func @f() -> f32 {
  %c0 = arith.constant 0 : index
  %g = memref.get_global @used : memref<2xf32>
  %v = memref.load %g[%c0] : memref<2xf32>
  return %v : f32
}
