// RUN: onnxc opt %s --emit llvm | run-llvm | filecheck
// RUN: onnxc opt %s -p canonicalize,cse --emit llvm | run-llvm | filecheck
// RUN: onnxc opt %s -p canonicalize,cse | filecheck --check-prefix=FOLDED

// Every i8 result the folder computes (17 ops over 5 values, generated;
// undefined cases left out) printed by the program run as it is (LLVM
// evaluates it) and after canonicalize,cse (our folder): the same lines.
// FOLDED-LABEL: func.func @main
// FOLDED-NOT:  arith.{{(add|sub|mul|div|rem|ceil|floor|sh|max|min|and|xor)}}
// CHECK: 0
// CHECK-NEXT: 121
// CHECK-NEXT: 127
// CHECK-NEXT: -125
// CHECK-NEXT: -1
// CHECK-NEXT: 121
// CHECK-NEXT: -14
// CHECK-NEXT: -8
// CHECK-NEXT: -4
// CHECK-NEXT: 120
// CHECK-NEXT: 127
// CHECK-NEXT: -8
// CHECK-NEXT: -2
// CHECK-NEXT: 2
// CHECK-NEXT: 126
// CHECK-NEXT: -125
// CHECK-NEXT: -4
// CHECK-NEXT: 2
// CHECK-NEXT: 6
// CHECK-NEXT: -126
// CHECK-NEXT: -1
// CHECK-NEXT: 120
// CHECK-NEXT: 126
// CHECK-NEXT: -126
// CHECK-NEXT: -2
// CHECK-NEXT: 0
// CHECK-NEXT: -121
// CHECK-NEXT: -127
// CHECK-NEXT: 125
// CHECK-NEXT: 1
// CHECK-NEXT: 121
// CHECK-NEXT: 0
// CHECK-NEXT: -6
// CHECK-NEXT: -10
// CHECK-NEXT: 122
// CHECK-NEXT: 127
// CHECK-NEXT: 6
// CHECK-NEXT: 0
// CHECK-NEXT: -4
// CHECK-NEXT: -128
// CHECK-NEXT: -125
// CHECK-NEXT: 10
// CHECK-NEXT: 4
// CHECK-NEXT: 0
// CHECK-NEXT: -124
// CHECK-NEXT: -1
// CHECK-NEXT: -122
// CHECK-NEXT: -128
// CHECK-NEXT: 124
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: -128
// CHECK-NEXT: -128
// CHECK-NEXT: -128
// CHECK-NEXT: -128
// CHECK-NEXT: -128
// CHECK-NEXT: 49
// CHECK-NEXT: 7
// CHECK-NEXT: -21
// CHECK-NEXT: -121
// CHECK-NEXT: -128
// CHECK-NEXT: 7
// CHECK-NEXT: 1
// CHECK-NEXT: -3
// CHECK-NEXT: -127
// CHECK-NEXT: -128
// CHECK-NEXT: -21
// CHECK-NEXT: -3
// CHECK-NEXT: 9
// CHECK-NEXT: 125
// CHECK-NEXT: -128
// CHECK-NEXT: -121
// CHECK-NEXT: -127
// CHECK-NEXT: 125
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 18
// CHECK-NEXT: -42
// CHECK-NEXT: -1
// CHECK-NEXT: 0
// CHECK-NEXT: 1
// CHECK-NEXT: 7
// CHECK-NEXT: -2
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 1
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: -3
// CHECK-NEXT: 1
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: -18
// CHECK-NEXT: -127
// CHECK-NEXT: 42
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 42
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 0
// CHECK-NEXT: 83
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 85
// CHECK-NEXT: 2
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 1
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 42
// CHECK-NEXT: 1
// CHECK-NEXT: 0
// CHECK-NEXT: -2
// CHECK-NEXT: -2
// CHECK-NEXT: -1
// CHECK-NEXT: -7
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: -1
// CHECK-NEXT: -7
// CHECK-NEXT: -1
// CHECK-NEXT: -1
// CHECK-NEXT: 0
// CHECK-NEXT: -1
// CHECK-NEXT: -1
// CHECK-NEXT: 3
// CHECK-NEXT: 3
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 3
// CHECK-NEXT: 127
// CHECK-NEXT: 1
// CHECK-NEXT: 0
// CHECK-NEXT: 1
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: -128
// CHECK-NEXT: -128
// CHECK-NEXT: 2
// CHECK-NEXT: 1
// CHECK-NEXT: 121
// CHECK-NEXT: 0
// CHECK-NEXT: -7
// CHECK-NEXT: 0
// CHECK-NEXT: 122
// CHECK-NEXT: 127
// CHECK-NEXT: 6
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 1
// CHECK-NEXT: 3
// CHECK-NEXT: 3
// CHECK-NEXT: 3
// CHECK-NEXT: 0
// CHECK-NEXT: 3
// CHECK-NEXT: 127
// CHECK-NEXT: 127
// CHECK-NEXT: 127
// CHECK-NEXT: 1
// CHECK-NEXT: 0
// CHECK-NEXT: 1
// CHECK-NEXT: 19
// CHECK-NEXT: -42
// CHECK-NEXT: -1
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 7
// CHECK-NEXT: -2
// CHECK-NEXT: 0
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: -3
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 0
// CHECK-NEXT: -18
// CHECK-NEXT: -127
// CHECK-NEXT: 43
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 43
// CHECK-NEXT: 2
// CHECK-NEXT: 2
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 83
// CHECK-NEXT: 2
// CHECK-NEXT: 2
// CHECK-NEXT: 2
// CHECK-NEXT: 1
// CHECK-NEXT: 85
// CHECK-NEXT: 3
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 43
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 18
// CHECK-NEXT: -43
// CHECK-NEXT: -2
// CHECK-NEXT: 0
// CHECK-NEXT: 1
// CHECK-NEXT: 7
// CHECK-NEXT: -3
// CHECK-NEXT: -1
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 1
// CHECK-NEXT: -1
// CHECK-NEXT: -1
// CHECK-NEXT: -1
// CHECK-NEXT: -1
// CHECK-NEXT: -3
// CHECK-NEXT: 1
// CHECK-NEXT: 0
// CHECK-NEXT: -1
// CHECK-NEXT: -19
// CHECK-NEXT: -127
// CHECK-NEXT: 42
// CHECK-NEXT: 1
// CHECK-NEXT: -16
// CHECK-NEXT: -1
// CHECK-NEXT: -1
// CHECK-NEXT: 0
// CHECK-NEXT: 15
// CHECK-NEXT: 16
// CHECK-NEXT: 31
// CHECK-NEXT: 31
// CHECK-NEXT: 0
// CHECK-NEXT: 15
// CHECK-NEXT: 0
// CHECK-NEXT: -56
// CHECK-NEXT: -8
// CHECK-NEXT: 24
// CHECK-NEXT: -8
// CHECK-NEXT: -128
// CHECK-NEXT: -7
// CHECK-NEXT: -1
// CHECK-NEXT: 3
// CHECK-NEXT: 127
// CHECK-NEXT: -7
// CHECK-NEXT: -7
// CHECK-NEXT: -1
// CHECK-NEXT: 3
// CHECK-NEXT: 127
// CHECK-NEXT: -1
// CHECK-NEXT: -1
// CHECK-NEXT: -1
// CHECK-NEXT: 3
// CHECK-NEXT: 127
// CHECK-NEXT: 3
// CHECK-NEXT: 3
// CHECK-NEXT: 3
// CHECK-NEXT: 3
// CHECK-NEXT: 127
// CHECK-NEXT: 127
// CHECK-NEXT: 127
// CHECK-NEXT: 127
// CHECK-NEXT: 127
// CHECK-NEXT: 127
// CHECK-NEXT: -128
// CHECK-NEXT: -128
// CHECK-NEXT: -128
// CHECK-NEXT: 3
// CHECK-NEXT: 127
// CHECK-NEXT: -128
// CHECK-NEXT: -7
// CHECK-NEXT: -7
// CHECK-NEXT: 3
// CHECK-NEXT: 127
// CHECK-NEXT: -128
// CHECK-NEXT: -7
// CHECK-NEXT: -1
// CHECK-NEXT: 3
// CHECK-NEXT: 127
// CHECK-NEXT: 3
// CHECK-NEXT: 3
// CHECK-NEXT: 3
// CHECK-NEXT: 3
// CHECK-NEXT: 3
// CHECK-NEXT: 127
// CHECK-NEXT: 127
// CHECK-NEXT: 127
// CHECK-NEXT: 3
// CHECK-NEXT: 127
// CHECK-NEXT: -128
// CHECK-NEXT: -128
// CHECK-NEXT: -128
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: -128
// CHECK-NEXT: -7
// CHECK-NEXT: -7
// CHECK-NEXT: 1
// CHECK-NEXT: 121
// CHECK-NEXT: -128
// CHECK-NEXT: -7
// CHECK-NEXT: -1
// CHECK-NEXT: 3
// CHECK-NEXT: 127
// CHECK-NEXT: 0
// CHECK-NEXT: 1
// CHECK-NEXT: 3
// CHECK-NEXT: 3
// CHECK-NEXT: 3
// CHECK-NEXT: 0
// CHECK-NEXT: 121
// CHECK-NEXT: 127
// CHECK-NEXT: 3
// CHECK-NEXT: 127
// CHECK-NEXT: 0
// CHECK-NEXT: 121
// CHECK-NEXT: 127
// CHECK-NEXT: -125
// CHECK-NEXT: -1
// CHECK-NEXT: 121
// CHECK-NEXT: 0
// CHECK-NEXT: 6
// CHECK-NEXT: -6
// CHECK-NEXT: -122
// CHECK-NEXT: 127
// CHECK-NEXT: 6
// CHECK-NEXT: 0
// CHECK-NEXT: -4
// CHECK-NEXT: -128
// CHECK-NEXT: -125
// CHECK-NEXT: -6
// CHECK-NEXT: -4
// CHECK-NEXT: 0
// CHECK-NEXT: 124
// CHECK-NEXT: -1
// CHECK-NEXT: -122
// CHECK-NEXT: -128
// CHECK-NEXT: 124
// CHECK-NEXT: 0

