// RUN: onnxc opt %s --emit llvm | filecheck

// The int8 kernels' two target ops: `vector.bitcast` (four bytes as one
// i32 lane) is an LLVM bitcast, and `x86vector.vpdpbusd` is the AVX-512
// VNNI intrinsic of the vector's width (the 256-bit one also selects
// AVX-VNNI's encoding).
// CHECK-LABEL: define {{.*}} @dot512(
// CHECK:         %[[W:.*]] = bitcast <4 x i8> %{{.*}} to <1 x i32>
// CHECK:         call <16 x i32> @llvm.x86.avx512.vpdpbusd.512(<16 x i32> %{{.*}}, <16 x i32> %{{.*}}, <16 x i32> %{{.*}})
// CHECK-LABEL: define {{.*}} @dot256(
// CHECK:         call <8 x i32> @llvm.x86.avx512.vpdpbusd.256(<8 x i32> %{{.*}}, <8 x i32> %{{.*}}, <8 x i32> %{{.*}})
// CHECK-DAG:   declare <16 x i32> @llvm.x86.avx512.vpdpbusd.512(<16 x i32>, <16 x i32>, <16 x i32>)
// CHECK-DAG:   declare <8 x i32> @llvm.x86.avx512.vpdpbusd.256(<8 x i32>, <8 x i32>, <8 x i32>)
func.func @dot512(%acc: vector<16xi32>, %q: vector<4xi8>, %s: vector<16xi32>) -> vector<16xi32> {
  %w = vector.bitcast %q : vector<4xi8> to vector<1xi32>
  %x = vector.extract %w[0] : i32 from vector<1xi32>
  %u = vector.broadcast %x : i32 to vector<16xi32>
  %r = x86vector.vpdpbusd %acc, %u, %s : vector<16xi32>
  return %r : vector<16xi32>
}

func.func @dot256(%acc: vector<8xi32>, %u: vector<8xi32>, %s: vector<8xi32>) -> vector<8xi32> {
  %r = x86vector.vpdpbusd %acc, %u, %s : vector<8xi32>
  return %r : vector<8xi32>
}
