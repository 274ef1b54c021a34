// RUN: onnxc opt %s --emit llvm | run-llvm --valgrind | filecheck
// RUN: onnxc opt %s --emit llvm | filecheck --check-prefix=IR

// i4 and ui2 elements take a byte each in memory: stores extend by the
// signedness, loads truncate; globals hold the extended bytes. Adding 1 to
// each i4 wraps 7 to -8; ui2 3 + 1 wraps to 0 (two's complement, numpy's
// int8/uint8 arithmetic masked to 4 and 2 bits).
// IR: @g = {{.*}}constant [4 x i8] [i8 -8, i8 7, i8 -1, i8 3]
// IR: zext i2 -1 to i8
// IR: load i8, ptr
// IR-NEXT: trunc i8 %{{.*}} to i4
// IR: sext i4 %{{.*}} to i8
// IR-NEXT: store i8
// CHECK: -8, -7
// CHECK-NEXT: 7, -8
// CHECK-NEXT: -1, 0
// CHECK-NEXT: 3, 4
// CHECK-NEXT: 3, 0
// CHECK-NEXT: 2, 3
memref.global "private" constant @g : memref<4xi4> = dense<[-8, 7, -1, 3]>
func.func private @printI64(i64)
func.func private @printComma()
func.func private @printNewline()

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1 : i4
  %g = memref.get_global @g : memref<4xi4>
  %inc = memref.alloc() : memref<4xi4>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %g[%i] : memref<4xi4>
    %w = arith.addi %v, %one : i4
    memref.store %w, %inc[%i] : memref<4xi4>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %g[%i] : memref<4xi4>
    %w = memref.load %inc[%i] : memref<4xi4>
    %a = arith.extsi %v : i4 to i64
    %b = arith.extsi %w : i4 to i64
    func.call @printI64(%a) : (i64) -> ()
    func.call @printComma() : () -> ()
    func.call @printI64(%b) : (i64) -> ()
    func.call @printNewline() : () -> ()
  }
  %u = memref.alloc() : memref<2xui2>
  %three = arith.constant 3 : ui2
  %two = arith.constant 2 : ui2
  %uone = arith.constant 1 : ui2
  memref.store %three, %u[%c0] : memref<2xui2>
  memref.store %two, %u[%c1] : memref<2xui2>
  scf.for %i = %c0 to %c2 step %c1 {
    %v = memref.load %u[%i] : memref<2xui2>
    %w = arith.addi %v, %uone : ui2
    %a = arith.extui %v : ui2 to i64
    %b = arith.extui %w : ui2 to i64
    func.call @printI64(%a) : (i64) -> ()
    func.call @printComma() : () -> ()
    func.call @printI64(%b) : (i64) -> ()
    func.call @printNewline() : () -> ()
  }
  memref.dealloc %inc : memref<4xi4>
  memref.dealloc %u : memref<2xui2>
  return
}
