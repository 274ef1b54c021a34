// RUN: onnxc opt %s
// Binary, unary, comparison, select and cast ops.

// CHECK: module {
// CHECK-LABEL: func.func @float_ops(%arg0: f32, %arg1: f32) -> f32 {
// CHECK-NEXT: %0 = arith.addf %arg0, %arg1 : f32
// CHECK-NEXT: %1 = arith.subf %0, %arg1 : f32
// CHECK-NEXT: %2 = arith.mulf %1, %arg0 : f32
// CHECK-NEXT: %3 = arith.divf %2, %arg1 : f32
// CHECK-NEXT: %4 = arith.remf %3, %arg0 : f32
// CHECK-NEXT: %5 = arith.negf %4 : f32
// CHECK-NEXT: %6 = arith.maximumf %5, %arg0 : f32
// CHECK-NEXT: %7 = arith.minimumf %6, %arg1 : f32
// CHECK-NEXT: %8 = arith.maxnumf %7, %arg0 : f32
// CHECK-NEXT: %9 = arith.minnumf %8, %arg1 {test.attr} : f32
// CHECK-NEXT: return %9 : f32
// CHECK-NEXT: }
// CHECK-LABEL: func.func @int_ops(%arg0: i32, %arg1: i32, %arg2: index) -> i32 {
// CHECK-NEXT: %0 = arith.addi %arg0, %arg1 : i32
// CHECK-NEXT: %1 = arith.subi %0, %arg1 : i32
// CHECK-NEXT: %2 = arith.muli %1, %arg0 : i32
// CHECK-NEXT: %3 = arith.divsi %2, %arg1 : i32
// CHECK-NEXT: %4 = arith.divui %3, %arg1 : i32
// CHECK-NEXT: %5 = arith.ceildivsi %4, %arg1 : i32
// CHECK-NEXT: %6 = arith.floordivsi %5, %arg1 : i32
// CHECK-NEXT: %7 = arith.remsi %6, %arg1 : i32
// CHECK-NEXT: %8 = arith.remui %7, %arg1 : i32
// CHECK-NEXT: %9 = arith.andi %8, %arg0 : i32
// CHECK-NEXT: %10 = arith.ori %9, %arg0 : i32
// CHECK-NEXT: %11 = arith.xori %10, %arg0 : i32
// CHECK-NEXT: %12 = arith.shli %11, %arg1 : i32
// CHECK-NEXT: %13 = arith.shrsi %12, %arg1 : i32
// CHECK-NEXT: %14 = arith.shrui %13, %arg1 : i32
// CHECK-NEXT: %15 = arith.maxsi %14, %arg0 : i32
// CHECK-NEXT: %16 = arith.minui %15, %arg0 : i32
// CHECK-NEXT: %17 = arith.addi %arg2, %arg2 : index
// CHECK-NEXT: return %16 : i32
// CHECK-NEXT: }
// CHECK-LABEL: func.func @compare_select(%arg0: f32, %arg1: f32, %arg2: index, %arg3: index) -> f32 {
// CHECK-NEXT: %0 = arith.cmpi eq, %arg2, %arg3 : index
// CHECK-NEXT: %1 = arith.cmpi ne, %arg2, %arg3 : index
// CHECK-NEXT: %2 = arith.cmpi slt, %arg2, %arg3 : index
// CHECK-NEXT: %3 = arith.cmpi uge, %arg2, %arg3 {test.x} : index
// CHECK-NEXT: %4 = arith.cmpf olt, %arg0, %arg1 : f32
// CHECK-NEXT: %5 = arith.cmpf une, %arg0, %arg1 : f32
// CHECK-NEXT: %6 = arith.cmpf true, %arg0, %arg1 : f32
// CHECK-NEXT: %7 = arith.select %2, %arg0, %arg1 : f32
// CHECK-NEXT: %8 = arith.select %4, %7, %arg0 : f32
// CHECK-NEXT: return %8 : f32
// CHECK-NEXT: }
// CHECK-LABEL: func.func @casts(%arg0: f32, %arg1: index, %arg2: i32) -> f64 {
// CHECK-NEXT: %0 = arith.extf %arg0 : f32 to f64
// CHECK-NEXT: %1 = arith.truncf %0 : f64 to f16
// CHECK-NEXT: %2 = arith.fptosi %arg0 : f32 to i32
// CHECK-NEXT: %3 = arith.fptoui %arg0 : f32 to i64
// CHECK-NEXT: %4 = arith.sitofp %arg2 : i32 to f32
// CHECK-NEXT: %5 = arith.uitofp %arg2 : i32 to f64
// CHECK-NEXT: %6 = arith.extsi %arg2 : i32 to i64
// CHECK-NEXT: %7 = arith.extui %arg2 : i32 to i64
// CHECK-NEXT: %8 = arith.trunci %arg2 : i32 to i8
// CHECK-NEXT: %9 = arith.index_cast %arg1 : index to i64
// CHECK-NEXT: %10 = arith.index_cast %arg2 : i32 to index
// CHECK-NEXT: %11 = arith.index_castui %arg2 : i32 to index
// CHECK-NEXT: %12 = arith.bitcast %arg0 : f32 to i32
// CHECK-NEXT: return %0 : f64
// CHECK-NEXT: }
// CHECK-LABEL: func.func @tensor_ops(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xi1> {
// CHECK-NEXT: %0 = arith.addf %arg0, %arg1 : tensor<4xf32>
// CHECK-NEXT: %1 = arith.cmpf oge, %0, %arg1 : tensor<4xf32>
// CHECK-NEXT: %2 = arith.select %1, %0, %arg0 : tensor<4xi1>, tensor<4xf32>
// CHECK-NEXT: return %1 : tensor<4xi1>
// CHECK-NEXT: }
// CHECK-NEXT: }

