// RUN: onnxc opt %s -p "bufferize{vector-bits=256,x86-levels=1}" | filecheck

// The portable build's Softmax rows are a function per x86-64 level, each
// at its level's vector width (16 lanes at v4: the 256-bit code ran at
// level 4 too, a latent-diffusion attention 1.14x the native build),
// called by the CPU level.
// CHECK-LABEL: func.func @rows
// CHECK:         call @__onnxc_cpu_level() : () -> index
// CHECK:         func.call @[[S:__onnxc_softmax_rows_[0-9a-f]+]]_v4(%arg0,
// CHECK:         func.call @[[S]]_v3(%arg0,
// CHECK:         func.call @[[S]]_v2(%arg0,
// CHECK:       func.func private @[[S]]_v2({{.*}}) attributes {onnxc.target_cpu = "x86-64-v2"}
// CHECK:         vector.reduction <maximumf>, %{{.*}} : vector<4xf32> into f32
// CHECK:       func.func private @[[S]]_v3({{.*}}) attributes {onnxc.target_cpu = "x86-64-v3"}
// CHECK:         vector.reduction <maximumf>, %{{.*}} : vector<8xf32> into f32
// CHECK:       func.func private @[[S]]_v4({{.*}}) attributes {onnxc.target_cpu = "x86-64-v4"}
// CHECK:         vector.reduction <maximumf>, %{{.*}} : vector<16xf32> into f32
// CHECK:         math.exp %{{.*}} : vector<16xf32>
// CHECK:         vector.reduction <add>, %{{.*}} : vector<16xf32> into f32
func.func @rows(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = "onnx.Softmax"(%x) {axis = -1 : si64} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