func.func private @printI64(i64)
func.func private @printNewline()

func.func @p(%x: i8) {
  %e = arith.extsi %x : i8 to i64
  func.call @printI64(%e) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}

func.func @main() {
  %k72 = arith.constant -128 : i8
  %k193 = arith.constant -7 : i8
  %k199 = arith.constant -1 : i8
  %k203 = arith.constant 3 : i8
  %k327 = arith.constant 127 : i8
  %r1 = arith.addi %k72, %k72 : i8
  func.call @p(%r1) : (i8) -> ()
  %r2 = arith.addi %k72, %k193 : i8
  func.call @p(%r2) : (i8) -> ()
  %r3 = arith.addi %k72, %k199 : i8
  func.call @p(%r3) : (i8) -> ()
  %r4 = arith.addi %k72, %k203 : i8
  func.call @p(%r4) : (i8) -> ()
  %r5 = arith.addi %k72, %k327 : i8
  func.call @p(%r5) : (i8) -> ()
  %r6 = arith.addi %k193, %k72 : i8
  func.call @p(%r6) : (i8) -> ()
  %r7 = arith.addi %k193, %k193 : i8
  func.call @p(%r7) : (i8) -> ()
  %r8 = arith.addi %k193, %k199 : i8
  func.call @p(%r8) : (i8) -> ()
  %r9 = arith.addi %k193, %k203 : i8
  func.call @p(%r9) : (i8) -> ()
  %r10 = arith.addi %k193, %k327 : i8
  func.call @p(%r10) : (i8) -> ()
  %r11 = arith.addi %k199, %k72 : i8
  func.call @p(%r11) : (i8) -> ()
  %r12 = arith.addi %k199, %k193 : i8
  func.call @p(%r12) : (i8) -> ()
  %r13 = arith.addi %k199, %k199 : i8
  func.call @p(%r13) : (i8) -> ()
  %r14 = arith.addi %k199, %k203 : i8
  func.call @p(%r14) : (i8) -> ()
  %r15 = arith.addi %k199, %k327 : i8
  func.call @p(%r15) : (i8) -> ()
  %r16 = arith.addi %k203, %k72 : i8
  func.call @p(%r16) : (i8) -> ()
  %r17 = arith.addi %k203, %k193 : i8
  func.call @p(%r17) : (i8) -> ()
  %r18 = arith.addi %k203, %k199 : i8
  func.call @p(%r18) : (i8) -> ()
  %r19 = arith.addi %k203, %k203 : i8
  func.call @p(%r19) : (i8) -> ()
  %r20 = arith.addi %k203, %k327 : i8
  func.call @p(%r20) : (i8) -> ()
  %r21 = arith.addi %k327, %k72 : i8
  func.call @p(%r21) : (i8) -> ()
  %r22 = arith.addi %k327, %k193 : i8
  func.call @p(%r22) : (i8) -> ()
  %r23 = arith.addi %k327, %k199 : i8
  func.call @p(%r23) : (i8) -> ()
  %r24 = arith.addi %k327, %k203 : i8
  func.call @p(%r24) : (i8) -> ()
  %r25 = arith.addi %k327, %k327 : i8
  func.call @p(%r25) : (i8) -> ()
  %r26 = arith.subi %k72, %k72 : i8
  func.call @p(%r26) : (i8) -> ()
  %r27 = arith.subi %k72, %k193 : i8
  func.call @p(%r27) : (i8) -> ()
  %r28 = arith.subi %k72, %k199 : i8
  func.call @p(%r28) : (i8) -> ()
  %r29 = arith.subi %k72, %k203 : i8
  func.call @p(%r29) : (i8) -> ()
  %r30 = arith.subi %k72, %k327 : i8
  func.call @p(%r30) : (i8) -> ()
  %r31 = arith.subi %k193, %k72 : i8
  func.call @p(%r31) : (i8) -> ()
  %r32 = arith.subi %k193, %k193 : i8
  func.call @p(%r32) : (i8) -> ()
  %r33 = arith.subi %k193, %k199 : i8
  func.call @p(%r33) : (i8) -> ()
  %r34 = arith.subi %k193, %k203 : i8
  func.call @p(%r34) : (i8) -> ()
  %r35 = arith.subi %k193, %k327 : i8
  func.call @p(%r35) : (i8) -> ()
  %r36 = arith.subi %k199, %k72 : i8
  func.call @p(%r36) : (i8) -> ()
  %r37 = arith.subi %k199, %k193 : i8
  func.call @p(%r37) : (i8) -> ()
  %r38 = arith.subi %k199, %k199 : i8
  func.call @p(%r38) : (i8) -> ()
  %r39 = arith.subi %k199, %k203 : i8
  func.call @p(%r39) : (i8) -> ()
  %r40 = arith.subi %k199, %k327 : i8
  func.call @p(%r40) : (i8) -> ()
  %r41 = arith.subi %k203, %k72 : i8
  func.call @p(%r41) : (i8) -> ()
  %r42 = arith.subi %k203, %k193 : i8
  func.call @p(%r42) : (i8) -> ()
  %r43 = arith.subi %k203, %k199 : i8
  func.call @p(%r43) : (i8) -> ()
  %r44 = arith.subi %k203, %k203 : i8
  func.call @p(%r44) : (i8) -> ()
  %r45 = arith.subi %k203, %k327 : i8
  func.call @p(%r45) : (i8) -> ()
  %r46 = arith.subi %k327, %k72 : i8
  func.call @p(%r46) : (i8) -> ()
  %r47 = arith.subi %k327, %k193 : i8
  func.call @p(%r47) : (i8) -> ()
  %r48 = arith.subi %k327, %k199 : i8
  func.call @p(%r48) : (i8) -> ()
  %r49 = arith.subi %k327, %k203 : i8
  func.call @p(%r49) : (i8) -> ()
  %r50 = arith.subi %k327, %k327 : i8
  func.call @p(%r50) : (i8) -> ()
  %r51 = arith.muli %k72, %k72 : i8
  func.call @p(%r51) : (i8) -> ()
  %r52 = arith.muli %k72, %k193 : i8
  func.call @p(%r52) : (i8) -> ()
  %r53 = arith.muli %k72, %k199 : i8
  func.call @p(%r53) : (i8) -> ()
  %r54 = arith.muli %k72, %k203 : i8
  func.call @p(%r54) : (i8) -> ()
  %r55 = arith.muli %k72, %k327 : i8
  func.call @p(%r55) : (i8) -> ()
  %r56 = arith.muli %k193, %k72 : i8
  func.call @p(%r56) : (i8) -> ()
  %r57 = arith.muli %k193, %k193 : i8
  func.call @p(%r57) : (i8) -> ()
  %r58 = arith.muli %k193, %k199 : i8
  func.call @p(%r58) : (i8) -> ()
  %r59 = arith.muli %k193, %k203 : i8
  func.call @p(%r59) : (i8) -> ()
  %r60 = arith.muli %k193, %k327 : i8
  func.call @p(%r60) : (i8) -> ()
  %r61 = arith.muli %k199, %k72 : i8
  func.call @p(%r61) : (i8) -> ()
  %r62 = arith.muli %k199, %k193 : i8
  func.call @p(%r62) : (i8) -> ()
  %r63 = arith.muli %k199, %k199 : i8
  func.call @p(%r63) : (i8) -> ()
  %r64 = arith.muli %k199, %k203 : i8
  func.call @p(%r64) : (i8) -> ()
  %r65 = arith.muli %k199, %k327 : i8
  func.call @p(%r65) : (i8) -> ()
  %r66 = arith.muli %k203, %k72 : i8
  func.call @p(%r66) : (i8) -> ()
  %r67 = arith.muli %k203, %k193 : i8
  func.call @p(%r67) : (i8) -> ()
  %r68 = arith.muli %k203, %k199 : i8
  func.call @p(%r68) : (i8) -> ()
  %r69 = arith.muli %k203, %k203 : i8
  func.call @p(%r69) : (i8) -> ()
  %r70 = arith.muli %k203, %k327 : i8
  func.call @p(%r70) : (i8) -> ()
  %r71 = arith.muli %k327, %k72 : i8
  func.call @p(%r71) : (i8) -> ()
  %r72 = arith.muli %k327, %k193 : i8
  func.call @p(%r72) : (i8) -> ()
  %r73 = arith.muli %k327, %k199 : i8
  func.call @p(%r73) : (i8) -> ()
  %r74 = arith.muli %k327, %k203 : i8
  func.call @p(%r74) : (i8) -> ()
  %r75 = arith.muli %k327, %k327 : i8
  func.call @p(%r75) : (i8) -> ()
  %r76 = arith.divsi %k72, %k72 : i8
  func.call @p(%r76) : (i8) -> ()
  %r77 = arith.divsi %k72, %k193 : i8
  func.call @p(%r77) : (i8) -> ()
  %r78 = arith.divsi %k72, %k203 : i8
  func.call @p(%r78) : (i8) -> ()
  %r79 = arith.divsi %k72, %k327 : i8
  func.call @p(%r79) : (i8) -> ()
  %r80 = arith.divsi %k193, %k72 : i8
  func.call @p(%r80) : (i8) -> ()
  %r81 = arith.divsi %k193, %k193 : i8
  func.call @p(%r81) : (i8) -> ()
  %r82 = arith.divsi %k193, %k199 : i8
  func.call @p(%r82) : (i8) -> ()
  %r83 = arith.divsi %k193, %k203 : i8
  func.call @p(%r83) : (i8) -> ()
  %r84 = arith.divsi %k193, %k327 : i8
  func.call @p(%r84) : (i8) -> ()
  %r85 = arith.divsi %k199, %k72 : i8
  func.call @p(%r85) : (i8) -> ()
  %r86 = arith.divsi %k199, %k193 : i8
  func.call @p(%r86) : (i8) -> ()
  %r87 = arith.divsi %k199, %k199 : i8
  func.call @p(%r87) : (i8) -> ()
  %r88 = arith.divsi %k199, %k203 : i8
  func.call @p(%r88) : (i8) -> ()
  %r89 = arith.divsi %k199, %k327 : i8
  func.call @p(%r89) : (i8) -> ()
  %r90 = arith.divsi %k203, %k72 : i8
  func.call @p(%r90) : (i8) -> ()
  %r91 = arith.divsi %k203, %k193 : i8
  func.call @p(%r91) : (i8) -> ()
  %r92 = arith.divsi %k203, %k199 : i8
  func.call @p(%r92) : (i8) -> ()
  %r93 = arith.divsi %k203, %k203 : i8
  func.call @p(%r93) : (i8) -> ()
  %r94 = arith.divsi %k203, %k327 : i8
  func.call @p(%r94) : (i8) -> ()
  %r95 = arith.divsi %k327, %k72 : i8
  func.call @p(%r95) : (i8) -> ()
  %r96 = arith.divsi %k327, %k193 : i8
  func.call @p(%r96) : (i8) -> ()
  %r97 = arith.divsi %k327, %k199 : i8
  func.call @p(%r97) : (i8) -> ()
  %r98 = arith.divsi %k327, %k203 : i8
  func.call @p(%r98) : (i8) -> ()
  %r99 = arith.divsi %k327, %k327 : i8
  func.call @p(%r99) : (i8) -> ()
  %r100 = arith.divui %k72, %k72 : i8
  func.call @p(%r100) : (i8) -> ()
  %r101 = arith.divui %k72, %k193 : i8
  func.call @p(%r101) : (i8) -> ()
  %r102 = arith.divui %k72, %k199 : i8
  func.call @p(%r102) : (i8) -> ()
  %r103 = arith.divui %k72, %k203 : i8
  func.call @p(%r103) : (i8) -> ()
  %r104 = arith.divui %k72, %k327 : i8
  func.call @p(%r104) : (i8) -> ()
  %r105 = arith.divui %k193, %k72 : i8
  func.call @p(%r105) : (i8) -> ()
  %r106 = arith.divui %k193, %k193 : i8
  func.call @p(%r106) : (i8) -> ()
  %r107 = arith.divui %k193, %k199 : i8
  func.call @p(%r107) : (i8) -> ()
  %r108 = arith.divui %k193, %k203 : i8
  func.call @p(%r108) : (i8) -> ()
  %r109 = arith.divui %k193, %k327 : i8
  func.call @p(%r109) : (i8) -> ()
  %r110 = arith.divui %k199, %k72 : i8
  func.call @p(%r110) : (i8) -> ()
  %r111 = arith.divui %k199, %k193 : i8
  func.call @p(%r111) : (i8) -> ()
  %r112 = arith.divui %k199, %k199 : i8
  func.call @p(%r112) : (i8) -> ()
  %r113 = arith.divui %k199, %k203 : i8
  func.call @p(%r113) : (i8) -> ()
  %r114 = arith.divui %k199, %k327 : i8
  func.call @p(%r114) : (i8) -> ()
  %r115 = arith.divui %k203, %k72 : i8
  func.call @p(%r115) : (i8) -> ()
  %r116 = arith.divui %k203, %k193 : i8
  func.call @p(%r116) : (i8) -> ()
  %r117 = arith.divui %k203, %k199 : i8
  func.call @p(%r117) : (i8) -> ()
  %r118 = arith.divui %k203, %k203 : i8
  func.call @p(%r118) : (i8) -> ()
  %r119 = arith.divui %k203, %k327 : i8
  func.call @p(%r119) : (i8) -> ()
  %r120 = arith.divui %k327, %k72 : i8
  func.call @p(%r120) : (i8) -> ()
  %r121 = arith.divui %k327, %k193 : i8
  func.call @p(%r121) : (i8) -> ()
  %r122 = arith.divui %k327, %k199 : i8
  func.call @p(%r122) : (i8) -> ()
  %r123 = arith.divui %k327, %k203 : i8
  func.call @p(%r123) : (i8) -> ()
  %r124 = arith.divui %k327, %k327 : i8
  func.call @p(%r124) : (i8) -> ()
  %r125 = arith.remsi %k72, %k72 : i8
  func.call @p(%r125) : (i8) -> ()
  %r126 = arith.remsi %k72, %k193 : i8
  func.call @p(%r126) : (i8) -> ()
  %r127 = arith.remsi %k72, %k203 : i8
  func.call @p(%r127) : (i8) -> ()
  %r128 = arith.remsi %k72, %k327 : i8
  func.call @p(%r128) : (i8) -> ()
  %r129 = arith.remsi %k193, %k72 : i8
  func.call @p(%r129) : (i8) -> ()
  %r130 = arith.remsi %k193, %k193 : i8
  func.call @p(%r130) : (i8) -> ()
  %r131 = arith.remsi %k193, %k199 : i8
  func.call @p(%r131) : (i8) -> ()
  %r132 = arith.remsi %k193, %k203 : i8
  func.call @p(%r132) : (i8) -> ()
  %r133 = arith.remsi %k193, %k327 : i8
  func.call @p(%r133) : (i8) -> ()
  %r134 = arith.remsi %k199, %k72 : i8
  func.call @p(%r134) : (i8) -> ()
  %r135 = arith.remsi %k199, %k193 : i8
  func.call @p(%r135) : (i8) -> ()
  %r136 = arith.remsi %k199, %k199 : i8
  func.call @p(%r136) : (i8) -> ()
  %r137 = arith.remsi %k199, %k203 : i8
  func.call @p(%r137) : (i8) -> ()
  %r138 = arith.remsi %k199, %k327 : i8
  func.call @p(%r138) : (i8) -> ()
  %r139 = arith.remsi %k203, %k72 : i8
  func.call @p(%r139) : (i8) -> ()
  %r140 = arith.remsi %k203, %k193 : i8
  func.call @p(%r140) : (i8) -> ()
  %r141 = arith.remsi %k203, %k199 : i8
  func.call @p(%r141) : (i8) -> ()
  %r142 = arith.remsi %k203, %k203 : i8
  func.call @p(%r142) : (i8) -> ()
  %r143 = arith.remsi %k203, %k327 : i8
  func.call @p(%r143) : (i8) -> ()
  %r144 = arith.remsi %k327, %k72 : i8
  func.call @p(%r144) : (i8) -> ()
  %r145 = arith.remsi %k327, %k193 : i8
  func.call @p(%r145) : (i8) -> ()
  %r146 = arith.remsi %k327, %k199 : i8
  func.call @p(%r146) : (i8) -> ()
  %r147 = arith.remsi %k327, %k203 : i8
  func.call @p(%r147) : (i8) -> ()
  %r148 = arith.remsi %k327, %k327 : i8
  func.call @p(%r148) : (i8) -> ()
  %r149 = arith.remui %k72, %k72 : i8
  func.call @p(%r149) : (i8) -> ()
  %r150 = arith.remui %k72, %k193 : i8
  func.call @p(%r150) : (i8) -> ()
  %r151 = arith.remui %k72, %k199 : i8
  func.call @p(%r151) : (i8) -> ()
  %r152 = arith.remui %k72, %k203 : i8
  func.call @p(%r152) : (i8) -> ()
  %r153 = arith.remui %k72, %k327 : i8
  func.call @p(%r153) : (i8) -> ()
  %r154 = arith.remui %k193, %k72 : i8
  func.call @p(%r154) : (i8) -> ()
  %r155 = arith.remui %k193, %k193 : i8
  func.call @p(%r155) : (i8) -> ()
  %r156 = arith.remui %k193, %k199 : i8
  func.call @p(%r156) : (i8) -> ()
  %r157 = arith.remui %k193, %k203 : i8
  func.call @p(%r157) : (i8) -> ()
  %r158 = arith.remui %k193, %k327 : i8
  func.call @p(%r158) : (i8) -> ()
  %r159 = arith.remui %k199, %k72 : i8
  func.call @p(%r159) : (i8) -> ()
  %r160 = arith.remui %k199, %k193 : i8
  func.call @p(%r160) : (i8) -> ()
  %r161 = arith.remui %k199, %k199 : i8
  func.call @p(%r161) : (i8) -> ()
  %r162 = arith.remui %k199, %k203 : i8
  func.call @p(%r162) : (i8) -> ()
  %r163 = arith.remui %k199, %k327 : i8
  func.call @p(%r163) : (i8) -> ()
  %r164 = arith.remui %k203, %k72 : i8
  func.call @p(%r164) : (i8) -> ()
  %r165 = arith.remui %k203, %k193 : i8
  func.call @p(%r165) : (i8) -> ()
  %r166 = arith.remui %k203, %k199 : i8
  func.call @p(%r166) : (i8) -> ()
  %r167 = arith.remui %k203, %k203 : i8
  func.call @p(%r167) : (i8) -> ()
  %r168 = arith.remui %k203, %k327 : i8
  func.call @p(%r168) : (i8) -> ()
  %r169 = arith.remui %k327, %k72 : i8
  func.call @p(%r169) : (i8) -> ()
  %r170 = arith.remui %k327, %k193 : i8
  func.call @p(%r170) : (i8) -> ()
  %r171 = arith.remui %k327, %k199 : i8
  func.call @p(%r171) : (i8) -> ()
  %r172 = arith.remui %k327, %k203 : i8
  func.call @p(%r172) : (i8) -> ()
  %r173 = arith.remui %k327, %k327 : i8
  func.call @p(%r173) : (i8) -> ()
  %r174 = arith.ceildivsi %k72, %k72 : i8
  func.call @p(%r174) : (i8) -> ()
  %r175 = arith.ceildivsi %k72, %k193 : i8
  func.call @p(%r175) : (i8) -> ()
  %r176 = arith.ceildivsi %k72, %k203 : i8
  func.call @p(%r176) : (i8) -> ()
  %r177 = arith.ceildivsi %k72, %k327 : i8
  func.call @p(%r177) : (i8) -> ()
  %r178 = arith.ceildivsi %k193, %k72 : i8
  func.call @p(%r178) : (i8) -> ()
  %r179 = arith.ceildivsi %k193, %k193 : i8
  func.call @p(%r179) : (i8) -> ()
  %r180 = arith.ceildivsi %k193, %k199 : i8
  func.call @p(%r180) : (i8) -> ()
  %r181 = arith.ceildivsi %k193, %k203 : i8
  func.call @p(%r181) : (i8) -> ()
  %r182 = arith.ceildivsi %k193, %k327 : i8
  func.call @p(%r182) : (i8) -> ()
  %r183 = arith.ceildivsi %k199, %k72 : i8
  func.call @p(%r183) : (i8) -> ()
  %r184 = arith.ceildivsi %k199, %k193 : i8
  func.call @p(%r184) : (i8) -> ()
  %r185 = arith.ceildivsi %k199, %k199 : i8
  func.call @p(%r185) : (i8) -> ()
  %r186 = arith.ceildivsi %k199, %k203 : i8
  func.call @p(%r186) : (i8) -> ()
  %r187 = arith.ceildivsi %k199, %k327 : i8
  func.call @p(%r187) : (i8) -> ()
  %r188 = arith.ceildivsi %k203, %k72 : i8
  func.call @p(%r188) : (i8) -> ()
  %r189 = arith.ceildivsi %k203, %k193 : i8
  func.call @p(%r189) : (i8) -> ()
  %r190 = arith.ceildivsi %k203, %k199 : i8
  func.call @p(%r190) : (i8) -> ()
  %r191 = arith.ceildivsi %k203, %k203 : i8
  func.call @p(%r191) : (i8) -> ()
  %r192 = arith.ceildivsi %k203, %k327 : i8
  func.call @p(%r192) : (i8) -> ()
  %r193 = arith.ceildivsi %k327, %k72 : i8
  func.call @p(%r193) : (i8) -> ()
  %r194 = arith.ceildivsi %k327, %k193 : i8
  func.call @p(%r194) : (i8) -> ()
  %r195 = arith.ceildivsi %k327, %k199 : i8
  func.call @p(%r195) : (i8) -> ()
  %r196 = arith.ceildivsi %k327, %k203 : i8
  func.call @p(%r196) : (i8) -> ()
  %r197 = arith.ceildivsi %k327, %k327 : i8
  func.call @p(%r197) : (i8) -> ()
  %r198 = arith.ceildivui %k72, %k72 : i8
  func.call @p(%r198) : (i8) -> ()
  %r199 = arith.ceildivui %k72, %k193 : i8
  func.call @p(%r199) : (i8) -> ()
  %r200 = arith.ceildivui %k72, %k199 : i8
  func.call @p(%r200) : (i8) -> ()
  %r201 = arith.ceildivui %k72, %k203 : i8
  func.call @p(%r201) : (i8) -> ()
  %r202 = arith.ceildivui %k72, %k327 : i8
  func.call @p(%r202) : (i8) -> ()
  %r203 = arith.ceildivui %k193, %k72 : i8
  func.call @p(%r203) : (i8) -> ()
  %r204 = arith.ceildivui %k193, %k193 : i8
  func.call @p(%r204) : (i8) -> ()
  %r205 = arith.ceildivui %k193, %k199 : i8
  func.call @p(%r205) : (i8) -> ()
  %r206 = arith.ceildivui %k193, %k203 : i8
  func.call @p(%r206) : (i8) -> ()
  %r207 = arith.ceildivui %k193, %k327 : i8
  func.call @p(%r207) : (i8) -> ()
  %r208 = arith.ceildivui %k199, %k72 : i8
  func.call @p(%r208) : (i8) -> ()
  %r209 = arith.ceildivui %k199, %k193 : i8
  func.call @p(%r209) : (i8) -> ()
  %r210 = arith.ceildivui %k199, %k199 : i8
  func.call @p(%r210) : (i8) -> ()
  %r211 = arith.ceildivui %k199, %k203 : i8
  func.call @p(%r211) : (i8) -> ()
  %r212 = arith.ceildivui %k199, %k327 : i8
  func.call @p(%r212) : (i8) -> ()
  %r213 = arith.ceildivui %k203, %k72 : i8
  func.call @p(%r213) : (i8) -> ()
  %r214 = arith.ceildivui %k203, %k193 : i8
  func.call @p(%r214) : (i8) -> ()
  %r215 = arith.ceildivui %k203, %k199 : i8
  func.call @p(%r215) : (i8) -> ()
  %r216 = arith.ceildivui %k203, %k203 : i8
  func.call @p(%r216) : (i8) -> ()
  %r217 = arith.ceildivui %k203, %k327 : i8
  func.call @p(%r217) : (i8) -> ()
  %r218 = arith.ceildivui %k327, %k72 : i8
  func.call @p(%r218) : (i8) -> ()
  %r219 = arith.ceildivui %k327, %k193 : i8
  func.call @p(%r219) : (i8) -> ()
  %r220 = arith.ceildivui %k327, %k199 : i8
  func.call @p(%r220) : (i8) -> ()
  %r221 = arith.ceildivui %k327, %k203 : i8
  func.call @p(%r221) : (i8) -> ()
  %r222 = arith.ceildivui %k327, %k327 : i8
  func.call @p(%r222) : (i8) -> ()
  %r223 = arith.floordivsi %k72, %k72 : i8
  func.call @p(%r223) : (i8) -> ()
  %r224 = arith.floordivsi %k72, %k193 : i8
  func.call @p(%r224) : (i8) -> ()
  %r225 = arith.floordivsi %k72, %k203 : i8
  func.call @p(%r225) : (i8) -> ()
  %r226 = arith.floordivsi %k72, %k327 : i8
  func.call @p(%r226) : (i8) -> ()
  %r227 = arith.floordivsi %k193, %k72 : i8
  func.call @p(%r227) : (i8) -> ()
  %r228 = arith.floordivsi %k193, %k193 : i8
  func.call @p(%r228) : (i8) -> ()
  %r229 = arith.floordivsi %k193, %k199 : i8
  func.call @p(%r229) : (i8) -> ()
  %r230 = arith.floordivsi %k193, %k203 : i8
  func.call @p(%r230) : (i8) -> ()
  %r231 = arith.floordivsi %k193, %k327 : i8
  func.call @p(%r231) : (i8) -> ()
  %r232 = arith.floordivsi %k199, %k72 : i8
  func.call @p(%r232) : (i8) -> ()
  %r233 = arith.floordivsi %k199, %k193 : i8
  func.call @p(%r233) : (i8) -> ()
  %r234 = arith.floordivsi %k199, %k199 : i8
  func.call @p(%r234) : (i8) -> ()
  %r235 = arith.floordivsi %k199, %k203 : i8
  func.call @p(%r235) : (i8) -> ()
  %r236 = arith.floordivsi %k199, %k327 : i8
  func.call @p(%r236) : (i8) -> ()
  %r237 = arith.floordivsi %k203, %k72 : i8
  func.call @p(%r237) : (i8) -> ()
  %r238 = arith.floordivsi %k203, %k193 : i8
  func.call @p(%r238) : (i8) -> ()
  %r239 = arith.floordivsi %k203, %k199 : i8
  func.call @p(%r239) : (i8) -> ()
  %r240 = arith.floordivsi %k203, %k203 : i8
  func.call @p(%r240) : (i8) -> ()
  %r241 = arith.floordivsi %k203, %k327 : i8
  func.call @p(%r241) : (i8) -> ()
  %r242 = arith.floordivsi %k327, %k72 : i8
  func.call @p(%r242) : (i8) -> ()
  %r243 = arith.floordivsi %k327, %k193 : i8
  func.call @p(%r243) : (i8) -> ()
  %r244 = arith.floordivsi %k327, %k199 : i8
  func.call @p(%r244) : (i8) -> ()
  %r245 = arith.floordivsi %k327, %k203 : i8
  func.call @p(%r245) : (i8) -> ()
  %r246 = arith.floordivsi %k327, %k327 : i8
  func.call @p(%r246) : (i8) -> ()
  %r247 = arith.shrsi %k72, %k203 : i8
  func.call @p(%r247) : (i8) -> ()
  %r248 = arith.shrsi %k193, %k203 : i8
  func.call @p(%r248) : (i8) -> ()
  %r249 = arith.shrsi %k199, %k203 : i8
  func.call @p(%r249) : (i8) -> ()
  %r250 = arith.shrsi %k203, %k203 : i8
  func.call @p(%r250) : (i8) -> ()
  %r251 = arith.shrsi %k327, %k203 : i8
  func.call @p(%r251) : (i8) -> ()
  %r252 = arith.shrui %k72, %k203 : i8
  func.call @p(%r252) : (i8) -> ()
  %r253 = arith.shrui %k193, %k203 : i8
  func.call @p(%r253) : (i8) -> ()
  %r254 = arith.shrui %k199, %k203 : i8
  func.call @p(%r254) : (i8) -> ()
  %r255 = arith.shrui %k203, %k203 : i8
  func.call @p(%r255) : (i8) -> ()
  %r256 = arith.shrui %k327, %k203 : i8
  func.call @p(%r256) : (i8) -> ()
  %r257 = arith.shli %k72, %k203 : i8
  func.call @p(%r257) : (i8) -> ()
  %r258 = arith.shli %k193, %k203 : i8
  func.call @p(%r258) : (i8) -> ()
  %r259 = arith.shli %k199, %k203 : i8
  func.call @p(%r259) : (i8) -> ()
  %r260 = arith.shli %k203, %k203 : i8
  func.call @p(%r260) : (i8) -> ()
  %r261 = arith.shli %k327, %k203 : i8
  func.call @p(%r261) : (i8) -> ()
  %r262 = arith.maxsi %k72, %k72 : i8
  func.call @p(%r262) : (i8) -> ()
  %r263 = arith.maxsi %k72, %k193 : i8
  func.call @p(%r263) : (i8) -> ()
  %r264 = arith.maxsi %k72, %k199 : i8
  func.call @p(%r264) : (i8) -> ()
  %r265 = arith.maxsi %k72, %k203 : i8
  func.call @p(%r265) : (i8) -> ()
  %r266 = arith.maxsi %k72, %k327 : i8
  func.call @p(%r266) : (i8) -> ()
  %r267 = arith.maxsi %k193, %k72 : i8
  func.call @p(%r267) : (i8) -> ()
  %r268 = arith.maxsi %k193, %k193 : i8
  func.call @p(%r268) : (i8) -> ()
  %r269 = arith.maxsi %k193, %k199 : i8
  func.call @p(%r269) : (i8) -> ()
  %r270 = arith.maxsi %k193, %k203 : i8
  func.call @p(%r270) : (i8) -> ()
  %r271 = arith.maxsi %k193, %k327 : i8
  func.call @p(%r271) : (i8) -> ()
  %r272 = arith.maxsi %k199, %k72 : i8
  func.call @p(%r272) : (i8) -> ()
  %r273 = arith.maxsi %k199, %k193 : i8
  func.call @p(%r273) : (i8) -> ()
  %r274 = arith.maxsi %k199, %k199 : i8
  func.call @p(%r274) : (i8) -> ()
  %r275 = arith.maxsi %k199, %k203 : i8
  func.call @p(%r275) : (i8) -> ()
  %r276 = arith.maxsi %k199, %k327 : i8
  func.call @p(%r276) : (i8) -> ()
  %r277 = arith.maxsi %k203, %k72 : i8
  func.call @p(%r277) : (i8) -> ()
  %r278 = arith.maxsi %k203, %k193 : i8
  func.call @p(%r278) : (i8) -> ()
  %r279 = arith.maxsi %k203, %k199 : i8
  func.call @p(%r279) : (i8) -> ()
  %r280 = arith.maxsi %k203, %k203 : i8
  func.call @p(%r280) : (i8) -> ()
  %r281 = arith.maxsi %k203, %k327 : i8
  func.call @p(%r281) : (i8) -> ()
  %r282 = arith.maxsi %k327, %k72 : i8
  func.call @p(%r282) : (i8) -> ()
  %r283 = arith.maxsi %k327, %k193 : i8
  func.call @p(%r283) : (i8) -> ()
  %r284 = arith.maxsi %k327, %k199 : i8
  func.call @p(%r284) : (i8) -> ()
  %r285 = arith.maxsi %k327, %k203 : i8
  func.call @p(%r285) : (i8) -> ()
  %r286 = arith.maxsi %k327, %k327 : i8
  func.call @p(%r286) : (i8) -> ()
  %r287 = arith.minui %k72, %k72 : i8
  func.call @p(%r287) : (i8) -> ()
  %r288 = arith.minui %k72, %k193 : i8
  func.call @p(%r288) : (i8) -> ()
  %r289 = arith.minui %k72, %k199 : i8
  func.call @p(%r289) : (i8) -> ()
  %r290 = arith.minui %k72, %k203 : i8
  func.call @p(%r290) : (i8) -> ()
  %r291 = arith.minui %k72, %k327 : i8
  func.call @p(%r291) : (i8) -> ()
  %r292 = arith.minui %k193, %k72 : i8
  func.call @p(%r292) : (i8) -> ()
  %r293 = arith.minui %k193, %k193 : i8
  func.call @p(%r293) : (i8) -> ()
  %r294 = arith.minui %k193, %k199 : i8
  func.call @p(%r294) : (i8) -> ()
  %r295 = arith.minui %k193, %k203 : i8
  func.call @p(%r295) : (i8) -> ()
  %r296 = arith.minui %k193, %k327 : i8
  func.call @p(%r296) : (i8) -> ()
  %r297 = arith.minui %k199, %k72 : i8
  func.call @p(%r297) : (i8) -> ()
  %r298 = arith.minui %k199, %k193 : i8
  func.call @p(%r298) : (i8) -> ()
  %r299 = arith.minui %k199, %k199 : i8
  func.call @p(%r299) : (i8) -> ()
  %r300 = arith.minui %k199, %k203 : i8
  func.call @p(%r300) : (i8) -> ()
  %r301 = arith.minui %k199, %k327 : i8
  func.call @p(%r301) : (i8) -> ()
  %r302 = arith.minui %k203, %k72 : i8
  func.call @p(%r302) : (i8) -> ()
  %r303 = arith.minui %k203, %k193 : i8
  func.call @p(%r303) : (i8) -> ()
  %r304 = arith.minui %k203, %k199 : i8
  func.call @p(%r304) : (i8) -> ()
  %r305 = arith.minui %k203, %k203 : i8
  func.call @p(%r305) : (i8) -> ()
  %r306 = arith.minui %k203, %k327 : i8
  func.call @p(%r306) : (i8) -> ()
  %r307 = arith.minui %k327, %k72 : i8
  func.call @p(%r307) : (i8) -> ()
  %r308 = arith.minui %k327, %k193 : i8
  func.call @p(%r308) : (i8) -> ()
  %r309 = arith.minui %k327, %k199 : i8
  func.call @p(%r309) : (i8) -> ()
  %r310 = arith.minui %k327, %k203 : i8
  func.call @p(%r310) : (i8) -> ()
  %r311 = arith.minui %k327, %k327 : i8
  func.call @p(%r311) : (i8) -> ()
  %r312 = arith.andi %k72, %k72 : i8
  func.call @p(%r312) : (i8) -> ()
  %r313 = arith.andi %k72, %k193 : i8
  func.call @p(%r313) : (i8) -> ()
  %r314 = arith.andi %k72, %k199 : i8
  func.call @p(%r314) : (i8) -> ()
  %r315 = arith.andi %k72, %k203 : i8
  func.call @p(%r315) : (i8) -> ()
  %r316 = arith.andi %k72, %k327 : i8
  func.call @p(%r316) : (i8) -> ()
  %r317 = arith.andi %k193, %k72 : i8
  func.call @p(%r317) : (i8) -> ()
  %r318 = arith.andi %k193, %k193 : i8
  func.call @p(%r318) : (i8) -> ()
  %r319 = arith.andi %k193, %k199 : i8
  func.call @p(%r319) : (i8) -> ()
  %r320 = arith.andi %k193, %k203 : i8
  func.call @p(%r320) : (i8) -> ()
  %r321 = arith.andi %k193, %k327 : i8
  func.call @p(%r321) : (i8) -> ()
  %r322 = arith.andi %k199, %k72 : i8
  func.call @p(%r322) : (i8) -> ()
  %r323 = arith.andi %k199, %k193 : i8
  func.call @p(%r323) : (i8) -> ()
  %r324 = arith.andi %k199, %k199 : i8
  func.call @p(%r324) : (i8) -> ()
  %r325 = arith.andi %k199, %k203 : i8
  func.call @p(%r325) : (i8) -> ()
  %r326 = arith.andi %k199, %k327 : i8
  func.call @p(%r326) : (i8) -> ()
  %r327 = arith.andi %k203, %k72 : i8
  func.call @p(%r327) : (i8) -> ()
  %r328 = arith.andi %k203, %k193 : i8
  func.call @p(%r328) : (i8) -> ()
  %r329 = arith.andi %k203, %k199 : i8
  func.call @p(%r329) : (i8) -> ()
  %r330 = arith.andi %k203, %k203 : i8
  func.call @p(%r330) : (i8) -> ()
  %r331 = arith.andi %k203, %k327 : i8
  func.call @p(%r331) : (i8) -> ()
  %r332 = arith.andi %k327, %k72 : i8
  func.call @p(%r332) : (i8) -> ()
  %r333 = arith.andi %k327, %k193 : i8
  func.call @p(%r333) : (i8) -> ()
  %r334 = arith.andi %k327, %k199 : i8
  func.call @p(%r334) : (i8) -> ()
  %r335 = arith.andi %k327, %k203 : i8
  func.call @p(%r335) : (i8) -> ()
  %r336 = arith.andi %k327, %k327 : i8
  func.call @p(%r336) : (i8) -> ()
  %r337 = arith.xori %k72, %k72 : i8
  func.call @p(%r337) : (i8) -> ()
  %r338 = arith.xori %k72, %k193 : i8
  func.call @p(%r338) : (i8) -> ()
  %r339 = arith.xori %k72, %k199 : i8
  func.call @p(%r339) : (i8) -> ()
  %r340 = arith.xori %k72, %k203 : i8
  func.call @p(%r340) : (i8) -> ()
  %r341 = arith.xori %k72, %k327 : i8
  func.call @p(%r341) : (i8) -> ()
  %r342 = arith.xori %k193, %k72 : i8
  func.call @p(%r342) : (i8) -> ()
  %r343 = arith.xori %k193, %k193 : i8
  func.call @p(%r343) : (i8) -> ()
  %r344 = arith.xori %k193, %k199 : i8
  func.call @p(%r344) : (i8) -> ()
  %r345 = arith.xori %k193, %k203 : i8
  func.call @p(%r345) : (i8) -> ()
  %r346 = arith.xori %k193, %k327 : i8
  func.call @p(%r346) : (i8) -> ()
  %r347 = arith.xori %k199, %k72 : i8
  func.call @p(%r347) : (i8) -> ()
  %r348 = arith.xori %k199, %k193 : i8
  func.call @p(%r348) : (i8) -> ()
  %r349 = arith.xori %k199, %k199 : i8
  func.call @p(%r349) : (i8) -> ()
  %r350 = arith.xori %k199, %k203 : i8
  func.call @p(%r350) : (i8) -> ()
  %r351 = arith.xori %k199, %k327 : i8
  func.call @p(%r351) : (i8) -> ()
  %r352 = arith.xori %k203, %k72 : i8
  func.call @p(%r352) : (i8) -> ()
  %r353 = arith.xori %k203, %k193 : i8
  func.call @p(%r353) : (i8) -> ()
  %r354 = arith.xori %k203, %k199 : i8
  func.call @p(%r354) : (i8) -> ()
  %r355 = arith.xori %k203, %k203 : i8
  func.call @p(%r355) : (i8) -> ()
  %r356 = arith.xori %k203, %k327 : i8
  func.call @p(%r356) : (i8) -> ()
  %r357 = arith.xori %k327, %k72 : i8
  func.call @p(%r357) : (i8) -> ()
  %r358 = arith.xori %k327, %k193 : i8
  func.call @p(%r358) : (i8) -> ()
  %r359 = arith.xori %k327, %k199 : i8
  func.call @p(%r359) : (i8) -> ()
  %r360 = arith.xori %k327, %k203 : i8
  func.call @p(%r360) : (i8) -> ()
  %r361 = arith.xori %k327, %k327 : i8
  func.call @p(%r361) : (i8) -> ()
  return
}