func.func @float_ops(%a: f32, %b: f32) -> f32 {
  %0 = arith.addf %a, %b : f32
  %1 = arith.subf %0, %b : f32
  %2 = arith.mulf %1, %a : f32
  %3 = arith.divf %2, %b : f32
  %4 = arith.remf %3, %a : f32
  %5 = arith.negf %4 : f32
  %6 = arith.maximumf %5, %a : f32
  %7 = arith.minimumf %6, %b : f32
  %8 = arith.maxnumf %7, %a : f32
  %9 = arith.minnumf %8, %b {test.attr} : f32
  return %9 : f32
}
func.func @int_ops(%a: i32, %b: i32, %i: index) -> i32 {
  %0 = arith.addi %a, %b : i32
  %1 = arith.subi %0, %b : i32
  %2 = arith.muli %1, %a : i32
  %3 = arith.divsi %2, %b : i32
  %4 = arith.divui %3, %b : i32
  %5 = arith.ceildivsi %4, %b : i32
  %6 = arith.floordivsi %5, %b : i32
  %7 = arith.remsi %6, %b : i32
  %8 = arith.remui %7, %b : i32
  %9 = arith.andi %8, %a : i32
  %10 = arith.ori %9, %a : i32
  %11 = arith.xori %10, %a : i32
  %12 = arith.shli %11, %b : i32
  %13 = arith.shrsi %12, %b : i32
  %14 = arith.shrui %13, %b : i32
  %15 = arith.maxsi %14, %a : i32
  %16 = arith.minui %15, %a : i32
  %17 = arith.addi %i, %i : index
  return %16 : i32
}
func.func @compare_select(%a: f32, %b: f32, %i: index, %j: index) -> f32 {
  %c0 = arith.cmpi eq, %i, %j : index
  %c1 = arith.cmpi ne, %i, %j : index
  %c2 = arith.cmpi slt, %i, %j : index
  %c3 = arith.cmpi uge, %i, %j {test.x} : index
  %f0 = arith.cmpf olt, %a, %b : f32
  %f1 = arith.cmpf une, %a, %b : f32
  %f2 = arith.cmpf true, %a, %b : f32
  %s = arith.select %c2, %a, %b : f32
  %t = arith.select %f0, %s, %a : f32
  return %t : f32
}
func.func @casts(%a: f32, %i: index, %x: i32) -> f64 {
  %0 = arith.extf %a : f32 to f64
  %1 = arith.truncf %0 : f64 to f16
  %2 = arith.fptosi %a : f32 to i32
  %3 = arith.fptoui %a : f32 to i64
  %4 = arith.sitofp %x : i32 to f32
  %5 = arith.uitofp %x : i32 to f64
  %6 = arith.extsi %x : i32 to i64
  %7 = arith.extui %x : i32 to i64
  %8 = arith.trunci %x : i32 to i8
  %9 = arith.index_cast %i : index to i64
  %10 = arith.index_cast %x : i32 to index
  %11 = arith.index_castui %x : i32 to index
  %12 = arith.bitcast %a : f32 to i32
  return %0 : f64
}
func.func @tensor_ops(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  %1 = arith.cmpf oge, %0, %b : tensor<4xf32>
  %2 = arith.select %1, %0, %a : tensor<4xi1>, tensor<4xf32>
  return %1 : tensor<4xi1>
}
