// RUN: onnxc opt %s | filecheck %s

// The vector ops the kernels use, in MLIR's syntax; print → parse → print
// keeps them and mlir-opt 19 accepts them.

// CHECK-LABEL: func.func @vector_ops
func.func @vector_ops(%m: memref<?x?xf32>, %i: index, %j: index, %s: f32, %n: index, %iv: vector<8xi64>) -> f32 {
  // CHECK: %[[V:.*]] = vector.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x?xf32>, vector<8xf32>
  %v = vector.load %m[%i, %j] : memref<?x?xf32>, vector<8xf32>
  // CHECK: vector.broadcast %{{.*}} : f32 to vector<8xf32>
  %b = vector.broadcast %s : f32 to vector<8xf32>
  // CHECK: vector.fma %[[V]], %{{.*}}, %[[V]] : vector<8xf32>
  %f = vector.fma %v, %b, %v : vector<8xf32>
  // CHECK: arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
  %a = arith.addf %f, %b : vector<8xf32>
  // CHECK: vector.create_mask %{{.*}} : vector<8xi1>
  %mask = vector.create_mask %n : vector<8xi1>
  // CHECK: vector.maskedload %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}}, %{{.*}} : memref<?x?xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
  %ml = vector.maskedload %m[%i, %j], %mask, %b : memref<?x?xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
  // CHECK: vector.maskedstore %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}}, %{{.*}} : memref<?x?xf32>, vector<8xi1>, vector<8xf32>
  vector.maskedstore %m[%i, %j], %mask, %ml : memref<?x?xf32>, vector<8xi1>, vector<8xf32>
  // CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x?xf32>, vector<8xf32>
  vector.store %a, %m[%i, %j] : memref<?x?xf32>, vector<8xf32>
  // CHECK: vector.reduction <add>, %{{.*}} : vector<8xf32> into f32
  %r = vector.reduction <add>, %a : vector<8xf32> into f32
  // CHECK: vector.extract %{{.*}}[3] : f32 from vector<8xf32>
  %e = vector.extract %a[3] : f32 from vector<8xf32>
  // CHECK: vector.insert %{{.*}}, %{{.*}} [2] : f32 into vector<8xf32>
  %ins = vector.insert %e, %a [2] : f32 into vector<8xf32>
  // CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 8, 1, 9, 2, 10, 3, 11] : vector<8xf32>, vector<8xf32>
  %sh = vector.shuffle %ins, %b [0, 8, 1, 9, 2, 10, 3, 11] : vector<8xf32>, vector<8xf32>
  // CHECK: arith.cmpf olt, %{{.*}}, %{{.*}} : vector<8xf32>
  %c = arith.cmpf olt, %sh, %b : vector<8xf32>
  // CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xf32>
  %sel = arith.select %c, %sh, %b : vector<8xi1>, vector<8xf32>
  // CHECK: math.exp %{{.*}} : vector<8xf32>
  %ex = math.exp %sel : vector<8xf32>
  // CHECK: vector.gather %{{.*}}[%{{.*}}, %{{.*}}] [%{{.*}}], %{{.*}}, %{{.*}} : memref<?x?xf32>, vector<8xi64>, vector<8xi1>, vector<8xf32> into vector<8xf32>
  %g = vector.gather %m[%i, %j] [%iv], %mask, %b : memref<?x?xf32>, vector<8xi64>, vector<8xi1>, vector<8xf32> into vector<8xf32>
  vector.store %g, %m[%i, %j] : memref<?x?xf32>, vector<8xf32>
  // CHECK: vector.splat %{{.*}} : vector<8xf32>
  %sp = vector.splat %s : vector<8xf32>
  %sum = arith.addf %ex, %sp : vector<8xf32>
  vector.store %sum, %m[%i, %j] : memref<?x?xf32>, vector<8xf32>
  return %r : f32
}
